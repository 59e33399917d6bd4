"""The first grammar in a fresh process: compile time and first mask, after the vocabulary loads.

    python bench/bench_first_grammar.py [--vocab llama3] [--runs 5] [--engines a,b]

Each run is a new Python process per engine and grammar: it loads the vocabulary (timed
apart), imports the front-end modules (timed apart: this project imports them on first use;
the peers load theirs with the vocabulary), then compiles one grammar (a small JSON Schema, or grammars/json.lark) and computes the
first mask. This project keeps per-vocabulary tables in its disk cache, so one process runs
first to fill it (as any earlier use on the machine would); the runs then start with a warm
disk and a cold memory. Prints medians in milliseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40},
                                           "age": {"type": "integer", "minimum": 0},
                                           "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["name", "age"]}

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import numpy as np
engine_name, kind, vocab_name = sys.argv[1:4]
t0 = time.perf_counter()
from bench.vocabularies import load_vocabulary
from bench import peers
bv = load_vocabulary(vocab_name)
engine = peers.ENGINES[engine_name](bv)
if engine_name == "constrained":
    import os
    os.environ.pop("CONSTRAINED_CACHE_DIR", None)      # the user's (warm) disk cache
t1 = time.perf_counter()
if engine_name == "constrained":     # the modules a first grammar imports
    import constrained.grammar.json_schema, constrained.grammar.lark_frontend
    import constrained.cfg.compiled, constrained.cfg.matcher, constrained.cfg.distinct_strings
t_imports = time.perf_counter() - t1
t1 = time.perf_counter()
source = json.loads({schema!r}) if kind == "json_schema" else open({lark!r}).read()
compiled = engine.compile(kind, source)
t2 = time.perf_counter()
m = engine.matcher(compiled)
bitmask = np.zeros((bv.vocab.size + 31) // 32, dtype=np.int32)
engine.fill(m, bitmask)
t3 = time.perf_counter()
print(json.dumps({{"load": t1 - t0, "imports": t_imports, "compile": t2 - t1,
                  "first_mask": t3 - t2}}))
"""


def _run(engine: str, kind: str, vocab: str) -> dict | None:
    code = _CHILD.format(root=ROOT, schema=json.dumps(SCHEMA),
                         lark=os.path.join(ROOT, "grammars", "json.lark"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)      # imports read compiled bytecode, as usual
    p = subprocess.run([sys.executable, "-c", code, engine, kind, vocab], capture_output=True,
                       text=True, timeout=600, cwd=ROOT, env=env)
    if p.returncode != 0:
        print(f"{engine} {kind}: failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--engines", default="constrained,llguidance,xgrammar")
    args = parser.parse_args(argv)
    print(f"vocabulary {args.vocab}; medians of {args.runs} fresh processes (ms)")
    print("| engine | grammar | front-end imports | compile | first mask | compile + first mask |")
    print("|---|---|---|---|---|---|")
    for engine in args.engines.split(","):
        for kind in ("json_schema", "lark"):
            if engine == "xgrammar" and kind == "lark":
                continue      # xgrammar reads GBNF-style EBNF, not Lark
            _run(engine, kind, args.vocab)              # fills disk caches
            runs = [r for r in (_run(engine, kind, args.vocab) for _ in range(args.runs)) if r]
            if not runs:
                continue
            med = {k: statistics.median(r[k] for r in runs) * 1e3 for k in runs[0]}
            print(f"| {engine} | {kind} | {med['imports']:.1f} | {med['compile']:.1f} | "
                  f"{med['first_mask']:.1f} | {med['compile'] + med['first_mask']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
