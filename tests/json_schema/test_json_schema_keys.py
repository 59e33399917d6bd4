"""Keys other than the declared names: the automaton built from the names' trie is exactly the
DFA the regex pipeline builds from ``key_except``'s regex."""
import json
import random

import numpy as np
import pytest

from constrained import Grammar
from constrained.automata.byte_dfa import _build_general
from constrained.cfg.prepare import prepare_grammar
from constrained.errors import LimitExceededError
from constrained.grammar.json_schema.keys import key_except, key_except_automaton

NAME_SETS = [[], [""], ["a"], ["a", "ab", "b"], ["name", "age", "tags"], ["", "x y", "~!"],
             ["id", "items", "note", "paid"], ["a-b.c", "a_b", "A B", "[x]", "{y}", "1", "10"]]


def _same(a, b) -> bool:
    return (a.initial == b.initial and np.array_equal(a.transitions, b.transitions)
            and np.array_equal(a.accepting, b.accepting))


@pytest.mark.parametrize("names", NAME_SETS)
def test_trie_automaton_equals_the_regex_pipeline(names):
    pattern = key_except(names)
    assert _same(key_except_automaton(names, pattern), _build_general(pattern, 10_000))


def test_random_name_sets_equal_the_regex_pipeline():
    rng = random.Random(11)
    alphabet = "abz_- .0~"
    for _ in range(40):
        names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))
                        for _ in range(rng.randint(1, 6))})
        pattern = key_except(names)
        assert _same(key_except_automaton(names, pattern), _build_general(pattern, 10_000)), names


def test_names_outside_printable_ascii_are_left_to_the_regex_pipeline():
    for names in (["caf\u00e9"], ['a"b'], ["a/b"], ["tab\there"]):
        assert key_except_automaton(names, key_except(names)) is None


def test_the_automaton_decides_which_keys_the_schema_takes():
    schema = {"type": "object", "properties": {"id": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    g = Grammar.from_json_schema(schema)
    name = next(n for n, t in g.terminals.items() if t.automaton is not None)
    prepared = prepare_grammar(g)
    dfa = prepared.dfas[prepared.terminal_names.index(name)]
    assert dfa.accepts(json.dumps("idx").encode()) and dfa.accepts(b'"i"')
    assert not dfa.accepts(b'"id"')


def test_a_directly_built_automaton_respects_the_state_limit():
    schema = {"type": "object", "properties": {f"property_{i}": {"type": "integer"}
                                               for i in range(40)}}
    with pytest.raises(LimitExceededError):
        prepare_grammar(Grammar.from_json_schema(schema), max_dfa_states=20)
