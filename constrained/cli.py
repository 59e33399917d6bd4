"""Command line: ``python -m constrained generate|batch|demo ...``.

Output goes to stdout; progress, timings and notes go to stderr. Bad input (a missing model, an
invalid grammar, a bad parameter) prints one line ``error: ...`` and exits with status 1.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

_SAMPLING_FLAGS = (
    # (flag, SamplingParams field, type)
    ("--temperature", "temperature", float),
    ("--top-k", "top_k", int),
    ("--top-p", "top_p", float),
    ("--min-p", "min_p", float),
    ("--typical-p", "typical_p", float),
    ("--tfs", "tfs_z", float),
    ("--top-a", "top_a", float),
    ("--top-n-sigma", "top_n_sigma", float),
    ("--xtc-probability", "xtc_probability", float),
    ("--xtc-threshold", "xtc_threshold", float),
    ("--repeat-penalty", "repeat_penalty", float),
    ("--repeat-last-n", "repeat_last_n", int),
    ("--frequency-penalty", "frequency_penalty", float),
    ("--presence-penalty", "presence_penalty", float),
    ("--dry-multiplier", "dry_multiplier", float),
    ("--dry-base", "dry_base", float),
    ("--dry-allowed-length", "dry_allowed_length", int),
    ("--mirostat", "mirostat", int),
    ("--mirostat-tau", "mirostat_tau", float),
    ("--mirostat-eta", "mirostat_eta", float),
    ("--dynatemp-range", "dynatemp_range", float),
    ("--dynatemp-exponent", "dynatemp_exponent", float),
    ("--rep-pen-range", "rep_pen_range", int),
    ("--rep-pen-slope", "rep_pen_slope", float),
    ("--dry-penalty-last-n", "dry_penalty_last_n", int),
    ("--min-keep", "min_keep", int),
    ("--samplers", "samplers", str),
)

_DEMO_SCHEMA = Path(__file__).resolve().parent.parent / "grammars" / "person.schema.json"
_DEMO_PROMPT = ("Invent a person and describe them as a JSON object with their name, age, role, "
                "home address and up to three skills.")

class _CliError(Exception):
    """A user-facing error: printed as one line."""


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m constrained",
                                description="Grammar-constrained generation with a local model.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="generate text, optionally constrained by a grammar")
    g.add_argument("--model", default="smollm2",
                   help="'smollm2' (embedded default), a Hugging Face folder or a .gguf file")
    g.add_argument("--prompt", required=True, help="the prompt text ('-' reads stdin)")
    g.add_argument("--runtime", choices=("transformers", "llama.cpp"), default="transformers",
                   help="what runs the model: transformers (default) or llama.cpp "
                        "(llama-cpp-python; loads GGUF files directly)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--grammar", metavar="FILE", help="a .lark, .gbnf or .json schema file")
    src.add_argument("--regex", metavar="R", help="a regex the whole output must match")
    src.add_argument("--schema", metavar="FILE", help="a JSON Schema file")
    src.add_argument("--structural-tag", metavar="FILE",
                     help="a structural tag JSON file (free text, tags, triggers, tool calls)")
    src.add_argument("--tools", metavar="FILE",
                     help="a JSON file of OpenAI-style tools: the output is text and tool calls")
    g.add_argument("--tool-choice", default="auto", metavar="CHOICE",
                   help="with --tools: auto, required, none, or a tool's name")
    g.add_argument("--reasoning-budget", type=int, default=None, metavar="N",
                   help="open the output with a <think> block closed within N tokens")
    g.add_argument("--max-new-tokens", type=int, default=256)
    g.add_argument("--seed", type=int, default=None)
    for flag, _field, typ in _SAMPLING_FLAGS:
        g.add_argument(flag, type=typ, default=None)
    g.add_argument("--sampling", metavar="JSON", default=None,
                   help="any sampling parameters as a JSON object (e.g. logit_bias, "
                        "dry_sequence_breakers); the flags above override it")
    g.add_argument("--greedy", action="store_true", help="argmax selection (temperature 0)")
    g.add_argument("--stop", action="append", default=None,
                   help="stop string (repeatable; under a grammar it ends the text only "
                        "after a complete sentence)")
    g.add_argument("--stream", action="store_true", help="print text as it is generated")
    chat = g.add_mutually_exclusive_group()
    chat.add_argument("--chat", dest="chat", action="store_true", default=None,
                      help="apply the tokenizer's chat template (default when it has one)")
    chat.add_argument("--no-chat", dest="chat", action="store_false")
    g.add_argument("--system", default=None, help="system message (with --chat)")
    g.add_argument("--complete-within-budget", action="store_true",
                   help="steer the last tokens so the output completes within the budget")
    g.add_argument("--no-force", action="store_true", help="sample forced tokens too")
    g.add_argument("--budget-window", type=int, default=None,
                   help="with --complete-within-budget: steer only the last N tokens")
    g.add_argument("--token-healing", action="store_true",
                   help="back the prompt up over its last token(s) and regenerate them")
    g.add_argument("--logprobs", type=int, default=None, metavar="N",
                   help="print each token's logprob and the N likeliest tokens (JSON, stderr)")
    g.add_argument("--timings", action="store_true", help="print timings on stderr")

    from .batch.cli import add_batch_subcommand
    add_batch_subcommand(sub)

    c = sub.add_parser("cache", help="show or prune the on-disk cache of token tables")
    c.add_argument("action", choices=("info", "prune"))
    c.add_argument("--max-bytes", type=int, default=None,
                   help="prune down to this many bytes (default: $CONSTRAINED_CACHE_MAX_BYTES "
                        "or 512 MiB; 0 empties the cache)")

    s = sub.add_parser("serve", help="serve the model over an OpenAI-compatible HTTP API")
    s.add_argument("--model", default="smollm2",
                   help="'smollm2' (embedded default), a Hugging Face folder or a .gguf file")
    s.add_argument("--runtime", choices=("transformers", "llama.cpp"), default="transformers")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--max-rows", type=int, default=32,
                   help="rows decoded together (all requests' choices); more requests wait")
    s.add_argument("--max-waiting", type=int, default=64,
                   help="requests waiting for rows before the server answers 503")
    s.add_argument("--max-tokens", type=int, default=4096,
                   help="the largest max_tokens a request may ask for")
    s.add_argument("--log-level", default="warning")

    d = sub.add_parser("demo", help="fill the person JSON schema with the embedded model")
    d.add_argument("--model", default="smollm2")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-new-tokens", type=int, default=160)
    d.add_argument("--temperature", type=float, default=0.7)
    return p


def _load(model: str, runtime: str = "transformers"):
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # pragma: no cover - cosmetic only
        pass
    from .model.loading import load_model
    start = time.perf_counter()
    lm, tokenizer = load_model(model, runtime=runtime)
    _note(f"loaded {model} ({runtime}) in {time.perf_counter() - start:.1f} s")
    return lm, tokenizer


def _read_json(path: str):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _CliError(f"schema file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise _CliError(f"{path} is not valid JSON: line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}") from None


def _grammar(args):
    from .grammar import Grammar
    if args.regex is not None:
        from .automata import regex_to_byte_dfa
        regex_to_byte_dfa(args.regex)  # a bad regex fails here, before the model loads
        return Grammar.from_regex(args.regex)
    if args.schema is not None:
        return Grammar.from_json_schema(_read_json(args.schema))
    if args.grammar is not None:
        if not Path(args.grammar).is_file():
            raise _CliError(f"grammar file not found: {args.grammar}")
        return Grammar.from_file(args.grammar)
    if args.structural_tag is not None:
        spec = _read_json(args.structural_tag)
        Grammar.from_structural_tag(spec)   # a bad spec fails here, before the model loads
        return spec
    return None


def _tools(args):
    """(tools, tool_choice) from --tools and --tool-choice, checked before the model loads."""
    if args.tools is None:
        return None, "auto"
    from .tools import tools_structural_tag
    tools = _read_json(args.tools)
    choice = args.tool_choice
    if choice not in ("auto", "required", "none"):
        choice = {"type": "function", "function": {"name": choice}}
    tools_structural_tag(tools, choice)
    return tools, choice


def _sampling(args) -> dict:
    out = {}
    if args.sampling:
        try:
            out = json.loads(args.sampling)
        except json.JSONDecodeError as exc:
            raise _CliError(f"--sampling is not valid JSON: {exc.msg}") from None
        if not isinstance(out, dict):
            raise _CliError("--sampling must be a JSON object")
    for _flag, field, _typ in _SAMPLING_FLAGS:
        value = getattr(args, field if field != "tfs_z" else "tfs", None)
        if value is not None:
            out[field] = value
    if args.greedy:
        out["temperature"] = 0.0
    return out


def _print_timings(result) -> None:
    s = result.timings.summary()
    _note(f"{result.n_tokens} tokens ({result.forced_tokens} forced), finish={result.finish_reason}; "
          f"prefill {s['prefill_ms']:.0f} ms, {s['ms_per_token']:.1f} ms/token "
          f"(forward {s['forward_ms']:.0f} ms, mask {s['mask_ms']:.1f} ms, "
          f"mask wait {s['mask_wait_ms']:.1f} ms, sampling {s['sample_ms']:.1f} ms)")


def _print_logprobs(result, tokenizer) -> None:
    for tok, lp, top in zip(result.token_ids, result.token_logprobs, result.top_logprobs):
        _note(json.dumps({"token": tokenizer.decode([tok]), "id": tok, "logprob": round(lp, 5),
                          "top": {tokenizer.decode([t]): round(v, 5) for t, v in top.items()}},
                         ensure_ascii=False))


def _cmd_generate(args) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    grammar = _grammar(args)   # before loading the model: bad grammars fail fast
    tools, tool_choice = _tools(args)
    lm, tokenizer = _load(args.model, args.runtime)
    chat = args.chat if args.chat is not None else bool(getattr(tokenizer, "chat_template", None))
    from .decoding import generate, stream
    if isinstance(grammar, dict):      # a structural tag: special tokens of this vocabulary
        from .decoding.setup import logits_width, resolve_vocab
        from .grammar import Grammar
        grammar = Grammar.from_structural_tag(
            grammar, resolve_vocab(tokenizer, logits_width(lm))[0])
    options = dict(grammar=grammar, sampling=_sampling(args), max_new_tokens=args.max_new_tokens,
                   stop=args.stop, seed=args.seed, chat=chat, system=args.system,
                   force_tokens=not args.no_force,
                   complete_within_budget=args.complete_within_budget,
                   budget_window=args.budget_window, token_healing=args.token_healing,
                   logprobs=args.logprobs, reasoning_budget=args.reasoning_budget)
    if tools is not None:
        if args.stream:
            raise _CliError("--tools and --stream cannot be combined")
        options.update(tools=tools, tool_choice=tool_choice)
    if args.stream:
        pieces = stream(lm, tokenizer, prompt, **options)
        for piece in pieces:
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
        result = pieces.result
    else:
        result = generate(lm, tokenizer, prompt, **options)
        print(result.text)
        if tools is not None:
            print(json.dumps({"content": result.content,
                              "tool_calls": [c.to_openai() for c in result.tool_calls]},
                             ensure_ascii=False))
    if args.timings:
        _print_timings(result)
    if args.logprobs is not None:
        _print_logprobs(result, tokenizer)
    if result.finish_reason == "length" and not result.complete:
        _note(f"note: stopped after {args.max_new_tokens} tokens before the grammar was complete")
    return 0


def _cmd_demo(args) -> int:
    from .decoding import generate
    schema = _read_json(str(_DEMO_SCHEMA))
    from .grammar import Grammar
    grammar = Grammar.from_json_schema(schema)
    lm, tokenizer = _load(args.model)
    _note(f"generating a person record constrained by the JSON schema {_DEMO_SCHEMA.name} ...")
    start = time.perf_counter()
    result = generate(lm, tokenizer, _DEMO_PROMPT, grammar=grammar, chat=True,
                      sampling={"temperature": args.temperature, "top_p": 0.95, "top_k": 40,
                                "min_p": 0.05},
                      seed=args.seed, max_new_tokens=args.max_new_tokens,
                      complete_within_budget=True)
    elapsed = time.perf_counter() - start
    try:
        doc = json.loads(result.text)
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    except json.JSONDecodeError:
        print(result.text)
        raise _CliError("the output is not valid JSON (this is a bug)")
    _print_timings(result)
    _note(f"total {elapsed:.2f} s for {result.n_tokens} tokens")
    try:
        import jsonschema
    except ImportError:
        _note("jsonschema is not installed: skipped schema validation")
        return 0
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as exc:
        raise _CliError(f"the output does not validate against the schema: {exc.message}")
    _note("valid: the output validates against the schema (jsonschema)")
    return 0


def _cmd_cache(args) -> int:
    from .automata.disk_cache import cache_dir, cache_usage, max_cache_bytes, prune_cache
    if args.action == "prune":
        removed, freed = prune_cache(args.max_bytes)
        print(f"removed {removed} files ({freed / 2**20:.1f} MiB)")
    files, size = cache_usage()
    print(f"{cache_dir()}: {files} files, {size / 2**20:.1f} MiB "
          f"(bound {max_cache_bytes() / 2**20:.0f} MiB)")
    return 0


def _cmd_serve(args) -> int:
    try:
        from .server import ServerLimits, serve
    except ImportError as exc:
        raise _CliError(f"the server needs its extra: pip install "
                        f"'grammar-constrained-engine[server]' ({exc})") from None
    for name in ("max_rows", "max_waiting", "max_tokens"):
        if getattr(args, name) < 1:
            raise _CliError(f"--{name.replace('_', '-')} must be at least 1")
    limits = ServerLimits(max_rows=args.max_rows, max_waiting=args.max_waiting,
                          max_tokens=args.max_tokens)
    serve(args.model, args.host, args.port, limits, log_level=args.log_level,
          runtime=args.runtime)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    from .errors import ConstrainedError
    try:
        from samplers import SamplerError
    except ImportError:  # pragma: no cover
        SamplerError = ConstrainedError  # type: ignore[assignment,misc]
    try:
        if args.command == "generate":
            return _cmd_generate(args)
        if args.command == "batch":
            return args.func(args)
        if args.command == "cache":
            return _cmd_cache(args)
        if args.command == "serve":
            return _cmd_serve(args)
        return _cmd_demo(args)
    except (_CliError, ConstrainedError, SamplerError) as exc:
        _note(f"error: {exc}")
        return 1
    except OSError as exc:
        _note(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        _note("interrupted")
        return 130
