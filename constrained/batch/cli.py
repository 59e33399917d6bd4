"""``python -m constrained.batch`` (and the ``batch`` subcommand of ``python -m constrained``)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .worker import DECODE_BATCHED, DECODE_PER_RECORD, JobSpec, build_grammar

_DESCRIPTION = ("Constrained generation for every line of a JSON-lines file "
                "({\"prompt\": ..., \"id\": ..., \"seed\": ...}); one result line per input line, "
                "in input order. Rerunning with the same output resumes where it stopped.")


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", required=True, help="prompts, one JSON object per line")
    p.add_argument("--output", required=True, help="results (appended; resumed when present)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--schema", help="JSON Schema file")
    g.add_argument("--grammar", help="grammar file (.lark, .gbnf or .json)")
    g.add_argument("--regex", help="regex the whole output must match")
    p.add_argument("--model", default="smollm2", help="model name or folder (default smollm2)")
    s = p.add_argument_group("sampling")
    s.add_argument("--temperature", type=float)
    s.add_argument("--top-k", type=int)
    s.add_argument("--top-p", type=float)
    s.add_argument("--min-p", type=float)
    s.add_argument("--greedy", action="store_true", help="argmax selection (temperature 0)")
    s.add_argument("--seed", type=int, default=0,
                   help="base seed: a record without \"seed\" uses seed + its line index")
    s.add_argument("--max-new-tokens", type=int, default=64)
    s.add_argument("--complete-within-budget", action="store_true",
                   help="steer the last tokens so every output is complete within the budget")
    s.add_argument("--sampling", metavar="JSON",
                   help="more SamplingParams fields as a JSON object, e.g. '{\"typical_p\": 0.9}'")
    chat = p.add_mutually_exclusive_group()
    chat.add_argument("--chat", dest="chat", action="store_true", default=None,
                      help="apply the tokenizer's chat template (default when it has one)")
    chat.add_argument("--no-chat", dest="chat", action="store_false")
    p.add_argument("--system", help="system message for chat prompts")
    r = p.add_argument_group("execution")
    r.add_argument("--ray-address", help="Ray cluster address (e.g. ray://host:10001 or auto)")
    r.add_argument("--workers", type=int,
                   help="worker actors (starts a local Ray cluster without --ray-address)")
    r.add_argument("--batch-size", type=int, default=4, help="records per worker call")
    r.add_argument("--threads", type=int,
                   help="torch threads per worker (default: cores / workers; 1 on a cluster)")
    r.add_argument("--batched-decode", action="store_true",
                   help="decode a batch in one padded forward pass (faster; results may then "
                        "depend on which records share a batch)")
    p.add_argument("--token-ids", action="store_true", help="also write the generated token ids")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_batch_subcommand(subparsers) -> argparse.ArgumentParser:
    """Register ``batch`` on an argparse subparsers object (dispatch: ``args.func(args)``)."""
    p = subparsers.add_parser("batch", help="constrained generation over a JSON-lines file",
                              description=_DESCRIPTION)
    _add_arguments(p)
    p.set_defaults(func=run_batch_command)
    return p


def spec_from_args(args: argparse.Namespace) -> JobSpec:
    """The JobSpec the command line describes."""
    sampling = {}
    if args.sampling:
        sampling = json.loads(args.sampling)
        if not isinstance(sampling, dict):
            raise ValueError("--sampling must be a JSON object")
    sampling.update({name: getattr(args, name) for name in ("temperature", "top_k", "top_p",
                                                            "min_p")
                     if getattr(args, name) is not None})
    if args.greedy:
        sampling["temperature"] = 0.0
    return JobSpec(model=args.model,
                   grammar=build_grammar(schema=args.schema, grammar=args.grammar,
                                         regex=args.regex),
                   sampling=sampling, max_new_tokens=args.max_new_tokens, seed=args.seed,
                   chat=args.chat, system=args.system,
                   complete_within_budget=args.complete_within_budget,
                   decode=DECODE_BATCHED if args.batched_decode else DECODE_PER_RECORD,
                   token_ids=args.token_ids, num_threads=args.threads)


def run_batch_command(args: argparse.Namespace) -> int:
    """Run the job an argparse namespace describes; returns the exit code."""
    from ..errors import ConstrainedError
    from .local import run_local
    from .ray_runner import ray_available, run_ray
    try:
        spec = spec_from_args(args)
    except (ConstrainedError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    use_ray = bool(args.ray_address) or (args.workers is not None and args.workers > 0)
    if use_ray and not ray_available():
        if args.ray_address:
            print("error: --ray-address needs Ray: pip install 'ray[data]'", file=sys.stderr)
            return 2
        print("Ray is not installed: running in this process", file=sys.stderr)
        use_ray = False
    progress = not args.no_progress
    _quiet_transformers()
    try:
        if use_ray:
            summary = run_ray(args.input, args.output, spec, workers=args.workers or 2,
                              batch_size=args.batch_size, address=args.ray_address,
                              progress=progress)
        else:
            summary = run_local(args.input, args.output, spec, batch_size=args.batch_size,
                                progress=progress)
    except (ConstrainedError, ValueError, OSError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{summary.written} written, {summary.skipped} already done, {summary.errors} "
          f"errors, {summary.total} records in {summary.seconds:.1f} s", file=sys.stderr)
    return 0


def _quiet_transformers() -> None:
    try:
        from transformers.utils import logging
        logging.disable_progress_bar()
    except ImportError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m constrained.batch``."""
    parser = argparse.ArgumentParser(prog="python -m constrained.batch", description=_DESCRIPTION)
    _add_arguments(parser)
    return run_batch_command(parser.parse_args(argv))
