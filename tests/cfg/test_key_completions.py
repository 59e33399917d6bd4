"""Key completions of one terminal automaton, against a brute-force listing of its texts."""
from __future__ import annotations

import json
import random
import re
from dataclasses import replace

import pytest

from constrained.automata import regex_to_byte_dfa
from constrained.cfg.key_completions import MAX_COMPLETIONS, automaton_completions


def _texts(dfa, q: int, limit: int = 64) -> set[bytes]:
    """Every text the automaton accepts from ``q`` (no cycle reachable), by depth-first
    search over bytes."""
    out, stack = set(), [(q, b"")]
    while stack:
        s, raw = stack.pop()
        if dfa.accepting[s]:
            out.add(raw)
        if len(raw) < limit:
            for b in range(256):
                nxt = dfa.step(s, b)
                if nxt >= 0:
                    stack.append((nxt, raw + bytes((b,))))
    return out


def _expected(dfa, q: int) -> set[bytes]:
    """The decoded keys the texts from ``q`` close (each text ends at its closing quote)."""
    out = set()
    for text in _texts(dfa, q):
        assert text.endswith(b'"')
        out.add(json.loads(b'"' + text).encode("utf-8"))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_literal_key_sets_match_brute_force(seed):
    rng = random.Random(seed)
    keys = {"".join(rng.choice("abé") for _ in range(rng.randint(1, 5)))
            for _ in range(rng.randint(1, 8))}
    pattern = '"(?:' + "|".join(sorted(keys)) + ')"'
    dfa = regex_to_byte_dfa(pattern)
    start = dfa.step(dfa.initial, ord('"'))
    # every state reached along some key
    states = {start}
    for k in keys:
        q = start
        for b in k.encode():
            q = dfa.step(q, b)
            states.add(q)
    for q in states:
        if dfa.accepting[q]:
            continue
        got = automaton_completions(dfa, q)
        expected = {t[:-1] for t in _texts(dfa, q)}
        assert got == expected, (pattern, q)


def test_escaped_spellings_complete_their_decoded_key():
    dfa = regex_to_byte_dfa(r'"(?:a\\u0062|c|\\u00e9)"')
    start = dfa.step(dfa.initial, ord('"'))
    assert automaton_completions(dfa, start) == _expected(dfa, start) == {b"ab", b"c", "é".encode()}


def test_too_many_or_infinitely_many_or_longer_lexemes_are_not_listed():
    many = regex_to_byte_dfa(r'"[a-z]{1,6}"')      # 26**6 texts: counted, never listed
    assert automaton_completions(many, many.step(many.initial, ord('"'))) is None
    few = regex_to_byte_dfa(r'"[a-c]{1,2}"')
    assert len(automaton_completions(few, few.step(few.initial, ord('"')))) == 12 <= MAX_COMPLETIONS
    cyclic = regex_to_byte_dfa(r'"a(?:b|c)*"')
    assert automaton_completions(cyclic, cyclic.step(cyclic.initial, ord('"'))) is None
    past = regex_to_byte_dfa(r'"ab"x')        # the lexeme goes on past the closing quote
    assert automaton_completions(past, past.step(past.initial, ord('"'))) is None
    unquoted = regex_to_byte_dfa(r'"ab|"ab"')     # a text ends without its closing quote
    assert automaton_completions(unquoted, unquoted.step(unquoted.initial, ord('"'))) is None


WORDS = ['"name"', '"a\\"b"', '"caf\\u00e9"', '"x\\\\"', '"tab\\t"', '"é"', '"a"b"', 'ab"',
         '"ab', '""', '"\\ud83d\\ude00 smile"', '"q\\"', '"k"x']


@pytest.mark.parametrize("text", WORDS)
def test_single_text_automata_answer_as_the_table_walk(text):
    """A one-text automaton answers from its text; the walk of the same table without it
    (the general path) must agree at every state."""
    dfa = regex_to_byte_dfa(re.escape(text))
    assert dfa.word == text.encode()
    plain = replace(dfa, word=None)
    for q in range(dfa.n_states):
        assert automaton_completions(dfa, q) == automaton_completions(plain, q), (text, q)
