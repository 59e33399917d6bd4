"""Random JSON Schemas with documents, new ones every run: a held-out set no engine was tuned on.

    python bench/random_schemas.py [--schemas 200] [--docs 3] [--seed S] [--out DIR]
                                   [maskbench options: --engines a,b --schema-options JSON ...]

Writes the schemas in MaskBench's file format (``schema`` and ``tests``) into ``--out`` (a
temporary folder by default), then runs bench/maskbench.py over them with the remaining
options. Schemas mix what real-world schemas hold: nested objects with required and optional
properties, closed objects, strings with lengths, enums, patterns and formats, bounded integers
and numbers, arrays with bounds, ``anyOf`` and nullable types, ``$ref`` into ``$defs``. Each
schema gets random documents built from it and mutations of them (a member dropped, a value of
the wrong type or out of bounds, an extra member); the jsonschema package labels every
document valid or invalid, so an engine that accepts an invalid one shows as an
invalidation error.
"""
from __future__ import annotations

import argparse
import atexit
import copy
import json
import random
import shutil
import string
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("id name type value status created updated owner email count items total price "
         "title label url path size color kind mode level score tags notes user account "
         "region zone start end date amount currency code message source target version "
         "enabled active public limit offset page query filter sort order index key data").split()
# ASCII: MaskBench serializes with json.dumps, which escapes the rest as \uXXXX (and an engine
# refusing such escapes would be measured on escapes, not on schemas)
TEXT = string.ascii_letters + string.digits + " -_.,:/'"

# pattern pieces: (regex, generator of a matching string)
PIECES = (
    ("[A-Z]{2}", lambda r: "".join(r.choices(string.ascii_uppercase, k=2))),
    ("[a-z]{1,8}", lambda r: "".join(r.choices(string.ascii_lowercase, k=r.randint(1, 8)))),
    ("\\d{3,5}", lambda r: "".join(r.choices(string.digits, k=r.randint(3, 5)))),
    ("[0-9a-f]{4}", lambda r: "".join(r.choices("0123456789abcdef", k=4))),
    ("-", lambda r: "-"),
    ("_", lambda r: "_"),
    ("\\.", lambda r: "."),
    ("(v|V)\\d+", lambda r: r.choice("vV") + str(r.randint(0, 99))),
    ("(prod|dev|test)", lambda r: r.choice(["prod", "dev", "test"])),
)
FORMATS = {
    "date": lambda r: f"{r.randint(1990, 2030):04d}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "date-time": lambda r: (f"{r.randint(1990, 2030):04d}-{r.randint(1, 12):02d}-"
                            f"{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
                            f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"),
    "email": lambda r: (f"{''.join(r.choices(string.ascii_lowercase, k=r.randint(1, 9)))}@"
                        f"{''.join(r.choices(string.ascii_lowercase, k=r.randint(2, 8)))}.com"),
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
}


class SchemaMaker:
    """Builds one random schema and, alongside, a generator of documents valid under it."""

    def __init__(self, rng: random.Random, formats: list[str]) -> None:
        self.rng = rng
        self.formats = formats    # the formats the judge checks
        self.defs: dict[str, tuple[dict, object]] = {}

    def _name(self) -> str:
        r = self.rng
        a, b = r.choice(WORDS), r.choice(WORDS)
        return r.choice([a, f"{a}_{b}", a + b.capitalize(), f"{a}-{b}" if r.random() < 0.1 else a])

    def _text(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choice(TEXT) for _ in range(self.rng.randint(lo, hi)))

    def string(self):
        r = self.rng
        kind = r.choices(["plain", "length", "enum", "pattern", "format", "const"],
                         [4, 3, 3, 2, 2, 1])[0]
        if kind == "plain":
            return {"type": "string"}, lambda: self._text(0, 20)
        if kind == "length":
            lo = r.choice([0, 1, 1, 2, 5])
            hi = lo + r.choice([3, 10, 40, 100])
            return ({"type": "string", "minLength": lo, "maxLength": hi},
                    lambda: self._text(lo, min(hi, lo + 30)))
        if kind == "enum":
            values = list(dict.fromkeys(self._name() for _ in range(r.randint(2, 7))))
            return {"type": "string", "enum": values}, lambda: r.choice(values)
        if kind == "const":
            value = self._name()
            return {"const": value}, lambda: value
        if kind == "pattern":
            parts = r.choices(PIECES, k=r.randint(1, 4))
            regex = "^" + "".join(p for p, _ in parts) + "$"
            return ({"type": "string", "pattern": regex},
                    lambda: "".join(g(r) for _, g in parts))
        fmt = r.choice(self.formats)
        return {"type": "string", "format": fmt}, lambda: FORMATS[fmt](r)

    def number(self):
        r = self.rng
        if r.random() < 0.6:
            lo = r.choice([None, 0, 1, -100])
            hi = r.choice([None, 10, 100, 65535]) if lo is None or lo < 10 else None
            s: dict = {"type": "integer"}
            if lo is not None:
                s["minimum"] = lo
            if hi is not None:
                s["maximum"] = hi
            a = lo if lo is not None else -10**6
            b = hi if hi is not None else 10**6
            return s, lambda: r.randint(a, b)
        s = {"type": "number"}
        if r.random() < 0.5:
            s["minimum"] = 0
            return s, lambda: round(r.uniform(0, 1000), r.randint(0, 4))
        return s, lambda: round(r.uniform(-1e4, 1e4), r.randint(0, 6))

    def array(self, depth: int):
        r = self.rng
        item, make = self.value(depth + 1)
        s: dict = {"type": "array", "items": item}
        lo, hi = 0, 4
        if r.random() < 0.4:
            lo = r.choice([0, 1, 1, 2])
            s["minItems"] = lo
        if r.random() < 0.4:
            hi = lo + r.choice([1, 3, 5, 10])
            s["maxItems"] = hi
        return s, lambda: [make() for _ in range(r.randint(lo, min(hi, lo + 4)))]

    def obj(self, depth: int):
        r = self.rng
        names = list(dict.fromkeys(self._name() for _ in range(r.randint(1, 9))))
        props = {n: self.value(depth + 1) for n in names}
        required = [n for n in names if r.random() < 0.5]
        s: dict = {"type": "object", "properties": {n: p[0] for n, p in props.items()}}
        if r.random() < 0.3:
            s["description"] = self._text(5, 30)
        if required:
            s["required"] = required
        closed = r.random() < 0.4
        if closed:
            s["additionalProperties"] = False

        def make():
            doc = {}
            for n, (_, gen) in props.items():
                if n in required or r.random() < 0.6:
                    doc[n] = gen()
            return doc
        return s, make

    def tagged(self, depth: int):
        """A oneOf of objects told apart by a member each branch requires with its own
        constant (a discriminated union: the type is said beside the oneOf, as OpenAPI
        documents do)."""
        r = self.rng
        tag = r.choice(["kind", "type", "event", "op"])
        branches, makers = [], []
        for value in dict.fromkeys(self._name() for _ in range(r.randint(2, 4))):
            s, make = self.obj(depth + 1)
            s = {k: v for k, v in s.items() if k != "type"}
            s["properties"] = {tag: {"const": value}, **{
                n: p for n, p in s["properties"].items() if n != tag}}
            s["required"] = [tag] + [n for n in s.get("required", []) if n != tag]
            branches.append(s)
            makers.append(lambda make=make, value=value: {tag: value, **{
                k: v for k, v in make().items() if k != tag}})
        return ({"type": "object", "oneOf": branches}, lambda: r.choice(makers)())

    def value(self, depth: int):
        r = self.rng
        kinds = ["string", "string", "number", "number", "boolean"]
        if depth < 3:
            kinds += ["object", "object", "array", "anyof", "nullable", "ref", "tagged"]
        kind = r.choice(kinds)
        if kind == "string":
            return self.string()
        if kind == "number":
            return self.number()
        if kind == "boolean":
            return {"type": "boolean"}, lambda: r.random() < 0.5
        if kind == "object":
            return self.obj(depth)
        if kind == "array":
            return self.array(depth)
        if kind == "nullable":
            inner, make = r.choice([self.string, self.number])()
            if "type" not in inner:
                return inner, make
            inner = dict(inner, type=[inner["type"], "null"])
            if "enum" in inner:
                inner["enum"] = inner["enum"] + [None]
            return inner, lambda: None if r.random() < 0.3 else make()
        if kind == "tagged":
            return self.tagged(depth)
        if kind == "anyof":
            alts = [self.value(depth + 1) for _ in range(r.randint(2, 3))]
            return ({"anyOf": [a for a, _ in alts]}, lambda: r.choice(alts)[1]())
        if self.defs and r.random() < 0.5:
            name = r.choice(list(self.defs))
        else:
            name = f"{self._name()}{len(self.defs)}"
            self.defs[name] = self.obj(depth + 1)
        make = self.defs[name][1]
        return {"$ref": f"#/$defs/{name}"}, lambda: make()

    def schema(self):
        s, make = self.obj(0)
        if self.defs:
            s["$defs"] = {n: d[0] for n, d in self.defs.items()}
        return s, make


def _mutate(rng: random.Random, doc):
    """A copy of ``doc`` with one random change (that may or may not keep it valid)."""
    doc = copy.deepcopy(doc)
    holders = []

    def walk(x):
        if isinstance(x, dict):
            holders.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            holders.append(x)
            for v in x:
                walk(v)
    walk(doc)
    h = rng.choice(holders)
    if isinstance(h, dict):
        action = rng.choice(["drop", "retype", "extra"] if h else ["extra"])
        if action == "drop":
            del h[rng.choice(list(h))]
        elif action == "retype":
            k = rng.choice(list(h))
            h[k] = rng.choice([12345678, "x" * 120, -5, 3.25, None, True, [], {}])
        else:
            h[rng.choice(WORDS) + "_extra"] = rng.choice([1, "x", None])
    elif h:
        h[rng.randrange(len(h))] = rng.choice([12345678, "x" * 120, -5, None, {}])
    else:
        h.extend([{"z": 1}] * 12)
    return doc


def make_files(out: Path, n: int, docs: int, seed: int) -> int:
    """Writes ``n`` schema files into ``out``; returns how many documents were written."""
    from jsonschema import Draft202012Validator, FormatChecker
    rng = random.Random(seed)
    formats = [f for f in FORMATS if f in FormatChecker().checkers]
    written = 0
    for i in range(n):
        maker = SchemaMaker(rng, formats)
        schema, make = maker.schema()
        check = Draft202012Validator(schema, format_checker=FormatChecker())
        tests, seen = [], set()
        for _ in range(docs):
            doc = make()
            if not check.is_valid(doc):
                raise AssertionError(f"schema {i}: a generated document is invalid: {doc}")
            for data in (doc, _mutate(rng, doc)):
                text = json.dumps(data, sort_keys=False)
                if text in seen:
                    continue
                seen.add(text)
                tests.append({"description": "generated", "valid": check.is_valid(data),
                              "data": data})
        written += len(tests)
        (out / f"random_{seed}_{i:04d}.json").write_text(json.dumps(
            {"description": f"random schema {i} of seed {seed}", "schema": schema,
             "tests": tests}))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schemas", type=int, default=200)
    parser.add_argument("--docs", type=int, default=3, help="valid documents per schema "
                        "(each with one mutation beside it)")
    parser.add_argument("--seed", type=int, default=None, help="default: new every run")
    parser.add_argument("--out", default=None, help="folder for the files (default: temporary)")
    args, rest = parser.parse_known_args(argv)
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1_000_000
    out = Path(args.out or tempfile.mkdtemp(prefix="random-schemas-"))
    if not args.out:
        atexit.register(shutil.rmtree, out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    n_docs = make_files(out, args.schemas, args.docs, seed)
    print(f"random schemas: {args.schemas} schemas, {n_docs} documents, seed {seed}, in {out}")
    from bench.maskbench import main as maskbench
    maskbench(["--data", str(out)] + rest)


if __name__ == "__main__":
    main()
