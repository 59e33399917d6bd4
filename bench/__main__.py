"""python -m bench [--vocab llama3] [--engines a,b] [WORKLOAD ...]: one table per workload."""
from __future__ import annotations

import argparse
import platform

from .harness import run_workload
from .peers import ENGINES
from .vocabularies import load_vocabulary
from .workloads import load_workload, workload_names

DEFAULT_WORKLOADS = ["email", "iso-datetime", "json-ish", "json", "arithmetic"]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("workloads", nargs="*", help=f"known: {', '.join(workload_names())}")
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    bv = load_vocabulary(args.vocab)
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}, vocabulary {args.vocab} ({len(bv.vocab)} tokens)")
    for name in args.workloads or [w for w in DEFAULT_WORKLOADS if w in workload_names()]:
        print(run_workload(load_workload(name), bv, args.vocab, args.engines.split(",")))
        print()


if __name__ == "__main__":
    main()
