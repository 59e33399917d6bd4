"""Cutting bytes into tokens a matcher accepts (constrained.decoding.byte_tokens), and plans cut
with spaces the grammar takes (constrained.decoding.budget).

Oracle for the spaced cut: every way to write the text with single spaces before some of its
bytes, each cut into tokens every way, kept when the matcher accepts it to a complete sentence;
the fewest tokens among them must be what ``fewest_spaced`` returns (or it returns None when the
plain cut is as short).
"""
from __future__ import annotations

import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.decoding.budget import CompletionPlanner
from constrained.decoding.byte_tokens import ByteTokenizer

PIECES = [b'{"', b'":', b' []', b'"}', b" 0", b"}}", b" {", b' "', b" bc"]
TOKENS = [bytes([b]) for b in range(256)] + PIECES + [b"<eos>"]
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[len(TOKENS) - 1],
                                    special_token_ids=[len(TOKENS) - 1], name="byte-tokens-test")
TOK = ByteTokenizer.of(VOCAB)


def _cuts(text: bytes):
    """Every cut of ``text`` into vocabulary tokens (ids)."""
    if not text:
        yield []
        return
    for size in range(1, min(len(text), 3) + 1):
        tid = TOK._ids.get(text[:size])
        if tid is not None:
            for rest in _cuts(text[size:]):
                yield [tid] + rest


def _writings(matcher, data: bytes, i: int = 0, text: bytes = b""):
    """Every writing of ``data[i:]`` with single spaces before some bytes that the matcher
    (at ``text``) accepts to a complete sentence, as whole texts."""
    if i == len(data):
        if matcher.is_accepting():
            yield text
        return
    for piece in (data[i:i + 1], b" " + data[i:i + 1]):
        if matcher.accept_bytes(piece):
            yield from _writings(matcher, data, i + 1, text + piece)
            matcher.rollback(1)


def _oracle(matcher, data: bytes) -> int | None:
    """The fewest tokens over every spaced writing of ``data`` the matcher completes on."""
    best = None
    for text in list(_writings(matcher, data)):
        for cut in _cuts(text):
            if best is not None and len(cut) >= best:
                continue
            n = 0
            for t in cut:
                if not matcher.accept_token(t):
                    break
                n += 1
            ok = n == len(cut) and matcher.is_accepting()
            if n:
                matcher.rollback(n)
            if ok:
                best = len(cut)
    return best


GRAMMARS = {
    "array member": ({"type": "object", "properties": {"a": {"type": "array"}},
                      "required": ["a"]}, b'{"a":[]}'),
    "nested": ({"type": "object", "properties": {"b": {"type": "object", "properties": {
        "c": {"type": "array", "items": {"type": "integer"}}}, "required": ["c"]}},
        "required": ["b"]}, b'{"b":{"c":[]}}'),
}


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_spaced_cut_is_the_fewest_over_every_spaced_writing(name):
    schema, data = GRAMMARS[name]
    m = compile_grammar(Grammar.from_json_schema(schema), VOCAB).matcher()
    plain = TOK.fewest(m, data)
    spaced = TOK.fewest_spaced(m, data)
    want = _oracle(m, data)
    assert plain is not None and want is not None
    assert want < len(plain)                   # the spaces pay in these grammars
    assert spaced is not None and len(spaced) == want
    n = 0
    for t in spaced:
        assert m.accept_token(t)
        n += 1
    assert m.is_accepting()
    m.rollback(n)
    assert CompletionPlanner(TOK).plan(m) == spaced


@pytest.mark.parametrize("pattern", [r"abc|a bbc", r"abc|a bcc"])
def test_a_space_that_changes_what_may_follow_is_not_kept(pattern):
    """After ``a`` the grammar takes a space, and `` bc`` would cut ``abc`` into two tokens
    instead of three; but ``a bc`` is no sentence (refused, or a prefix of ``a bcc`` only), so
    the spaced cut is refused and the plan keeps the plain one."""
    m = compile_grammar(Grammar.from_regex(pattern), VOCAB).matcher()
    assert TOK._cut(b"abc", frozenset([1])) == [ord("a"), TOKENS.index(b" bc")]
    assert TOK.fewest_spaced(m, b"abc") is None
    plan = CompletionPlanner(TOK).plan(m)
    assert plan is not None and VOCAB.decode(plan) == b"abc" and len(plan) == 3


def test_cuts_leave_the_matcher_where_it_was():
    m = compile_grammar(Grammar.from_json_schema(GRAMMARS["nested"][0]), VOCAB).matcher()
    assert m.accept_bytes(b'{"b":')
    steps = m.n_steps
    TOK.fewest(m, b'{"c":[]}}')
    TOK.fewest_spaced(m, b'{"c":[]}}')
    TOK.fewest_spaced(m, b'{"c":x}}')          # not a completion: refused part way
    assert m.n_steps == steps
