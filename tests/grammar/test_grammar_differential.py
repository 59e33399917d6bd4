"""Shipped grammars against independent judges: Python's json module, and Lark vs GBNF twins.

Random documents and random mutations of them must be accepted by json.gbnf / json.lark
exactly when ``json.loads`` accepts them (the generator avoids NaN and Infinity, which Python
accepts and RFC 8259 does not). The .lark and .gbnf files of one grammar must agree.
"""
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import gbnf_reference  # noqa: E402
import lark_reference  # noqa: E402

GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"
JSON_NOISE = ' \t\n\r{}[],:"\\/-+.0123456789eEtrufalsnbx\u00e9\x01'


def _random_json(rng, depth=0):
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice([0, -1, 17, 2.5, -0.25, 1e-7, 12345678901234567890])
    if kind == 1:
        return "".join(rng.choice('ab "\\/\n\t\u00e9\u2603\x7f\U0001F600')
                       for _ in range(rng.randrange(5)))
    if kind == 2:
        return rng.choice([True, False])
    if kind == 3:
        return None
    if kind in (4, 5):
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {"k%d" % i: _random_json(rng, depth + 1) for i in range(rng.randrange(4))}


def _documents(seed, n):
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        value = _random_json(rng)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5,
                          indent=rng.choice([None, 1, "\t"]))
        docs.append(text)
        chars = list(text)
        for _ in range(rng.randint(1, 2)):
            op = rng.randrange(3)
            i = rng.randrange(len(chars) + 1)
            if op == 0 and chars:
                del chars[min(i, len(chars) - 1)]
            elif op == 1:
                chars.insert(i, rng.choice(JSON_NOISE))
            elif chars:
                chars[min(i, len(chars) - 1)] = rng.choice(JSON_NOISE)
        docs.append("".join(chars))
    return docs


def _json_accepts(text):
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("ext", ["gbnf", "lark"])
def test_json_grammar_agrees_with_json_module(ext):
    path = GRAMMARS / f"json.{ext}"
    g = Grammar.from_file(path)
    text = path.read_text()
    checked = {True: 0, False: 0}
    for doc in _documents(ext, 60):
        want = _json_accepts(doc)
        if ext == "gbnf":
            got = gbnf_reference.recognizes(g, doc)
        else:
            got = lark_reference.lark_accepts(text, doc)
            assert lark_reference.recognizes(g, doc, "greedy") == want, repr(doc)
        assert got == want, repr(doc)
        checked[want] += 1
    assert checked[True] > 10 and checked[False] > 10


@pytest.mark.parametrize("name, alphabet", [
    ("arithmetic", "12.+-*/() \n"),
    ("csv", 'a,"\n\r '),
    ("lines", "a\n\r"),
])
def test_lark_and_gbnf_twins_agree(name, alphabet):
    lark_g = Grammar.from_file(GRAMMARS / f"{name}.lark")
    gbnf_g = Grammar.from_file(GRAMMARS / f"{name}.gbnf")
    rng = random.Random(name)
    for _ in range(250):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert lark_reference.recognizes(lark_g, s, "greedy") == \
            gbnf_reference.recognizes(gbnf_g, s), repr(s)
