"""Many tools at once: compile time of a tool-calling structural tag, cold and cached.

    python bench/bench_tools.py [--tools 128] [--vocab qwen3] [--seed S] [--repeat 3]

Generates ``--tools`` function schemas (new ones every run unless ``--seed`` is given: string
fields with lengths, patterns and formats, enums, bounded integers and numbers, booleans,
arrays, nested objects, optional fields), builds the "auto" tool-calling structural tag (free
text, any number of ``<tool_call>`` JSON ``</tool_call>`` calls, each call's arguments valid
under its tool's schema) and compiles it with this project and with XGrammar's structural tags
(the same JSON spec) in one process, on the same vocabulary.

- cold: the first compile of these schemas in the process (the vocabulary already loaded);
- cached: the same tools compiled again (this project: schema conversions, terminal
  automata and token walks cached per process; XGrammar: its compiler cache);
- first mask: compile + the first two masks (the answer's start and inside a call).

Prints a table (times in ms, medians over ``--repeat`` fresh tool sets for cold).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.vocabularies import load_vocabulary  # noqa: E402
from constrained import Grammar, compile_grammar  # noqa: E402
from constrained.bitmask import allocate_token_bitmask  # noqa: E402
from constrained.tools import tools_structural_tag  # noqa: E402

_WORDS = ["city", "name", "query", "limit", "unit", "date", "user", "price", "items", "mode",
          "email", "count", "tags", "lang", "depth", "start", "end", "id", "score", "notes"]


def _field(rng: random.Random, depth: int) -> dict:
    kind = rng.choice(["string", "string", "enum", "integer", "number", "boolean", "array",
                       "object" if depth < 2 else "string"])
    if kind == "string":
        out = {"type": "string"}
        extra = rng.random()
        if extra < 0.3:
            out["maxLength"] = rng.randint(5, 60)
        elif extra < 0.4:
            out["pattern"] = rng.choice([r"^[A-Z]{3}$", r"^\d{4}-\d{2}-\d{2}$", r"^[a-z_]+$"])
        elif extra < 0.5:
            out["format"] = rng.choice(["email", "date", "uri"])
        return out
    if kind == "enum":
        return {"type": "string", "enum": rng.sample(_WORDS, rng.randint(2, 6))}
    if kind == "integer":
        lo = rng.randint(-10, 10)
        return {"type": "integer", "minimum": lo, "maximum": lo + rng.randint(1, 1000)}
    if kind == "number":
        return {"type": "number"}
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "array":
        return {"type": "array", "items": _field(rng, depth + 1), "maxItems": rng.randint(1, 8)}
    return _object(rng, depth + 1)


def _object(rng: random.Random, depth: int) -> dict:
    names = rng.sample(_WORDS, rng.randint(1, 6))
    props = {n: _field(rng, depth) for n in names}
    return {"type": "object", "properties": props,
            "required": [n for n in names if rng.random() < 0.6]}


def make_tools(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [{"type": "function",
             "function": {"name": f"tool_{seed % 100000}_{i}", "description": "generated",
                          "parameters": _object(rng, 0)}} for i in range(n)]


_EXAMPLES = {r"^[A-Z]{3}$": "ABC", r"^\d{4}-\d{2}-\d{2}$": "2024-01-02", r"^[a-z_]+$": "abc",
             "email": "a@b.co", "date": "2024-01-02", "uri": "http://x.org/a"}


def _example(schema: dict):
    """A small valid instance of a schema made by make_tools."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "string":
        return _EXAMPLES.get(schema.get("pattern") or schema.get("format"), "text")
    if kind == "integer":
        return schema.get("minimum", 0)
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [_example(schema["items"])]
    return {k: _example(v) for k, v in schema["properties"].items() if k in schema["required"]}


def _document(tools: list[dict], bv) -> list[int]:
    """Token ids of an answer with free text and a complete call of the first tool."""
    fn = tools[0]["function"]
    args = json.dumps(_example(fn["parameters"]))
    text = (f'Sure, let me look that up for you. <tool_call>\n{{"name": "{fn["name"]}", '
            f'"arguments": {args}}}\n</tool_call> Done.')
    head, _, rest = text.partition("<tool_call>")
    body, _, tail = rest.partition("</tool_call>")
    specials = bv.vocab.special_ids_by_text
    if b"<tool_call>" in specials:
        out = bv.encode(head) + [specials[b"<tool_call>"]] + bv.encode(body) + \
            [specials[b"</tool_call>"]] + bv.encode(tail)
    else:
        out = bv.encode(text)
    return out


def _mask_times(fill, accept, doc: list[int]) -> list[float]:
    times = []
    for t in doc:
        t0 = time.perf_counter()
        fill()
        times.append((time.perf_counter() - t0) * 1e6)
        if not accept(t):
            raise AssertionError("the sample document was rejected")
    return times


def _timed(compile_, new_matcher, bitmask, probe: list[int], doc) -> tuple:
    """(compile ms, compile + first two masks ms, mask times along ``doc`` in us) of one
    engine: ``compile_()`` -> compiled, ``new_matcher(compiled)`` -> matcher."""
    t0 = time.perf_counter()
    compiled = compile_()
    t1 = time.perf_counter()
    m = new_matcher(compiled)
    m.fill_next_token_bitmask(bitmask)
    for t in probe:
        if not m.accept_token(t):
            raise AssertionError("the sample call was rejected")
    m.fill_next_token_bitmask(bitmask)
    first = (time.perf_counter() - t0) * 1e3
    times = []
    if doc is not None:
        m = new_matcher(compiled)
        times = _mask_times(lambda: m.fill_next_token_bitmask(bitmask), m.accept_token, doc)
    return (t1 - t0) * 1e3, first, times


def _constrained(spec: dict, vocab, probe: list[int], doc=None):
    return _timed(lambda: compile_grammar(Grammar.from_structural_tag(spec, vocab), vocab),
                  lambda c: c.matcher(), allocate_token_bitmask(vocab.size).numpy(), probe, doc)


class _XGrammar:
    def __init__(self, vocab) -> None:
        import xgrammar as xgr
        self.xgr = xgr
        self.info = xgr.TokenizerInfo(list(vocab.token_bytes), xgr.VocabType.RAW,
                                      vocab_size=vocab.size,
                                      stop_token_ids=sorted(vocab.eos_token_ids))
        self.cached = xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=True)

    def run(self, spec: dict, probe: list[int], cached: bool, doc=None):
        xgr = self.xgr
        compiler = self.cached if cached else xgr.GrammarCompiler(self.info, max_threads=1,
                                                                  cache_enabled=False)
        return _timed(lambda: compiler.compile_structural_tag(json.dumps(spec)),
                      xgr.GrammarMatcher, xgr.allocate_token_bitmask(1, self.info.vocab_size),
                      probe, doc)


def _sample_call(tools: list[dict], vocab, bv) -> list[int]:
    """Token ids of 'Sure. <tool_call>\\n{"name": <first tool>, "arguments": ' (special tag
    token included when the vocabulary has one)."""
    name = tools[0]["function"]["name"]
    text = f'Sure. <tool_call>\n{{"name": "{name}", "arguments": '
    tag = vocab.special_ids_by_text.get(b"<tool_call>")
    if tag is None:
        return bv.encode(text)
    head, _, tail = text.partition("<tool_call>")
    return bv.encode(head) + [tag] + bv.encode(tail)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=128)
    parser.add_argument("--vocab", default="qwen3")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    bv = load_vocabulary(args.vocab)
    vocab = bv.vocab
    base = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    # warm the process: the vocabulary's trie and the engines' fixed costs, on other schemas
    warm = make_tools(4, base + 999)
    _constrained(tools_structural_tag(warm), vocab, _sample_call(warm, vocab, bv))
    try:
        xg = _XGrammar(vocab)
        xg.run(tools_structural_tag(warm), _sample_call(warm, vocab, bv), cached=False)
    except ImportError:
        xg = None
    keys = ("cold", "cached", "first")
    rows = {e: {k: [] for k in keys} for e in ("ours", "xg")}
    masks: dict[str, list[float]] = {"ours": [], "xg": []}
    for r in range(args.repeat):
        tools = make_tools(args.tools, base + r)
        spec = tools_structural_tag(tools)
        probe, doc = _sample_call(tools, vocab, bv), _document(tools, bv)
        cold, first, _ = _constrained(spec, vocab, probe)
        cached, _, times = _constrained(spec, vocab, probe, doc)
        for k, v in zip(keys, (cold, cached, first)):
            rows["ours"][k].append(v)
        masks["ours"] += times
        if xg is not None:
            cold, first, _ = xg.run(spec, probe, cached=False)
            xg.run(spec, probe, cached=True)
            cached, _, times = xg.run(spec, probe, cached=True, doc=doc)
            for k, v in zip(keys, (cold, cached, first)):
                rows["xg"][k].append(v)
            masks["xg"] += times
    print(f"{args.tools} tools, vocabulary {args.vocab} ({vocab.size} tokens), seeds "
          f"{base}..{base + args.repeat - 1}, medians of {args.repeat}; masks along an answer "
          f"with free text and one call ({len(doc)} tokens per run)")
    print("| engine | compile cold ms | compile cached ms | compile + first 2 masks ms | "
          "mask mean us | mask p50 us | mask max us |")
    print("|---|---|---|---|---|---|---|")
    for engine, label in (("ours", "constrained"), ("xg", "xgrammar (structural tag)")):
        if not rows[engine]["cold"]:
            continue
        med = {k: statistics.median(v) for k, v in rows[engine].items()}
        ts = masks[engine]
        print(f"| {label} | {med['cold']:.0f} | {med['cached']:.1f} | {med['first']:.0f} | "
              f"{statistics.fmean(ts):.0f} | {statistics.median(ts):.0f} | {max(ts):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
