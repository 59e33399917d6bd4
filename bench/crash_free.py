"""Crash-free run: every MaskBench schema and every JSON Schema Test Suite schema, limits on.

    python -m bench.crash_free [--vocab llama3] [--timeout 30]

Each schema is converted, compiled for the vocabulary and asked for its first mask. The outcome
is one of: compiled (a mask came back), refused (one of the engine's typed errors, naming the
place), crash (any other exception), hang (no answer within --timeout seconds). The peak memory
of the process is reported with the counts, and the wall time of each phase (convert, compile,
first mask) with its worst case. A second table times, per phase, a chain of 10,000
rules in Lark and GBNF and the refusal of a flat grammar of 100,000 rules.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / ".." / "shared" / "data"

from bench.time_limit import TimeLimitExceeded, time_limit  # noqa: E402
from constrained import ConstrainedError, Grammar, Vocabulary, compile_grammar  # noqa: E402


@dataclass
class CrashFreeReport:
    """Outcome counts by source, and the failures worth reading."""

    counts: dict[str, Counter] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (source, id, detail)
    peak_rss_mb: float = 0.0
    # phase -> [(seconds, source, id)] of the schemas that reached the phase
    phases: dict[str, list[tuple[float, str, str]]] = field(default_factory=dict)

    def table(self) -> str:
        lines = ["| schemas | compiled | refused (typed) | crash | hang |", "|---|---|---|---|---|"]
        for source, c in self.counts.items():
            lines.append(f"| {source} ({sum(c.values())}) | {c['compiled']} | {c['refused']} | "
                         f"{c['crash']} | {c['hang']} |")
        lines.append(f"peak memory of the process: {self.peak_rss_mb:.0f} MB")
        lines += ["", "| phase (all sources) | schemas | p50 ms | p99 ms | max ms | slowest |",
                  "|---|---|---|---|---|---|"]
        for phase, rows in self.phases.items():
            if not rows:
                continue
            secs = np.array([r[0] for r in rows]) * 1e3
            worst = max(rows)
            lines.append(f"| {phase} | {len(rows)} | {np.percentile(secs, 50):.2f} | "
                         f"{np.percentile(secs, 99):.1f} | {secs.max():.1f} | "
                         f"{worst[1]} {worst[2]} |")
        return "\n".join(lines)


def schemas() -> list[tuple[str, str, object]]:
    """(source, id, schema) for every MaskBench file and every test-suite case."""
    out = []
    for path in sorted((DATA / "maskbench-dev").glob("*.json")):
        out.append(("maskbench-dev", path.name, json.loads(path.read_text())["schema"]))
    suite = DATA / "json-schema-test-suite"
    for path in sorted(suite.glob("*.json")) + sorted((suite / "optional-format").glob("*.json")):
        for i, case in enumerate(json.loads(path.read_text())):
            out.append(("json-schema-test-suite", f"{path.name}#{i}", case["schema"]))
    return out


def run(vocab: Vocabulary, items, timeout: float = 30.0) -> CrashFreeReport:
    """Convert, compile and take the first mask of each schema; count the outcomes."""
    report = CrashFreeReport()
    bitmask = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    for phase in ("convert", "compile", "first mask", "all (incl. refusals)"):
        report.phases[phase] = []
    for source, name, schema in items:
        counts = report.counts.setdefault(source, Counter())
        start = time.perf_counter()
        try:
            with time_limit(timeout):
                t = time.perf_counter()
                grammar = Grammar.from_json_schema(schema)
                report.phases["convert"].append((time.perf_counter() - t, source, name))
                t = time.perf_counter()
                compiled = compile_grammar(grammar, vocab)
                report.phases["compile"].append((time.perf_counter() - t, source, name))
                t = time.perf_counter()
                compiled.matcher().fill_next_token_bitmask(bitmask)
                report.phases["first mask"].append((time.perf_counter() - t, source, name))
            outcome = "compiled"
        except TimeLimitExceeded:
            outcome, detail = "hang", f"no answer in {timeout} s"
        except ConstrainedError:
            outcome = "refused"
        except Exception as e:  # noqa: BLE001 - exactly what this run looks for
            outcome, detail = "crash", f"{type(e).__name__}: {e}"[:300]
        report.phases["all (incl. refusals)"].append((time.perf_counter() - start, source, name))
        counts[outcome] += 1
        if outcome in ("crash", "hang"):
            report.failures.append((source, name, detail))
    report.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def _chain(n: int, fmt: str) -> str:
    if fmt == "lark":
        return ("start: r0\n" + "".join(f"r{i}: r{i + 1}\n" for i in range(n - 1))
                + f'r{n - 1}: "x"\n')
    return ("root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(n - 1))
            + f'r{n - 1} ::= "x"\n')


def _flat(n: int, fmt: str) -> str:
    start, arrow = ("start", ":") if fmt == "lark" else ("root", " ::=")
    return (f"{start}{arrow} " + " | ".join(f"r{i}" for i in range(n)) + "\n"
            + "".join(f'r{i}{arrow} "a{i}"\n' for i in range(n)))


def grammar_timings(vocab: Vocabulary) -> str:
    """Seconds per phase (front-end, compile, first mask) of large grammar texts: a chain of
    10,000 rules compiles and a flat grammar of 100,000 rules is refused, both near-linearly."""
    lines = ["| grammar | bytes | front-end s | compile s | first mask s | outcome |",
             "|---|---|---|---|---|---|"]
    bitmask = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    for label, make in (("chain of 10,000 rules", lambda f: _chain(10_000, f)),
                        ("flat, 100,000 rules", lambda f: _flat(100_000, f))):
        for fmt in ("lark", "gbnf"):
            text = make(fmt)
            times, outcome = [], "compiled"
            try:
                t = time.perf_counter()
                g = Grammar.from_lark(text) if fmt == "lark" else Grammar.from_gbnf(text)
                times.append(time.perf_counter() - t)
                compiled = compile_grammar(g, vocab)
                times.append(time.perf_counter() - t - sum(times))
                compiled.matcher().fill_next_token_bitmask(bitmask)
                times.append(time.perf_counter() - t - sum(times))
            except ConstrainedError as e:
                times.append(time.perf_counter() - t - sum(times))
                outcome = f"refused ({type(e).__name__})"
            cells = [f"{x:.2f}" for x in times] + ["-"] * (3 - len(times))
            lines.append(f"| {label}, {fmt} | {len(text.encode())} | {' | '.join(cells)} | "
                         f"{outcome} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    from bench.vocabularies import load_vocabulary
    vocab = load_vocabulary(args.vocab).vocab
    report = run(vocab, schemas(), args.timeout)
    print(f"crash-free run, vocabulary {args.vocab}, default limits, {args.timeout:.0f} s per "
          "schema")
    print(report.table())
    for source, name, detail in report.failures:
        print(f"  {source} {name}: {detail}")
    print()
    print(grammar_timings(vocab))


if __name__ == "__main__":
    main()
