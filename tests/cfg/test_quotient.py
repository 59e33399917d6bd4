"""The right quotient of a grammar by a suffix (constrained.cfg.quotient), against its definition.

Oracle: the engine's own runtime on the whole text. For every grammar and suffix, every text
``x`` from a generated set must be a sentence of the quotient exactly when ``x + suffix`` is a
sentence of the grammar. Suffixes are cut from documents of each grammar at random places (so
most admit a middle) or are short random pieces; texts are documents' heads and random
concatenations of nearby pieces.
"""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from constrained import Grammar
from constrained.cfg.prepare import prepare_grammar
from constrained.cfg.quotient import right_quotient
from constrained.cfg.runtime import Runtime
from constrained.errors import EmptyLanguageError, LimitExceededError

from cfg_grammars import GRAMMARS

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "grammars_samples"


def _runtime(grammar: Grammar) -> Runtime:
    return Runtime(prepare_grammar(grammar))


def _accepts(runtime: Runtime, text: bytes) -> bool:
    state = runtime.step(runtime.initial, text)
    return state is not None and runtime.is_accepting(state)


def _check(grammar: Grammar, suffix: bytes, texts) -> int:
    """Compares the quotient with its definition on ``texts``; returns how many fit."""
    base = _runtime(grammar)
    try:
        quotient = _runtime(right_quotient(grammar, suffix))
    except EmptyLanguageError:
        quotient = None
    fits = 0
    for x in texts:
        want = _accepts(base, x + suffix)
        got = quotient is not None and _accepts(quotient, x)
        assert got == want, (x, suffix, want)
        fits += want
    return fits


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_quotient_of_hand_made_grammars(name):
    text, docs = GRAMMARS[name]
    grammar = Grammar.from_lark(text)
    raw = [d.encode() for d in docs]
    if name == "unicode":
        alphabet = sorted({c.encode() for d in docs for c in d})[:8]
    else:
        alphabet = sorted({bytes([b]) for d in raw for b in d} | {b" "})[:9]
    rng = random.Random(name)
    suffixes = set()
    for d in raw:
        suffixes.update(d[len(d) - k:] for k in range(min(len(d), 8) + 1))
        for _ in range(3):
            i = rng.randrange(len(d) + 1)
            suffixes.add(d[i:i + rng.randrange(1, 6)])
    texts = [b"".join(c) for n in range(4) for c in itertools.product(alphabet, repeat=n)]
    total = sum(_check(grammar, s, texts) for s in sorted(suffixes))
    assert total > 0


SHIPPED = ["arithmetic.gbnf", "arithmetic.lark", "c_subset.lark", "csv.gbnf", "json.gbnf",
           "json.lark", "lines.lark", "pgn.lark"]


@pytest.mark.parametrize("file", SHIPPED)
def test_quotient_of_shipped_grammars_at_document_cuts(file):
    grammar = Grammar.from_file(ROOT / "grammars" / file)
    docs = [p.read_bytes() for p in sorted((SAMPLES / file.split(".")[0] / "valid").iterdir())]
    rng = random.Random(file)
    total = 0
    for doc in docs[:4]:
        for _ in range(6):
            j = rng.randrange(len(doc) + 1)
            pieces = sorted({doc[k:k + rng.randrange(1, 4)] for k in range(max(0, j - 10), j)}
                            | {b" ", b"\n"})
            head = doc[:max(0, j - rng.randrange(0, 8))]
            texts = {doc[:j]} | {head + b"".join(c) for n in range(3)
                                 for c in itertools.product(pieces, repeat=n)}
            total += _check(grammar, doc[j:], sorted(texts))
    assert total >= 24    # every document's own head fits at least


def test_quotient_keeps_the_suffix_lexemes_whole():
    """Lexemes that run across the cut: a number continued by the suffix, a comment that
    would swallow the suffix, whitespace on both sides of the cut."""
    json_lark = Grammar.from_lark(GRAMMARS["json"][0])
    assert _check(json_lark, b"2]", [b"[1", b"[", b"[1 ", b"[1,"]) == 3
    c = Grammar.from_lark(r'''
start: stmt+
stmt: NAME "=" NUMBER ";"
NAME: /[a-z]+/
NUMBER: /[0-9]+/
%ignore /[ \n]+/
%ignore /\/\/[^\n]*/
''')
    # "//" before "1;" would comment the suffix out; "x = //\n" is fine
    assert _check(c, b"1;", [b"x = ", b"x = //", b"x = //\n", b"x =", b"x = 2"]) == 4
    assert _check(c, b" \nx = 1;", [b"", b" ", b"y = 2;", b"y = 2; ", b"y = 2;//c",
                                   b"y = 2", b"y"]) == 5


def test_the_last_lexeme_may_be_extended_by_another_terminal():
    """Documented limit: a keyword the suffix's first byte turns into an identifier. The
    quotient keeps ``x = if`` before ``y;`` (IF then NAME), the grammar reads ``ify``."""
    grammar = Grammar.from_lark(r'''
start: stmt+
stmt: NAME "=" expr ";"
expr: NAME "!" | "if" NAME
NAME: /[a-z]+/
%ignore " "
''')
    quotient = _runtime(right_quotient(grammar, b"y;"))
    base = _runtime(grammar)
    assert _accepts(quotient, b"x = if") and not _accepts(base, b"x = ify;")
    assert _accepts(quotient, b"x = if ") and _accepts(base, b"x = if y;")


def test_suffixes_no_text_can_precede():
    grammar = Grammar.from_lark(GRAMMARS["json"][0])
    with pytest.raises(EmptyLanguageError):
        right_quotient(grammar, b"}}{")
    assert right_quotient(grammar, b"") is grammar


def test_long_suffixes_hit_the_chart_limit():
    grammar = Grammar.from_lark(GRAMMARS["json"][0])
    suffix = b"1" + b", 1" * 2000 + b"]"
    quotient = right_quotient(grammar, suffix)       # linear in the suffix: fine
    assert _accepts(_runtime(quotient), b"[")
    with pytest.raises(LimitExceededError, match="max_chart_items"):
        right_quotient(grammar, suffix, max_chart_items=1000)


def test_long_lexemes_in_the_suffix_stay_within_the_work_limit():
    """A field that every position of the suffix starts (quadratic lexer walks) raises the
    typed limit error instead of running on."""
    grammar = Grammar.from_lark(r'''
start: line+
line: FIELD ("," FIELD)* "\n"
FIELD: /[^,\n]+/
''')
    with pytest.raises(LimitExceededError, match="infill suffix"):
        right_quotient(grammar, b"a" * 5000 + b"\n", max_chart_items=100_000)
