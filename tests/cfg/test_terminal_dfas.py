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


# unions of pieces, built on first read where their pieces bound them (automata.byte_dfa.
# deferred_facts): what preparation learns of them equals what their automata hold
_PIECES = ['null', 'true|false', '"[a-z]{1,3}"', '"(?:ab|cd)*"', '-?[0-9]+', '(?:x)?', 'a*',
           '"q"', '[0-9]{2}', '"[^"]{0,4}"']


def _union_grammar(alternatives, extra=None):
    pattern = "(?:" + "|".join(f"(?:{a})" for a in alternatives) + ")"
    terminals = {"U": Terminal("U", pattern), "END": Terminal("END", ";")}
    rules = {"start": (("U", "END"),)}
    if extra:
        terminals["V"] = Terminal("V", extra)
        rules = {"start": (("U", "END"), ("V", "END"))}
    return Grammar(start="start", rules=rules, terminals=terminals), pattern


def test_unions_wait_for_a_read_and_prepare_as_if_built(monkeypatch):
    import random
    from constrained.automata import byte_dfa
    from constrained.cfg import prepare
    rng = random.Random(5)
    waited = 0
    for _ in range(120):
        alternatives = rng.sample(_PIECES, rng.randint(2, 4))
        g, pattern = _union_grammar(alternatives)
        byte_dfa._BUILT.clear()
        lazy = prepare_grammar(g)
        at = lazy.terminal_names.index("U")
        waited += lazy.dfas._built[at] is None
        byte_dfa._BUILT.clear()
        with monkeypatch.context() as m:
            m.setattr(prepare, "_deferred", lambda term, max_states: None)
            eager = prepare_grammar(g)
        assert eager.dfas._built[at] is not None
        # the same rules (optional where the union holds the empty text) and automata
        eager_dfas = list(eager.dfas)
        assert (lazy.lhs, lazy.rhs, lazy.nullable) == (eager.lhs, eager.rhs, eager.nullable)
        assert [d.key for d in lazy.dfas] == [d.key for d in eager_dfas], alternatives
        full = regex_to_byte_dfa(pattern)
        dfa = lazy.dfas[at]
        assert not dfa.accepting[dfa.initial]       # (a lexeme is never empty)
        for text in (b"null", b"true", b'"ab"', b'"abcd"', b"-12", b"x", b"aaa", b'"q"',
                     b"42", b'"zz"', b'"a'):
            assert dfa.accepts(text) == (full.accepts(text) and text != b""), (alternatives,
                                                                             text)
    assert waited > 60


def test_a_union_past_the_state_limit_is_built_at_once_and_fails_there():
    g, _ = _union_grammar(['"[a-z]{1,30}"', '"(?:ab|cd){0,40}"'])
    with pytest.raises(LimitExceededError):
        prepare_grammar(g, max_dfa_states=60)


def test_facts_of_unions_bound_their_automata():
    from constrained.automata.byte_dfa import deferred_facts
    # side by side (different first bytes): 1 + the states of both
    null_or_digits = "(?:null|[0-9]{1,5})"
    sizes = regex_to_byte_dfa("null").n_states + regex_to_byte_dfa("[0-9]{1,5}").n_states
    assert deferred_facts(null_or_digits, sizes + 1) is not None
    assert deferred_facts(null_or_digits, sizes) is None
    # a shared first byte: the product of the states (each plus one) and one more
    two_strings = '(?:"[a-c]{1,2}"|"(?:ab)*")'
    a, b = regex_to_byte_dfa('"[a-c]{1,2}"'), regex_to_byte_dfa('"(?:ab)*"')
    bound = (a.n_states + 1) * (b.n_states + 1) + 1
    assert deferred_facts(two_strings, bound) is not None
    assert deferred_facts(two_strings, bound - 1) is None
    built = regex_to_byte_dfa(two_strings, bound)
    assert built.n_states <= bound
    assert deferred_facts(two_strings, bound) is None       # built already: read it
    facts = deferred_facts("(?:(?:x)?|y)", 100)
    assert facts is not None and facts.texts and facts.empty_text
