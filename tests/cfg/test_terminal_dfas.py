"""Grammar preparation: literal terminals' automata are built on first read and equal the regex
pipeline's; what preparation decides does not depend on the order the rules are defined in."""
import dataclasses

import pytest

from constrained import Grammar
from constrained.automata import regex_to_byte_dfa
from constrained.cfg.prepare import prepare_grammar
from constrained.errors import LimitExceededError
from constrained.grammar._grammar import Terminal

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string"}, "kind": {"enum": ["a", "bb", "ccc"]},
                         "inner": {"type": "object", "properties": {"deep": {"const": 7}},
                                   "required": ["deep"]}},
          "required": ["name"]}


def _prepared():
    return prepare_grammar(Grammar.from_json_schema(SCHEMA))


def test_literal_automata_are_built_on_first_read_and_equal_the_regex_pipeline():
    g = Grammar.from_json_schema(SCHEMA)
    prepared = prepare_grammar(g)
    names = prepared.terminal_names
    literal = [i for i, n in enumerate(names) if g.terminals[n].pattern.startswith('"deep')]
    assert literal, names
    assert "0 not built" not in repr(prepared.dfas)     # some automata wait for a read
    for i, name in enumerate(names):
        expected = regex_to_byte_dfa(g.terminals[name].pattern) if not (
            g.terminals[name].exclude or g.terminals[name].automaton is not None) else None
        dfa = prepared.dfas[i]
        assert prepared.dfas[i] is dfa                  # kept once built
        if expected is not None:
            assert dfa.key == expected.key, name
    assert "0 not built" in repr(prepared.dfas)


def test_reading_by_negative_index_slice_and_iteration():
    prepared = _prepared()
    n = len(prepared.dfas)
    every = list(prepared.dfas)
    assert len(every) == n and all(d is not None for d in every)
    assert prepared.dfas[-1] is every[-1]
    assert prepared.dfas[1:3] == tuple(every[1:3])
    with pytest.raises(IndexError):
        prepared.dfas[n]


def test_a_literal_too_long_for_the_state_limit_still_fails_at_preparation():
    g = Grammar(start="start", rules={"start": (("LONG",),)},
                terminals={"LONG": Terminal("LONG", "x" * 50)})
    with pytest.raises(LimitExceededError):
        prepare_grammar(g, max_dfa_states=20)
    assert prepare_grammar(g, max_dfa_states=100).dfas[0].accepts(b"x" * 50)


def test_preparation_does_not_depend_on_the_rules_order():
    g = Grammar.from_json_schema(SCHEMA, property_order="any")
    backwards = dataclasses.replace(g, rules=dict(reversed(list(g.rules.items()))))
    a, b = prepare_grammar(g), prepare_grammar(backwards)
    for field in ("terminal_names", "nonterminal_names", "lhs", "rhs", "by_lhs", "nullable",
                  "ignore", "bounded_ignore"):
        assert getattr(a, field) == getattr(b, field), field
    assert [d.key for d in a.dfas] == [d.key for d in b.dfas]


def test_masks_read_one_text_literals_without_their_automata(llama3_vocab):
    """Lexers read a literal of one text (a property name, a const) off its text: masking a
    whole document builds none of their automata."""
    import json

    import numpy as np

    from constrained.compiler import compile_grammar
    compiled = compile_grammar(Grammar.from_json_schema(SCHEMA, property_order="any"),
                               llama3_vocab)
    prepared = compiled.runtime.grammar
    texts = [i for i, w in enumerate(prepared.words) if w is not None]
    assert {prepared.words[i] for i in texts} >= {b'"name"', b'"kind"', b'"inner"', b'"deep"'}
    matcher = compiled.matcher()
    bitmask = np.zeros((llama3_vocab.size + 31) // 32, dtype=np.int32)
    ids = {tb: i for i, tb in enumerate(llama3_vocab.token_bytes)}
    text = json.dumps({"kind": "bb", "name": "x", "inner": {"deep": 7}}).encode()
    for ch in text:
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(ids[bytes((ch,))])
    assert matcher.is_accepting()
    assert all(prepared.dfas._built[i] is None for i in texts)
    for i in texts:     # read on demand, they are the texts' chains
        assert prepared.dfas[i].word == prepared.words[i]
