"""How often the completion plan is proven shortest in tokens, on MaskBench schemas.

    python bench/bench_shortest.py [--data DIR] [--schemas N] [--states K] [--seed S]
                                   [--from-start | --along-plan]

For N schemas (a seeded sample, compiled for SmolLM2's vocabulary, as in bench_budget.py) the
runner takes the planner's plan (the byte-shortest completion cut into the fewest tokens, an
upper bound) and asks the exact token-level search (constrained.decoding.shortest, at most K
expanded states) for a completion one token shorter. Each state ends as "proven shortest"
(none exists), "shorter found" (the plan was not shortest; the search's answer is checked by
replaying it) or "unknown" (the search stopped at K states). ``--along-plan`` asks at every
state along the plan instead of only at the start. Prints the counts and the search times.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "maskbench-dev"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--schemas", type=int, default=50)
    parser.add_argument("--states", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--along-plan", action="store_true")
    parser.add_argument("--max-plan", type=int, default=120)
    args = parser.parse_args(argv)

    from constrained import Grammar, Vocabulary
    from constrained.compiler import compile_grammar
    from constrained.decoding.budget import CompletionPlanner
    from constrained.decoding.byte_tokens import ByteTokenizer
    from constrained.decoding.shortest import ShortestCompletion
    from constrained.errors import ConstrainedError
    from constrained.model.loading import load_tokenizer

    vocab = Vocabulary.from_hf(load_tokenizer("smollm2"))
    planner = CompletionPlanner(ByteTokenizer.of(vocab))
    files = sorted(Path(args.data).glob("*.json"))
    random.Random(args.seed).shuffle(files)
    counts = {"proven shortest": 0, "shorter found": 0, "unknown": 0}
    times: list[float] = []
    used = 0
    for path in files:
        if used >= args.schemas:
            break
        try:
            cg = compile_grammar(Grammar.from_json_schema(json.loads(path.read_text())["schema"]),
                                 vocab)
        except ConstrainedError:
            continue
        m = cg.matcher()
        plan = planner.plan(m)
        if not plan or len(plan) > args.max_plan:
            continue
        used += 1
        search = ShortestCompletion(vocab)
        steps = range(len(plan)) if args.along_plan else range(1)
        for i in steps:
            rest = plan[i:]
            t0 = time.perf_counter()
            got = search.distance(m, len(rest) - 1, max_states=args.states)
            times.append(time.perf_counter() - t0)
            if got.tokens is not None:
                counts["shorter found"] += 1
                ok = all(m.accept_token(t) for t in got.tokens) and m.is_accepting()
                m.rollback(len(got.tokens))
                print(f"{path.stem}: {len(rest)} -> {len(got.tokens)} tokens "
                      f"{vocab.decode(got.tokens)!r}{'' if ok else ' (does not replay!)'}")
            elif got.exceeds:
                counts["proven shortest"] += 1
            else:
                counts["unknown"] += 1
            m.accept_token(plan[i])
    n = sum(counts.values())
    print(f"schemas {used}, states {n} ({'along the plan' if args.along_plan else 'starts'}), "
          f"search bound {args.states} states")
    for k, v in counts.items():
        print(f"  {k}: {v} ({v / max(1, n):.0%})")
    if times:
        print(f"  search time: median {statistics.median(times) * 1e3:.1f} ms, "
              f"max {max(times) * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
