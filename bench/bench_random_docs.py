"""Random documents, new ones every run: mask time of the first document and of later ones.

    python bench/bench_random_docs.py [--docs 20] [--processes 3] [--seed S] [--vocab llama3]
                                      [--engines a,b]

For a fixed 8-property schema (an email pattern, a bounded string, an enum, integers, a number,
an array, a nested object; open to other members, as JSON Schema reads it, and closed), for
long text fields (title, summary and body of up to 2000 characters) and for generic JSON
(``{"type": "object"}`` with any values), the
bench generates ``--docs`` random valid documents (new ones every run unless ``--seed``),
serializes them with json.dumps and tokenizes them, then, in ``--processes`` fresh processes
per schema (each with documents of its own: seeds S, S + 1, ...), per engine: compiles once,
and times every mask along each document in turn (after one unrelated schema has warmed the
engine's per-vocabulary tables, as in any process past its first request). The first document
meets every grammar state for the first time; later documents show the memoized steady
state. One first document is a few dozen tokens: its mean moves a lot from document to
document, so the table gives the mean over the processes and their lowest and highest. Prints
mean and p99 per token (us) and the compile time (ms), all engines in one process on one
vocabulary.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.peers import ENGINES  # noqa: E402
from bench.vocabularies import load_vocabulary  # noqa: E402

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "email": {"type": "string", "pattern": r"^[a-z]{2,10}@[a-z]{2,8}\.(com|org|net)$"},
        "role": {"enum": ["admin", "editor", "viewer", "guest"]},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "score": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 5},
        "address": {"type": "object",
                    "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                    "required": ["city"]},
        "active": {"type": "boolean"},
    },
    "required": ["name", "email", "role", "age"],
}
# the same with no member beyond the declared ones: the language llguidance compiles PERSON to
# (it takes a missing additionalProperties as false, refusing valid documents with other
# members), so both engines read the same keys
CLOSED_PERSON = {**PERSON, "additionalProperties": False,
                 "properties": {**PERSON["properties"],
                                "address": {**PERSON["properties"]["address"],
                                            "additionalProperties": False}}}
# long text fields (a title, a summary, a body): strings past 32 characters are lexed in chunks
ARTICLE = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 5, "maxLength": 80},
        "summary": {"type": "string", "maxLength": 300},
        "body": {"type": "string", "minLength": 100, "maxLength": 2000},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 4},
    },
    "required": ["title", "body"],
}
GENERIC = {"type": "object"}
WARMUP = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
          "required": ["x"]}


def _text(rng: random.Random, lo: int, hi: int) -> str:
    alphabet = string.ascii_letters + string.digits + "  -_.,'éü€"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def person(rng: random.Random) -> dict:
    doc = {"name": _text(rng, 1, 40),
           "email": f"{''.join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10)))}@"
                    f"{''.join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 8)))}."
                    f"{rng.choice(['com', 'org', 'net'])}",
           "role": rng.choice(PERSON["properties"]["role"]["enum"]),
           "age": rng.randint(0, 130)}
    if rng.random() < 0.7:
        doc["score"] = round(rng.uniform(-1000, 1000), rng.randint(0, 4))
    if rng.random() < 0.7:
        doc["tags"] = [_text(rng, 0, 12) for _ in range(rng.randint(0, 5))]
    if rng.random() < 0.7:
        doc["address"] = {"city": _text(rng, 1, 20)}
        if rng.random() < 0.5:
            doc["address"]["zip"] = _text(rng, 3, 8)
    if rng.random() < 0.5:
        doc["active"] = rng.random() < 0.5
    return doc


def _prose(rng: random.Random, lo: int, hi: int) -> str:
    """Words of random letters (some capitalized, some with punctuation) of lo..hi characters."""
    words, size, goal = [], 0, rng.randint(lo, hi)
    while size < goal:
        w = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 9)))
        w = w.capitalize() if rng.random() < 0.1 else w
        w += rng.choice(["", "", "", "", ",", "."])
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:goal].strip() or "x" * lo


def article(rng: random.Random) -> dict:
    """A document of ARTICLE, members in the schema's order."""
    doc = {"title": _prose(rng, 5, 80).ljust(5, "x")}
    if rng.random() < 0.7:
        doc["summary"] = _prose(rng, 0, 300)
    doc["body"] = _prose(rng, 100, 2000).ljust(100, "x")
    if rng.random() < 0.6:
        doc["tags"] = [_prose(rng, 1, 40) for _ in range(rng.randint(0, 4))]
    return doc


def _value(rng: random.Random, depth: int):
    kind = rng.choice(["str", "int", "float", "bool", "null"] +
                      (["list", "dict", "dict"] if depth < 3 else []))
    if kind == "str":
        return _text(rng, 0, 16)
    if kind == "int":
        return rng.randint(-10**6, 10**6)
    if kind == "float":
        return round(rng.uniform(-100, 100), 3)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return generic(rng, depth + 1)


def generic(rng: random.Random, depth: int = 0) -> dict:
    keys = dict.fromkeys(_text(rng, 1, 10) for _ in range(rng.randint(0, 5)))   # (in order)
    return {k: _value(rng, depth) for k in keys}


def _run(engine, schema: dict, docs: list[list[int]], vocab_size: int) -> dict:
    t0 = time.perf_counter()
    compiled = engine.compile("json_schema", schema)
    compile_ms = (time.perf_counter() - t0) * 1e3
    bitmask = np.zeros((vocab_size + 31) // 32, dtype=np.int32)
    per_doc = []
    for ids in docs:
        m = engine.matcher(compiled)
        times = []
        for t in ids:
            t1 = time.perf_counter()
            engine.fill(m, bitmask)
            times.append((time.perf_counter() - t1) * 1e6)
            if not engine.accept(m, t):
                raise AssertionError(f"{engine.name} rejected a valid document")
        per_doc.append(times)
    later = [x for d in per_doc[1:] for x in d]
    every = [x for d in per_doc for x in d]
    return {"compile": compile_ms, "first": statistics.fmean(per_doc[0]),
            "later": statistics.fmean(later) if later else float("nan"),
            "p99": float(np.percentile(every, 99))}


SCHEMAS = (("8-property", PERSON, person), ("8-property, closed", CLOSED_PERSON, person),
           ("long text", ARTICLE, article), ("generic JSON", GENERIC, generic))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--engines", default="constrained,llguidance")
    parser.add_argument("--processes", type=int, default=3,
                        help="fresh processes per schema, each with documents of its own")
    parser.add_argument("--only", default=None, help=argparse.SUPPRESS)   # (one schema's run)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    if args.only is None:
        print(f"vocabulary {args.vocab}, {args.docs} documents per process, "
              f"{args.processes} processes per schema, seed {seed}; mask times per token (us), "
              "compile (ms); means over the processes (first documents: lowest and highest)")
        print("| schema | engine | compile | first document mean | first documents (range) "
              "| later documents mean | p99 |")
        print("|---|---|---|---|---|---|---|", flush=True)
        # a process per schema and run: what an engine keeps process-wide (walks, automata)
        # from one run would otherwise make the next one's first document warm
        for label, _, _ in SCHEMAS:
            runs: dict[str, list[dict]] = {}
            for k in range(args.processes):
                done = subprocess.run([sys.executable, os.path.abspath(__file__), "--only",
                                       label, "--docs", str(args.docs), "--seed",
                                       str(seed + k), "--vocab", args.vocab, "--engines",
                                       args.engines], stdout=subprocess.PIPE, text=True)
                if done.returncode:
                    return done.returncode
                for line in done.stdout.splitlines():
                    if line.startswith('{"engine"'):     # (a peer may print lines of its own)
                        r = json.loads(line)
                        runs.setdefault(r["engine"], []).append(r)
            for name, rs in runs.items():
                mean = lambda f: statistics.fmean(r[f] for r in rs)  # noqa: E731
                firsts = [r["first"] for r in rs]
                print(f"| {label} | {name} | {statistics.median(r['compile'] for r in rs):.1f} | "
                      f"{mean('first'):.0f} | {min(firsts):.0f}-{max(firsts):.0f} | "
                      f"{mean('later'):.0f} | {mean('p99'):.0f} |", flush=True)
        return 0
    rng = random.Random(seed)
    bv = load_vocabulary(args.vocab)
    for label, schema, make in SCHEMAS:
        # every schema's documents, in order, so each process of a seed draws the same ones
        docs = [bv.encode(json.dumps(make(rng), ensure_ascii=False)) for _ in range(args.docs)]
        if label != args.only:
            continue
        for name in args.engines.split(","):
            engine = ENGINES[name](bv)
            # per-vocabulary work (token tries, indexes) done once, on another schema, as
            # any earlier request in a serving process would have
            _run(engine, WARMUP, [bv.encode('{"x": 1, "y": "a"}')], bv.vocab.size)
            r = _run(engine, schema, docs, bv.vocab.size)
            print(json.dumps({"engine": name, **r}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
