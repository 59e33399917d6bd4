"""The reference recognizers themselves, checked against brute force and against Lark."""
import itertools
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import gbnf_reference  # noqa: E402
import lark_reference  # noqa: E402
from earley_reference import ReferenceRecognizer  # noqa: E402

GBNF_SMALL = [
    ('root ::= "(" root ")" root | ""\n', "()x"),
    ('root ::= ("ab" | "c"){2,3}\n', "abcx"),
    ('root ::= [ab]* "b" [^b]?\n', "abc"),
    ('root ::= root "a" | "b" | ( "c" root )\n', "abc"),
]
LARK_SMALL = [
    ('start: A B\nA: /a+/\nB: "ab"\n', "ab"),
    ('start: x+\nx: "a" | "ab" | "b"\n%ignore " "\n', "ab "),
    ('start: NUM ("+" NUM)*\nNUM: /[0-9]+/\n%ignore /[ ]+/\n', "1+ "),
]


def _strings(alphabet, max_len):
    for n in range(max_len + 1):
        for t in itertools.product(alphabet, repeat=n):
            yield "".join(t)


def _check_viability_against_brute_force(rec, alphabet, lexing, max_len=6, slack=3):
    sentences = {s for s in _strings(alphabet, max_len) if rec.recognizes(s, lexing)}
    for p in _strings(alphabet, max_len - slack):
        completes = any(s.startswith(p) for s in sentences)
        viable = rec.is_viable_prefix(p, lexing)
        if completes:
            assert viable, (lexing, p)
        else:
            assert not viable, (lexing, p)


@pytest.mark.parametrize("grammar, alphabet", GBNF_SMALL)
def test_gbnf_viability_matches_brute_force(grammar, alphabet):
    rec = ReferenceRecognizer(Grammar.from_gbnf(grammar))
    _check_viability_against_brute_force(rec, alphabet, "any")
    _check_viability_against_brute_force(rec, alphabet, "greedy")


@pytest.mark.parametrize("grammar, alphabet", LARK_SMALL)
def test_lark_viability_matches_brute_force(grammar, alphabet):
    rec = ReferenceRecognizer(Grammar.from_lark(grammar))
    _check_viability_against_brute_force(rec, alphabet, "any", max_len=5, slack=2)
    _check_viability_against_brute_force(rec, alphabet, "greedy", max_len=5, slack=2)


def test_any_lexing_matches_lark_dynamic_complete():
    text = 'start: x+\nx: "a" | "ab" | "b"\n%ignore " "\n'
    g = Grammar.from_lark(text)
    for s in _strings("ab ", 5):
        want = lark_reference.lark_accepts(text, s, lexer="dynamic_complete")
        assert lark_reference.recognizes(g, s, "any") == want, s


def test_greedy_lexing_is_stricter_than_any():
    text = 'start: A B\nA: /a+/\nB: "ab"\n'
    assert lark_reference.recognizes(text, "aab", "any")
    assert not lark_reference.recognizes(text, "aab", "greedy")
    assert not lark_reference.lark_accepts(text, "aab")
    # "a" is a prefix of "aab", but greedy lexing can never finish A before B's "a"
    assert lark_reference.is_viable_prefix(text, "a", "any")
    assert not lark_reference.is_viable_prefix(text, "a", "greedy")


def test_greedy_sentences_parse_with_lark():
    path = Path(__file__).resolve().parents[2] / "grammars" / "arithmetic.lark"
    text = path.read_text()
    g = Grammar.from_file(path)
    rng = random.Random(7)
    seen = 0
    for _ in range(300):
        s = "".join(rng.choice("12+-*/(). ") for _ in range(rng.randint(1, 7)))
        greedy = lark_reference.recognizes(g, s, "greedy")
        if greedy:
            seen += 1
            assert lark_reference.lark_accepts(text, s), s
        if greedy or lark_reference.lark_accepts(text, s):
            assert lark_reference.recognizes(g, s, "any"), s
    assert seen > 5


def test_gbnf_wrappers_accept_text_or_grammar():
    src = 'root ::= "a"+\n'
    assert gbnf_reference.recognizes(src, "aaa")
    assert gbnf_reference.is_viable_prefix(Grammar.from_gbnf(src), "")
    assert not gbnf_reference.is_viable_prefix(src, "b")


def test_greedy_viability_on_arithmetic_prefixes():
    path = Path(__file__).resolve().parents[2] / "grammars" / "arithmetic.lark"
    g = Grammar.from_file(path)
    doc = "(1.5 - 2) / (3 + -4)"
    for k in range(len(doc) + 1):
        assert lark_reference.is_viable_prefix(g, doc[:k]), doc[:k]
    for bad in ("1 2", "1.", ")", "1+*"):
        if bad == "1.":
            assert lark_reference.is_viable_prefix(g, bad)  # "1.5"
        else:
            assert not lark_reference.is_viable_prefix(g, bad), bad
