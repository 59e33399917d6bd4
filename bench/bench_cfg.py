"""Context-free grammars on llama3: compile time and per-token mask time, this project vs peers.

Runs this project, llguidance and xgrammar (when installed) on the same grammars, documents and
tokenization (greedy llama3 encoding) in one process, single-threaded, and prints one table.

    python bench/bench_cfg.py [--engines constrained,llguidance,xgrammar] [--repeat 1]

Per workload and engine:
- compile: ms from grammar text to a compiled grammar (vocabulary preprocessing excluded; for
  this project the front-end's share is printed under the table);
- cold: mask times over the first documents right after compiling (MaskBench's setting);
- warm: mask times over *other* documents on the same compiled grammar afterwards (a new
  document on a grammar already in use, the common serving case);
- mean / median / p99 in microseconds, and whether every document was accepted.
The garbage collector is run before each engine's turn (collections stay enabled while timing).
Documents are stripped of leading and trailing whitespace (llguidance's Lark reader does not
allow %ignore'd text there, Lark does).
Grammars: grammars/json.lark (xgrammar: json.gbnf), grammars/arithmetic.lark (.gbnf), and
grammars/c_subset.lark with a C document of 300+ tokens (peers reading Lark only).
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peers import ENGINES  # noqa: E402
from bench.vocabularies import load_vocabulary  # noqa: E402

C_DOC = r"""
int table[16];
const int limit = 100;

int gcd(int a, int b) {
    while (b != 0) {
        int t = b;
        b = a % b;
        a = t;
    }
    return a;
}

int sum_squares(int n) {
    int total = 0;
    for (int i = 1; i <= n; i++) {
        total += i * i;
    }
    return total;
}

int classify(int x) {
    if (x < 0) {
        return -1;
    } else if (x == 0) {
        return 0;
    }
    do {
        x = x / 2;
    } while (x > limit && x % 3 != 1);
    return x >= 10 ? 2 : 1;
}

int main(void) {
    int count = 0;
    for (int k = 0; k < 16; k = k + 1) {
        table[k] = gcd(k * 7 + 3, 42) + sum_squares(k) - classify(k << 2);
        if (table[k] > 50 || (table[k] & 1) == 0) {
            count++;
        }
    }
    return count;
}
"""

C_DOC_2 = r"""
long fib(long n) {
    long a = 0;
    long b = 1;
    while (n > 0) {
        long t = a + b;
        a = b;
        b = t;
        n--;
    }
    return a;
}

int is_prime(int n) {
    if (n < 2) return 0;
    for (int d = 2; d * d <= n; d++) {
        if (n % d == 0) return 0;
    }
    return 1;
}
"""


def _docs(stem: str) -> list[str]:
    folder = ROOT / "tests" / "grammars_samples" / stem / "valid"
    return [p.read_bytes().decode("utf-8") for p in sorted(folder.glob("*"))]


def _json_docs() -> tuple[list[str], list[str]]:
    cold = [json.dumps({"name": "Alice", "age": 30, "tags": ["a", "b", {"x": 1.5e3}],
                        "nested": {"k": [1, 2, 3], "s": "hello world"}, "ok": True,
                        "none": None}, indent=2)] + _docs("json")[:3]
    warm = [json.dumps({"id": 12345, "items": [{"sku": "X-1", "qty": 2, "price": 9.99},
                                               {"sku": "Y-2", "qty": 1, "price": 19.5}],
                        "note": "deliver after 5pm", "paid": False}),
            json.dumps([{"user": f"u{i}", "score": i * 1.25, "flags": [i % 2 == 0, None]}
                        for i in range(6)], indent=1)] + _docs("json")[3:]
    return cold, warm


def _arith_docs() -> tuple[list[str], list[str]]:
    cold = ["(1 + 2) * 3.5 - -4 / (7 - 2 * (3 + 1))", "12 * (4 + 8) - 6 / 3.25 + 2"]
    warm = ["((15.5 - 3) * 2 + 7) / (1 + 1) - 3 * (2 - 8)",
            "1 + 2 + 3 + 4 + 5 * (6 - 7) / 8 - -9"] + _docs("arithmetic")
    return cold, warm


def workloads() -> list[tuple[str, dict, list[str], list[str]]]:
    g = ROOT / "grammars"
    json_src = {"lark": (g / "json.lark").read_text(), "gbnf": (g / "json.gbnf").read_text()}
    arith_src = {"lark": (g / "arithmetic.lark").read_text(),
                 "gbnf": (g / "arithmetic.gbnf").read_text()}
    c_src = {"lark": (g / "c_subset.lark").read_text()}
    return [("json", json_src, *_json_docs()),
            ("arithmetic", arith_src, *_arith_docs()),
            ("c_subset", c_src, [C_DOC], [C_DOC_2] + _docs("c_subset"))]


def _feed(engine, compiled, tokens, bitmask, times) -> bool:
    m = engine.matcher(compiled)
    for tok in tokens:
        bitmask[:] = 0
        t0 = time.perf_counter()
        engine.fill(m, bitmask)
        times.append((time.perf_counter() - t0) * 1e6)
        if not (int(bitmask[tok // 32]) >> (tok % 32)) & 1 or not engine.accept(m, tok):
            return False
    return bool(engine.is_accepting(m))


def _stats(times: list[float]) -> str:
    if not times:
        return "-"
    return (f"{statistics.fmean(times):9.0f} {statistics.median(times):8.0f} "
            f"{float(np.percentile(times, 99)):8.0f}")


def run(engine_names: list[str]) -> None:
    bv = load_vocabulary("llama3")
    engines = []
    for name in engine_names:
        try:
            engines.append(ENGINES[name](bv))
        except Exception as exc:  # a peer that is not installed is reported, not fatal
            print(f"# {name}: unavailable ({type(exc).__name__}: {exc})")
    words = (bv.vocab.size + 31) // 32
    print(f"vocabulary llama3 ({bv.vocab.size} tokens); times in microseconds per token, "
          "single thread")
    header = (f"{'workload':11} {'engine':11} {'kind':5} {'compile ms':>10} {'tokens':>7} | "
              f"{'cold mean':>9} {'median':>8} {'p99':>8} | {'warm mean':>9} {'median':>8} "
              f"{'p99':>8} | ok")
    print(header)
    print("-" * len(header))
    # vocabulary preprocessing, done once per vocabulary and process, is not compile time
    from constrained.cfg.token_tables import preorder_trie
    preorder_trie(bv.vocab)
    bv.vocab.hash
    frontends: dict[str, float] = {}
    for wname, sources, cold_docs, warm_docs in workloads():
        # leading/trailing whitespace is left out: llguidance does not take %ignore there
        cold_docs = [d.strip() for d in cold_docs]
        warm_docs = [d.strip() for d in warm_docs]
        cold_tokens = [bv.encode(d) for d in cold_docs]
        warm_tokens = [bv.encode(d) for d in warm_docs]
        for engine in engines:
            kind = next((k for k in engine.kinds if k in sources), None)
            if kind is None:
                continue
            bitmask = np.zeros(words, dtype=np.int32)
            gc.collect()    # no engine pays for the garbage of the one before
            try:
                t0 = time.perf_counter()
                if engine.name == "constrained":   # front-end and compile timed apart
                    from constrained import Grammar, compile_grammar
                    grammar = Grammar.from_lark(sources[kind]) if kind == "lark" else \
                        Grammar.from_gbnf(sources[kind])
                    t1 = time.perf_counter()
                    compiled = compile_grammar(grammar, bv.vocab)
                    frontends[wname] = (t1 - t0) * 1e3
                else:
                    compiled = engine.compile(kind, sources[kind])
                compile_ms = (time.perf_counter() - t0) * 1e3
                cold: list[float] = []
                warm: list[float] = []
                ok = all([_feed(engine, compiled, t, bitmask, cold) for t in cold_tokens])
                ok &= all([_feed(engine, compiled, t, bitmask, warm) for t in warm_tokens])
            except Exception as exc:
                print(f"{wname:11} {engine.name:11} {kind:5} error: {type(exc).__name__}: "
                      f"{str(exc)[:80]}")
                continue
            n_tok = sum(map(len, cold_tokens)) + sum(map(len, warm_tokens))
            print(f"{wname:11} {engine.name:11} {kind:5} {compile_ms:10.1f} {n_tok:7d} | "
                  f"{_stats(cold)} | {_stats(warm)} | {'yes' if ok else 'NO'}", flush=True)
    print("constrained compile ms = Lark/GBNF front-end + compile_grammar; front-end part: "
          + ", ".join(f"{k} {v:.1f}" for k, v in frontends.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="constrained,llguidance,xgrammar")
    args = parser.parse_args()
    run(args.engines.split(","))


if __name__ == "__main__":
    main()
