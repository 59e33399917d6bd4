"""Fewest-token completions and the tight budget mask (constrained.decoding.shortest).

Oracle: a plain breadth-first search over token steps that steps every allowed token of a small
vocabulary from every state (no grouping of tokens by what they do), with states compared by
the matcher's exact state key. From states reached by random walks, the engine's distance must
equal the oracle's, its plan must complete the text, and its budget mask must allow exactly the
tokens whose next state the oracle can complete in the tokens left.
"""
from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, unpack_bitmask
from constrained.decoding.budget import state_key
from constrained.decoding.byte_tokens import accepts_tokens
from constrained.decoding.shortest import ShortestCompletion

PIECES = [b'{"', b'":', b'"}', b'"]', b"]}", b", ", b'","', b"12", b"true", b"null", b'": "',
          b"ab", b"  ", b"))", b"+1"]
TOKENS = [bytes([b]) for b in range(256)] + PIECES + [b"<eos>"]
EOS = len(TOKENS) - 1
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[EOS], special_token_ids=[EOS],
                                    name="shortest-test")

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
    "n": {"type": "integer"}}, "required": ["name", "tags"], "additionalProperties": False}
GRAMMARS = {
    "schema": lambda: Grammar.from_json_schema(SCHEMA),
    "schema_any_order": lambda: Grammar.from_json_schema(SCHEMA, property_order="any"),
    # keys that may repeat in the grammar alone: the relaxed search's path can write one twice
    "two_pattern_keys": lambda: Grammar.from_json_schema(
        {"type": "object", "minProperties": 2, "patternProperties": {"^[ab]+$": {"type": "null"}},
         "additionalProperties": False}, property_order="any"),
    "arithmetic": lambda: Grammar.from_lark(r'''
?start: sum
?sum: atom | sum "+" atom
?atom: NUMBER | "(" sum ")"
NUMBER: /[0-9]+/
%ignore " "
'''),
    "regex": lambda: Grammar.from_regex(r'\[(ab|[0-9]+)(, (ab|[0-9]+))*\]'),
}


def _allowed(m):
    bm = allocate_token_bitmask(VOCAB.size)
    m.fill_next_token_bitmask(bm)
    return [t for t in np.nonzero(unpack_bitmask(bm, VOCAB.size))[0].tolist() if t != EOS]


def _oracle_distance(m, limit):
    """Fewest tokens to a complete text (at most ``limit``), or None."""
    if m.is_accepting():
        return 0
    seen = {state_key(m)}
    queue = deque([[]])
    while queue:
        path = queue.popleft()
        if len(path) >= limit:
            continue
        for t in path:
            assert m.accept_token(t)
        try:
            for t in _allowed(m):
                assert m.accept_token(t)
                done, key = m.is_accepting(), state_key(m)
                m.rollback(1)
                if done:
                    return len(path) + 1
                if key not in seen:
                    seen.add(key)
                    queue.append(path + [t])
        finally:
            if path:
                m.rollback(len(path))
    return None


def _walk_states(cg, rng, n):
    """Matchers at states reached by random walks (fresh matcher each)."""
    out = []
    for _ in range(n):
        m = cg.matcher()
        for _ in range(rng.randrange(0, 6)):
            allowed = _allowed(m)
            if not allowed:
                break
            assert m.accept_token(rng.choice(allowed))
        out.append(m)
    return out


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_distances_and_plans_match_a_plain_search(name):
    cg = compile_grammar(GRAMMARS[name](), VOCAB)
    search = ShortestCompletion(VOCAB, max_states=100_000)
    rng = random.Random(name)
    for m in _walk_states(cg, rng, 12):
        want = _oracle_distance(m, 6)
        got = search.distance(m, 6)
        assert got.known
        if want is None:
            assert got.tokens is None and got.exceeds
            continue
        assert got.tokens is not None and len(got.tokens) == want
        for t in got.tokens:
            assert m.accept_token(t)
        assert m.is_accepting()


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_budget_mask_matches_a_plain_search(name):
    cg = compile_grammar(GRAMMARS[name](), VOCAB)
    search = ShortestCompletion(VOCAB, max_states=100_000)
    rng = random.Random(name + "mask")
    checked = 0
    for m in _walk_states(cg, rng, 6):
        for remaining in (1, 2, 3, 5):
            mask = search.budget_mask(m, remaining)
            assert mask is not None
            assert bool(mask[EOS]) == (m.is_accepting() and remaining >= 1)
            for t in _allowed(m):
                assert m.accept_token(t)
                d = _oracle_distance(m, max(0, remaining - 2)) if remaining >= 2 else None
                m.rollback(1)
                assert bool(mask[t]) == (d is not None), (t, remaining)
                checked += 1
    assert checked > 0


def test_a_relaxed_completion_that_repeats_a_key_is_not_taken():
    """From ``{"a":null`` the grammar alone completes shortest by writing ``"a"`` again; the
    distance must come from completions without a repeated key (the oracle's)."""
    cg = compile_grammar(GRAMMARS["two_pattern_keys"](), VOCAB)
    m = cg.matcher()
    assert m.accept_bytes(b'{"a":null')
    search = ShortestCompletion(VOCAB, max_states=100_000)
    loose = search.distance(m.relaxed(), 8)
    assert loose.tokens is not None
    assert not accepts_tokens(m, loose.tokens, True)       # the relaxed path repeats "a"
    got = ShortestCompletion(VOCAB, max_states=100_000).distance(m, 8)
    assert got.tokens is not None and len(got.tokens) == _oracle_distance(m, 8)
    assert accepts_tokens(m, got.tokens, True)


def test_limits_make_the_answer_unknown_not_wrong():
    cg = compile_grammar(GRAMMARS["schema"](), VOCAB)
    m = cg.matcher()
    small = ShortestCompletion(VOCAB, max_states=2)
    got = small.distance(m, 30)
    assert not got.known
    full = ShortestCompletion(VOCAB, max_states=100_000).distance(m, 30)
    assert full.tokens is not None


@pytest.mark.parametrize("name", ["schema", "schema_any_order", "arithmetic"])
def test_looping_bytes_leave_the_state_as_it_is(name):
    """The bytes a context-free matcher names as looping leave its exact state unchanged
    (checked by stepping each one); inside a string body they are every byte that does."""
    cg = compile_grammar(GRAMMARS[name](), VOCAB)
    states = _walk_states(cg, random.Random(7), 60)
    bodies = [b'{"name": "x', b'{"name": "', b'{"name": "", "tags": ["a b', b'{"name": "\\n']
    if name != "arithmetic":
        for text in bodies:
            m = cg.matcher()
            assert m.accept_bytes(text)
            states.append(m)
    for m in states:
        key = state_key(m)
        probed = np.zeros(256, dtype=bool)
        for b in range(256):
            if m.accept_bytes(bytes((b,))):
                probed[b] = state_key(m) == key
                m.rollback(1)
        loop = m.looping_bytes()
        assert not (loop & ~probed).any()
    for m in states[len(states) - len(bodies):] if name != "arithmetic" else ():
        loop = m.looping_bytes()
        assert loop[ord("a")] and not loop[ord('"')]
