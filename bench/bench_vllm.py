"""vLLM's CPU build as a host: ms per generated token for the same batch of requests with this
project's logits processor, with vLLM's own structured outputs (xgrammar), and unconstrained.

    python bench/bench_vllm.py [--requests 8] [--max-tokens 200] [--python .venv-vllm/bin/python]

vLLM runs in its own environment (``make test-integrations`` builds it); this script starts it
on SmolLM2's converted folder and validates the outputs with jsonschema.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--python", default=str(ROOT / ".venv-vllm" / "bin" / "python"))
    args = parser.parse_args()
    import jsonschema

    from constrained.model import hf_folder
    schema = json.loads((ROOT / "grammars" / "person.schema.json").read_text())
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1")
    proc = subprocess.run([args.python, str(ROOT / "bench" / "vllm_runner.py"),
                           str(hf_folder("smollm2")), json.dumps(schema), str(args.requests),
                           str(args.max_tokens)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=1800)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"mode"')]
    if proc.returncode != 0 or not rows:
        sys.exit(proc.stderr[-3000:])
    print(f"machine: {platform.processor() or platform.machine()}, vLLM CPU build, SmolLM2-135M, "
          f"{args.requests} requests in one batch, greedy, max {args.max_tokens} tokens")
    print(f"{'mode':<14} {'seconds':>8} {'tokens':>7} {'ms/token':>9} {'valid':>6}")
    for r in rows:
        total = sum(r["tokens"])
        valid = 0
        for text in r["texts"]:
            try:
                jsonschema.validate(json.loads(text), schema)
                valid += 1
            except Exception:  # noqa: BLE001 - counted
                pass
        print(f"{r['mode']:<14} {r['seconds']:>8.2f} {total:>7} "
              f"{r['seconds'] * 1e3 / max(1, total):>9.2f} {valid:>3}/{len(r['texts'])}")


if __name__ == "__main__":
    main()
