"""Counted JSON strings built directly equal the regex pipeline's automata, state for state."""
from __future__ import annotations

import numpy as np
import pytest

from constrained.automata.byte_dfa import _build_general
from constrained.automata.determinize import number_canonically
from constrained.grammar.json_schema.chars import ANY_CHAR
from constrained.grammar.json_schema.counted_strings import (counted_string_automaton,
                                                            counted_string_facts)

CASES = [(lo, hi) for lo in range(4) for hi in [None, lo, lo + 1, lo + 3]] + \
    [(0, 32), (32, 32), (7, None), (10, 20), (0, 64), (20, None), (5, 70)]


@pytest.mark.parametrize("lo, hi", CASES)
@pytest.mark.parametrize("opening, closing", [(True, True), (True, False), (False, True),
                                              (False, False)])
def test_counted_string_automaton_is_the_pipelines(lo, hi, opening, closing):
    counts = f"{{{lo}}}" if hi == lo else (f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}")
    pattern = ('"' if opening else "") + ANY_CHAR + counts + ('"' if closing else "")
    direct = counted_string_automaton(pattern)
    general = _build_general(pattern, 100_000)
    assert direct is not None
    # minimal and trimmed: numbered canonically, the regex pipeline's automaton
    table, accepting, initial = number_canonically(direct.transitions, direct.accepting,
                                                   direct.initial)
    assert (initial, len(accepting)) == (general.initial, direct.n_states)
    assert np.array_equal(table, general.transitions)
    assert np.array_equal(accepting, general.accepting)
    # its byte classes, given with the automaton, are those its table's columns make
    assert np.array_equal(direct.byte_classes, general.byte_classes)
    assert direct.key != general.key and direct.key == counted_string_automaton(pattern).key


@pytest.mark.parametrize("pattern", ['"' + ANY_CHAR + '*"', '"a{3}"', ANY_CHAR + "{5,2}",
                                     "[0-9]{1,3}", '"' + ANY_CHAR + "{2}x"])
def test_other_patterns_are_left_to_the_pipeline(pattern):
    assert counted_string_automaton(pattern) is None


def _pattern(lo, hi, opening, closing):
    counts = f"{{{lo}}}" if hi == lo else (f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}")
    return ('"' if opening else "") + ANY_CHAR + counts + ('"' if closing else "")


def test_state_futures_name_equal_languages_across_chains():
    """Every state of a counted string's automaton has a name of its future (what lexers key
    root walks by): states of any chains with equal names accept the same texts from there
    on, by the automata's own canonical future digests; and chains with as many characters
    left share names."""
    by_name: dict = {}
    for lo, hi in CASES + [(3, 9), (0, 9), (6, 12), (1, None), (2, None)]:
        for opening in (True, False):
            for closing in (True, False):
                dfa = counted_string_automaton(_pattern(lo, hi, opening, closing))
                for state in range(dfa.n_states):
                    name, digest = dfa.given_future(state), dfa.future_key(state)
                    assert name is not None
                    assert by_name.setdefault(name, digest) == digest, (lo, hi, state, name)
    # a position of {0,9} and one of {3,12} with 9 characters left, two of {lo,} past lo
    a = counted_string_automaton(_pattern(0, 9, True, True))
    b = counted_string_automaton(_pattern(3, 12, True, True))
    names_a = {a.given_future(s) for s in range(a.n_states)}
    names_b = {b.given_future(s) for s in range(b.n_states)}
    assert len(names_a & names_b) >= a.n_states - 1     # all but the one before the quote


@pytest.mark.parametrize("lo, hi", CASES)
@pytest.mark.parametrize("opening, closing", [(True, True), (True, False), (False, True),
                                              (False, False)])
def test_facts_from_the_pattern_are_the_automatons(lo, hi, opening, closing):
    """What a counted string's language holds is read off its pattern (its automaton waits
    for a lexer) and is what the automaton holds; past the state bound nothing is vouched."""
    pattern = _pattern(lo, hi, opening, closing)
    dfa = counted_string_automaton(pattern)
    facts = counted_string_facts(pattern, 100_000)
    texts = any(dfa.transitions[dfa.initial] >= 0)      # (trimmed: a byte leads to a text)
    assert (facts.texts, facts.empty_text) == (texts, bool(dfa.accepting[dfa.initial]))
    # vouched only within a state limit the automaton keeps to
    assert counted_string_facts(pattern, dfa.n_states - 1) is None


def test_a_schemas_counted_strings_wait_for_a_lexer():
    """In a process that has not built its automaton yet (one built before is read at once)."""
    from constrained import Grammar
    from constrained.automata import byte_dfa
    from constrained.cfg.prepare import prepare_grammar
    byte_dfa._build.cache_clear()
    grammar = Grammar.from_json_schema({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 40}}, "required": ["name"]})
    prepared = prepare_grammar(grammar)
    at = [i for i, n in enumerate(prepared.terminal_names)
          if grammar.terminals[n].pattern.endswith('{0,40}"')]
    assert at and all(prepared.dfas._built[i] is None for i in at)
    assert prepared.dfas[at[0]].accepts(b'"' + b"x" * 40 + b'"')
    assert not prepared.dfas[at[0]].accepts(b'"' + b"x" * 41 + b'"')
