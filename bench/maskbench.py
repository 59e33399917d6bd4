"""MaskBench runner: JSON Schema compile and per-token masks, this project beside llguidance.

    python bench/maskbench.py [--data DIR] [--limit N] [--timeout S] [--engines a,b] [--repeat N]
                              [--max-minutes M]

For every schema file (default ../shared/data/maskbench-dev from the repository root) each
engine compiles the schema for the llama3 vocabulary; for each test instance the runner
serializes it with json.dumps (default separators), tokenizes it, and for every token computes
the mask (timed), checks the token is allowed and commits it. Per schema and engine:
"passing" when every instance behaves, "compile error" when the engine refuses the schema (or
exceeds --timeout), "validation error" when a valid instance is rejected or not accepting at its
end, "invalidation error" when an invalid instance is fully accepted and accepting. Mask times
are cold (the first documents right after compiling), single-threaded, in microseconds. Each
engine first compiles one small untimed schema: the per-vocabulary work of a process start
(bench/bench_first_grammar.py measures that) is not counted as the first schema's compile.
Every engine runs in a worker process of its own (bench/engine_process.py), one schema at a
time: a schema stuck in an engine's native code past --timeout is killed there and counted as
a timeout, and so is a crash (as an untyped failure), and the run goes on. Past
--max-minutes, or on Ctrl-C or SIGTERM, no new schema starts: the schema under way finishes
in every engine and the tables cover the schemas done.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "maskbench-dev"

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

from bench.peers import ENGINES  # noqa: E402
from bench.vocabularies import load_vocabulary  # noqa: E402
from bench.engine_process import EngineProcess  # noqa: E402
from bench.time_limit import TimeLimitExceeded, time_limit  # noqa: E402
from constrained.errors import ConstrainedError  # noqa: E402


def failure_kind(e: Exception) -> str:
    """"typed" for this engine's own errors, "untyped" for anything else (a crash)."""
    return "typed" if isinstance(e, ConstrainedError) else "untyped"


def _allowed(bitmask: np.ndarray, token: int) -> bool:
    return bool((int(bitmask[token >> 5]) >> (token & 31)) & 1)


def run_schema(engine, bv, doc: dict, timeout: float) -> dict:
    """Compile one schema and feed its instances token by token; returns status and times."""
    out = {"mask_us": [], "compile_ms": None, "status": "passing", "detail": "", "failure": ""}
    bitmask = np.zeros((bv.vocab.size + 31) // 32, dtype=np.int32)
    try:
        with time_limit(timeout):
            _run(engine, bv, doc, out, bitmask)
    except TimeLimitExceeded:
        out.update(status="compile error", detail=f"timeout after {timeout}s", failure="timeout")
    return out


def _run(engine, bv, doc: dict, out: dict, bitmask: np.ndarray) -> None:
    """Compile, then feed every instance, recording into ``out``."""
    t0 = time.perf_counter()
    try:
        compiled = engine.compile("json_schema", doc["schema"])
    except TimeLimitExceeded:
        raise
    except Exception as e:  # noqa: BLE001 - any refusal is a compile error
        out.update(status="compile error", detail=f"{type(e).__name__}: {e}"[:300],
                   failure=failure_kind(e))
        return
    out["compile_ms"] = (time.perf_counter() - t0) * 1000
    for test in doc["tests"]:
        tokens = bv.encode(json.dumps(test["data"]))
        m = engine.matcher(compiled)
        ok = True
        for tok in tokens:
            t = time.perf_counter()
            try:
                engine.fill(m, bitmask)
            except TimeLimitExceeded:
                raise
            except Exception as e:  # noqa: BLE001 - recorded: a crash unless typed
                out["failure"] = failure_kind(e)
                out["detail"] = f"mask: {type(e).__name__}: {e}"[:300]
                ok = False
                break
            out["mask_us"].append((time.perf_counter() - t) * 1e6)
            if not _allowed(bitmask, tok) or not engine.accept(m, tok):
                ok = False
                break
        accepted = ok and engine.is_accepting(m)
        if test["valid"] and not accepted:
            if out["status"] == "passing":
                out.update(status="validation error",
                           detail=json.dumps(test["data"])[:200])
        elif not test["valid"] and accepted:
            out.update(status="invalidation error", detail=json.dumps(test["data"])[:200])


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values), q))


def summary(results: dict[str, list[dict]]) -> str:
    """The table, in the shape of the published MaskBench results."""
    head = ("| engine | passing | compile err | validation err | invalidation err | mask avg us "
            "| mask p50 | mask p99 | compile p50 ms | compile p99 ms |")
    lines = [head, "|" + "---|" * 10]
    for name, rows in results.items():
        c = Counter(r["status"] for r in rows)
        masks = [x for r in rows for x in r["mask_us"]]
        comp = [r["compile_ms"] for r in rows if r["compile_ms"] is not None]
        avg = statistics.fmean(masks) if masks else float("nan")
        lines.append(f"| {name} | {c['passing']} | {c['compile error']} | "
                     f"{c['validation error']} | {c['invalidation error']} | {avg:.0f} | "
                     f"{_pct(masks, 50):.0f} | {_pct(masks, 99):.0f} | {_pct(comp, 50):.1f} | "
                     f"{_pct(comp, 99):.1f} |")
    for name, rows in results.items():
        f = Counter(r.get("failure", "") for r in rows)
        lines.append(f"{name}: typed refusals or errors {f['typed']}, untyped exceptions "
                     f"{f['untyped']}, timeouts {f['timeout']}")
    return "\n".join(lines + common_summary(results))


def common_summary(results: dict[str, list[dict]]) -> list[str]:
    """The same figures over the schemas every engine passes (so ratios compare like with
    like), with time to first mask: compile plus the first document's first mask."""
    if len(results) < 2:
        return []
    passing = [{r["file"] for r in rows if r["status"] == "passing"} for rows in results.values()]
    common = set.intersection(*passing)
    lines = ["", f"Schemas every engine passes: {len(common)}",
             "| engine | mask avg us | mask p99 | compile p50 ms | compile p99 ms "
             "| compile + first mask p50 ms | compile + first mask p99 ms |", "|" + "---|" * 7]
    for name, rows in results.items():
        rows = [r for r in rows if r["file"] in common]
        masks = [x for r in rows for x in r["mask_us"]]
        comp = [r["compile_ms"] for r in rows]
        first = [r["compile_ms"] + r["mask_us"][0] / 1000 for r in rows if r["mask_us"]]
        avg = statistics.fmean(masks) if masks else float("nan")
        lines.append(f"| {name} | {avg:.0f} | {_pct(masks, 99):.0f} | {_pct(comp, 50):.2f} | "
                     f"{_pct(comp, 99):.1f} | {_pct(first, 50):.2f} | {_pct(first, 99):.1f} |")
    return lines


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB (Linux)."""
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        current = pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        current = float("nan")
    return current, peak


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--limit", type=int, default=None, help="first N files (sorted)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per schema")
    parser.add_argument("--engines", default="constrained,llguidance")
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--shard", default=None, help="K/N: only files K, K+N, ... (0-based)")
    parser.add_argument("--details", default=None, help="write per-schema results (JSON)")
    parser.add_argument("--names", default=None, help="comma-separated file names to run")
    parser.add_argument("--merge", nargs="+", default=None,
                        help="print the table of --details files from shards instead of running "
                             "(a later file's result for the same schema replaces an earlier one)")
    parser.add_argument("--schema-options", default=None, metavar="JSON",
                        help="this project's JSON Schema options, e.g. '{\"property_order\": "
                             "\"any\"}'")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run every schema this many times in one process, reporting the "
                             "resident memory after each pass (the table is the first pass)")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="a limit for the whole run: past it (or on Ctrl-C / SIGTERM) no "
                             "new schema starts and the table covers the schemas done")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.merge:
        by_file: dict[str, dict[str, dict]] = {}
        for f in args.merge:
            for name, rows in json.loads(Path(f).read_text()).items():
                for row in rows:
                    by_file.setdefault(name, {})[row["file"]] = row
        merged = {name: list(rows.values()) for name, rows in by_file.items()}
        n = len(next(iter(merged.values()), []))
        print(f"MaskBench: {n} schemas merged from {len(args.merge)} shard(s)")
        print(summary(merged))
        return
    files = sorted(Path(args.data).glob("*.json"))[:args.limit]
    if args.names:
        wanted = set(args.names.split(","))
        files = [f for f in files if f.name in wanted]
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        files = files[k::n]
    bv = load_vocabulary(args.vocab)
    options = json.loads(args.schema_options) if args.schema_options else None
    engines = {}
    for name in args.engines.split(","):
        try:
            engines[name] = _engine_process(name, bv, options, args.timeout)
        except ImportError as e:
            print(f"{name}: not installed ({e})", file=sys.stderr)
    results: dict[str, list[dict]] = {}
    memory = []
    stop = _RunLimit(args.max_minutes)
    try:
        for rep in range(max(1, args.repeat)):
            passed = _run_files(files, engines, bv, args, stop)
            results = results or passed
            memory.append({name: e.rss() for name, e in engines.items()})
            if stop.why:
                break
    finally:
        stop.close()
        for e in engines.values():
            e.close()
    done = len(next(iter(results.values()), []))
    print(f"MaskBench: {len(files)} schemas from {args.data}, vocabulary {args.vocab} "
          f"({bv.vocab.size} tokens), single thread"
          + (f"; this project's schema options {args.schema_options}" if args.schema_options
             else ""))
    if stop.why:
        print(f"Stopped after {done} of {len(files)} schemas ({stop.why}): the tables cover "
              f"those (every engine ran each of them)")
    print(summary(results))
    for name in engines:
        print(f"\n{name}: resident memory of its process after each pass (MB, current / peak): "
              + ", ".join(f"{m[name][0]:.0f} / {m[name][1]:.0f}" for m in memory)
              + (f"; restarted {engines[name].killed} time(s) after a hard timeout or crash"
                 if engines[name].killed else ""))
    if args.details:
        Path(args.details).write_text(json.dumps(results))


# two members, so per-vocabulary tables of object keys are built here too
_WARMUP = {"schema": {"type": "object", "properties": {"x": {"type": "integer"},
                                                       "y": {"type": "string"}}},
           "tests": [{"valid": True, "data": {"y": "a", "x": 1}}]}


def _engine_process(name: str, bv, options: dict | None, timeout: float) -> EngineProcess:
    """Engine ``name`` in a worker process of its own (bench/engine_process.py), warmed up:
    per-vocabulary work (token tries, slices; llguidance does its share when the tokenizer
    is built) is not any schema's compile time, so one untimed schema runs first."""
    def make():
        engine = ENGINES[name](bv)
        if options is not None and name == "constrained":
            engine.schema_options = options
        return engine

    def killed(reason: str) -> dict:
        crashed = reason.startswith("the worker died")
        return {"mask_us": [], "compile_ms": None, "status": "compile error",
                "detail": f"{'crash' if crashed else 'timeout'}: {reason}",
                "failure": "untyped" if crashed else "timeout"}
    return EngineProcess(make, lambda engine, doc, limit: run_schema(engine, bv, doc, limit),
                         timeout, _rss_mb, warmup=_WARMUP, on_kill=killed)


class _RunLimit:
    """When a run stops starting schemas: past ``minutes`` (None: never), or once SIGINT or
    SIGTERM arrives (the schema under way finishes in every engine first, bounded by each
    schema's own time limit). ``why`` says which, or is empty."""

    def __init__(self, minutes: float | None) -> None:
        self.deadline = None if minutes is None else time.monotonic() + 60 * minutes
        self.minutes = minutes
        self.why = ""
        self._old = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._signalled)
            except ValueError:      # (not the main thread: no handlers there)
                pass

    def _signalled(self, signum, frame) -> None:
        self.why = f"{signal.Signals(signum).name} received"

    def reached(self) -> bool:
        if not self.why and self.deadline is not None and time.monotonic() > self.deadline:
            self.why = f"--max-minutes {self.minutes:g} reached"
        return bool(self.why)

    def close(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _run_files(files: list[Path], engines: dict, bv, args,
               stop: _RunLimit | None = None) -> dict[str, list[dict]]:
    """One pass over the schema files with every engine (until ``stop`` is reached)."""
    results: dict[str, list[dict]] = {name: [] for name in engines}
    for i, path in enumerate(files):
        if stop is not None and stop.reached():
            break
        doc = json.loads(path.read_text())
        for name, engine in engines.items():
            r = engine.run(doc)
            r["file"] = path.name
            results[name].append(r)
            if args.verbose and r["status"] != "passing":
                print(f"[{i + 1}/{len(files)}] {name} {path.name}: {r['status']} {r['detail']}",
                      file=sys.stderr, flush=True)
        if args.verbose and (i + 1) % 25 == 0:
            print(f"-- {i + 1}/{len(files)} files", file=sys.stderr, flush=True)
    return results


if __name__ == "__main__":
    main()
