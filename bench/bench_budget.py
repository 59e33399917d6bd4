"""Completion within a token budget on MaskBench schemas, with the embedded SmolLM2.

    python bench/bench_budget.py [--data DIR] [--schemas N] [--slack 0,1,2,5,10,20 | 0-20]
                                 [--seed S] [--runtime transformers|llama.cpp]

For N schemas (a seeded sample of the data folder, compiled for SmolLM2's vocabulary) the
runner finds the shortest completion from the start (the planner's plan, in tokens, plus the
end-of-sequence token) and generates with ``complete_within_budget=True`` and
``max_new_tokens`` = shortest + each slack, defaults otherwise (temperature sampling, forced
tokens). Reported: how many runs finish ("stop") within the budget and validate with jsonschema,
budgets refused before decoding (BudgetError), and the cost of steering per generated token
beside the forward pass (sampling-side time of budget runs minus the same runs without a
budget, over forward time).
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "maskbench-dev"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--schemas", type=int, default=50)
    parser.add_argument("--slack", default="0,1,2,5,10,20",
                        help="extra tokens over the shortest completion: a list or a range a-b")
    parser.add_argument("--runtime", default="transformers", choices=("transformers", "llama.cpp"))
    parser.add_argument("--cli", type=int, default=0, metavar="N",
                        help="also run the first N (schema, budget) pairs through the command "
                             "line (python -m constrained generate --complete-within-budget)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-plan", type=int, default=120,
                        help="skip schemas whose shortest completion is longer")
    args = parser.parse_args()

    import jsonschema
    import torch
    from constrained import Grammar, Vocabulary, generate
    from constrained.compiler import compile_grammar
    from constrained.decoding.budget import CompletionPlanner
    from constrained.decoding.byte_tokens import ByteTokenizer
    from constrained.errors import BudgetError, ConstrainedError
    from constrained.model import load_model

    torch.set_num_threads(1)
    if args.runtime == "llama.cpp":
        model, tok = load_model("smollm2", runtime="llama.cpp", max_rows=1, n_threads=1)
        width = model.n_vocab
    else:
        model, tok = load_model("smollm2")
        width = model.get_output_embeddings().weight.shape[0]
    vocab = Vocabulary.from_hf(tok, vocab_size=width)
    planner = CompletionPlanner(ByteTokenizer.of(vocab))
    files = sorted(Path(args.data).glob("*.json"))
    random.Random(args.seed).shuffle(files)
    if "-" in args.slack:
        low, high = (int(x) for x in args.slack.split("-"))
        slacks = list(range(low, high + 1))
    else:
        slacks = [int(s) for s in args.slack.split(",")]
    runs = ok = refused = 0
    cli_runs = cli_ok = 0
    failures: list[str] = []
    steer, forward = [], []
    used = 0
    for path in files:
        if used >= args.schemas:
            break
        schema = json.loads(path.read_text())["schema"]
        try:
            cg = compile_grammar(Grammar.from_json_schema(schema), vocab)
        except ConstrainedError:
            continue
        plan = planner.plan(cg.matcher())
        if plan is None or len(plan) > args.max_plan:
            continue
        used += 1
        shortest = len(plan) + 1
        prompt = "Write one JSON document for this schema: " + json.dumps(schema)[:400]
        base = None
        for slack in slacks:
            runs += 1
            try:
                r = generate(model, tok, prompt, chat=True, grammar=cg,
                             max_new_tokens=shortest + slack, seed=slack,
                             complete_within_budget=True)
            except BudgetError as exc:
                refused += 1
                failures.append(f"{path.stem} +{slack}: refused: {exc}")
                continue
            try:
                jsonschema.validate(json.loads(r.text), schema)
                good = r.finish_reason == "stop"
            except (ValueError, jsonschema.ValidationError):
                good = False
            ok += good
            if not good:
                failures.append(f"{path.stem} +{slack}: {r.finish_reason} {r.text[:80]!r}")
            if cli_runs < args.cli:
                cli_runs += 1
                cli_ok += _cli_run(path, schema, prompt, shortest + slack, slack, args.runtime,
                                   jsonschema)
            if slack == slacks[-1]:
                base = generate(model, tok, prompt, chat=True, grammar=cg,
                                max_new_tokens=shortest + slack, seed=slack)
                t_budget = r.timings
                n = max(1, len(t_budget.steps))
                sample_b = sum(s.sample for s in t_budget.steps) / n
                sample_0 = sum(s.sample for s in base.timings.steps) / max(1, len(base.timings.steps))
                steer.append(max(0.0, sample_b - sample_0))
                forward.append(sum(s.forward for s in t_budget.steps) / n)
        extra = f", steering {steer[-1] * 1e3:.1f} ms/token" if steer and used == len(steer) else ""
        print(f"{path.stem}: shortest {shortest}{extra}", flush=True)
    print()
    print(f"schemas {used}, runs {runs}: valid and stopped within the budget {ok}, "
          f"refused before decoding {refused}, other {runs - ok - refused}")
    if cli_runs:
        print(f"command line: {cli_ok}/{cli_runs} valid and stopped within the budget")
    if steer:
        ratio = statistics.mean(steer) / statistics.mean(forward)
        print(f"steering per token {statistics.mean(steer) * 1e3:.2f} ms, forward pass "
              f"{statistics.mean(forward) * 1e3:.2f} ms: {ratio:.1%} of the forward pass")
    for line in failures[:20]:
        print("  ", line)


def _cli_run(path: Path, schema, prompt: str, budget: int, seed: int, runtime: str,
             jsonschema) -> bool:
    """One run through `python -m constrained generate --complete-within-budget`."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(schema, f)
    proc = subprocess.run([sys.executable, "-m", "constrained", "generate", "--schema", f.name,
                           "--prompt", prompt, "--max-new-tokens", str(budget), "--seed",
                           str(seed), "--complete-within-budget", "--runtime", runtime],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    Path(f.name).unlink()
    try:
        jsonschema.validate(json.loads(proc.stdout), schema)
        return proc.returncode == 0
    except (ValueError, jsonschema.ValidationError):
        print(f"  command line, {path.stem} budget {budget}: {proc.stdout[:80]!r} "
              f"{proc.stderr[-200:]!r}")
        return False


if __name__ == "__main__":
    main()
