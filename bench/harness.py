"""Run one workload on this project and its peers in one process; print one table.

For every engine: compile time (cold, no cache), then every document token by token, timing the
mask at every step and checking the document's next token is allowed. The documents are fed
twice: the first pass right after compiling ("cold", as MaskBench measures), the second on the
same compiled grammar ("warm", the common case in serving).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from .peers import ENGINES, Engine
from .vocabularies import BenchVocabulary
from .workloads import Workload


@dataclass
class EngineResult:
    engine: str
    kind: str = ""
    compile_ms: float = float("nan")
    cold_us: list[float] = field(default_factory=list)
    warm_us: list[float] = field(default_factory=list)
    rejected: int = 0
    not_accepting: int = 0
    error: str = ""


def _allowed(bitmask: np.ndarray, token: int) -> bool:
    return bool((int(bitmask[token // 32]) >> (token % 32)) & 1)


def _feed(engine: Engine, compiled, tokens: list[int], bitmask: np.ndarray,
          times: list[float], result: EngineResult) -> None:
    matcher = engine.matcher(compiled)
    for tok in tokens:
        bitmask[:] = 0
        t0 = time.perf_counter()
        engine.fill(matcher, bitmask)
        times.append((time.perf_counter() - t0) * 1e6)
        if not _allowed(bitmask, tok) or not engine.accept(matcher, tok):
            result.rejected += 1
            return
    if not engine.is_accepting(matcher):
        result.not_accepting += 1


def run_engine(engine: Engine, workload: Workload) -> EngineResult:
    """Compile and feed every document twice (cold, then warm) on one engine."""
    result = EngineResult(engine.name)
    kind = next((k for k in engine.kinds if k in workload.sources), None)
    if kind is None:
        result.error = "no grammar kind it reads"
        return result
    result.kind = kind
    try:
        t0 = time.perf_counter()
        compiled = engine.compile(kind, workload.sources[kind])
        result.compile_ms = (time.perf_counter() - t0) * 1e3
    except Exception as exc:  # a peer refusing a grammar is a result, not a crash
        result.error = f"compile failed: {type(exc).__name__}: {str(exc)[:80]}"
        return result
    bitmask = np.zeros((engine.bv.vocab.size + 31) // 32, dtype=np.int32)
    docs = [engine.bv.encode(d) for d in workload.documents]
    for times in (result.cold_us, result.warm_us):
        for tokens in docs:
            _feed(engine, compiled, tokens, bitmask, times, result)
    return result


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    if not values:
        return (float("nan"),) * 4
    arr = np.asarray(values)
    return (float(arr.mean()), float(np.median(arr)), float(np.percentile(arr, 90)),
            float(np.percentile(arr, 99)))


def format_table(workload: Workload, vocab_name: str, results: list[EngineResult]) -> str:
    """One table: compile ms, cold and warm mask us (mean/median/p90/p99), ratios to us."""
    lines = [f"workload {workload.name} on {vocab_name}: {len(workload.documents)} documents",
             "| engine | kind | compile ms | cold mean | cold p50 | cold p99 | warm mean | "
             "warm p50 | warm p90 | warm p99 | warm mean / ours | errors |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    ours = next((r for r in results if r.engine == "constrained"), None)
    base = _stats(ours.warm_us)[0] if ours and ours.warm_us else float("nan")
    for r in results:
        cold, warm = _stats(r.cold_us), _stats(r.warm_us)
        errors = r.error or (f"{r.rejected} rejected, {r.not_accepting} not accepting"
                             if r.rejected or r.not_accepting else "")
        ratio = warm[0] / base if base == base and warm[0] == warm[0] else float("nan")
        lines.append(f"| {r.engine} | {r.kind} | {r.compile_ms:.1f} | {cold[0]:.1f} | "
                     f"{cold[1]:.1f} | {cold[3]:.1f} | {warm[0]:.1f} | {warm[1]:.1f} | "
                     f"{warm[2]:.1f} | {warm[3]:.1f} | {ratio:.2f} | {errors} |")
    return "\n".join(lines)


def run_workload(workload: Workload, bv: BenchVocabulary, vocab_name: str,
                 engine_names: list[str]) -> str:
    """Every requested engine on one workload; the printed table."""
    results = []
    for name in engine_names:
        try:
            engine = ENGINES[name](bv)
        except ImportError as exc:
            results.append(EngineResult(name, error=f"not installed ({exc.name})"))
            continue
        results.append(run_engine(engine, workload))
    return format_table(workload, vocab_name, results)


def median(values: list[float]) -> float:
    """Median, NaN for no values."""
    return statistics.median(values) if values else float("nan")
