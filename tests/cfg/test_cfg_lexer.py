"""The union lexer's per-state facts against the product table itself."""
import itertools

import pytest

from constrained.automata.byte_dfa import cycle_states, regex_to_byte_dfa
from constrained.cfg.lexer import Lexer

PATTERNS = ["abc", "(a|bc){0,3}d?", "a*b", "[0-9]+", '"(name|nick|id)"', '"[^"\\\\]*"',
            "x(ab)+y", "é|ü{1,2}", "[ab]{2,4}", "[ \\t\\n]+"]


@pytest.mark.parametrize("terms", [c for n in (1, 2, 3) for c in
                                   itertools.combinations(range(len(PATTERNS)), n)][::3])
def test_infinite_is_the_product_reaching_a_cycle(terms):
    dfas = tuple(regex_to_byte_dfa(p) for p in PATTERNS)
    lexer = Lexer(frozenset(terms), dfas)
    want = cycle_states(lexer.trans)
    assert [lexer.infinite[q] for q in range(lexer.n_states)] == [bool(x) for x in want]
    # a second lexer of the same automata shares what the first learned
    again = Lexer(frozenset(terms), dfas)
    assert again.infinite is lexer.infinite and again.memo is lexer.memo


TEXTS = [b'"name"', b'"nick"', b'"n"', b"ab", b"\xc3\xa9t\xc3\xa9", b'"a\\"b"', b"x"]
# many keys sharing prefixes (states where a dozen chains are live at once)
KEYS = [b'"%s"' % w for w in (b"id", b"idx", b"ids", b"name", b"names", b"nick", b"n", b"type",
                              b"types", b"typed", b"tag", b"tags", b"t")]


@pytest.mark.parametrize("texts,others", [
    (TEXTS[:3], []), (TEXTS, []), (TEXTS[:2], [5, 9]), (TEXTS[3:5], [1, 2, 7]),
    ([TEXTS[0], TEXTS[0]], [4]), (KEYS, [5]), (KEYS, [4, 9]), (KEYS[::2], [3, 5, 9])])
def test_texts_read_as_chains_give_the_automata_product(texts, others):
    """A component given as its one text is the product of the text's automaton: same
    states, transitions, accepting terminals, component states and cycles."""
    dfas = tuple(regex_to_byte_dfa(p) for p in PATTERNS) + tuple(
        regex_to_byte_dfa("".join("\\" + chr(b) if chr(b) in '\\"' else chr(b) for b in t))
        if all(b < 128 for b in t) else regex_to_byte_dfa(t.decode()) for t in texts)
    assert [d.word for d in dfas[len(PATTERNS):]] == list(texts)   # chains of the texts
    words = [None] * len(PATTERNS) + list(texts)
    terms = frozenset(others) | frozenset(range(len(PATTERNS), len(dfas)))
    by_automata = Lexer(terms, dfas)
    by_texts = Lexer(terms, dfas, words=words)
    assert [isinstance(p, bytes) for p in by_texts.parts] == \
        [words[t] is not None for t in sorted(terms)]
    assert (by_texts.trans == by_automata.trans).all()
    assert (by_texts.components == by_automata.components).all()
    assert by_texts.accepting_terms == by_automata.accepting_terms
    assert by_texts.infinite == by_automata.infinite
    assert by_texts.n_states > 1


@pytest.mark.parametrize("terms", [(0, 4), (1, 2, 3), (5, 9), (6, 7, 8), (0, 1, 4, 5, 9)])
def test_class_table_steps_every_component(terms):
    """``table[q, byte_class[b]]`` is the state whose components are each component's own
    step on b (dead when all die), for every state and byte; rows and the dense view agree."""
    dfas = tuple(regex_to_byte_dfa(p) for p in PATTERNS)
    lexer = Lexer(frozenset(terms), dfas)
    order = sorted(terms)
    assert lexer.table.shape[1] == lexer.byte_class.max() + 1 < 256
    for q in range(lexer.n_states):
        comps = lexer.components[q].tolist()
        assert lexer.rows[q] == lexer.trans[q].tolist()
        for b in range(256):
            want = [dfas[t].step(c, b) for t, c in zip(order, comps)]
            nq = int(lexer.table[q, lexer.byte_class[b]])
            if all(c < 0 for c in want):
                assert nq == -1
            else:
                assert nq > 0 and lexer.components[nq].tolist() == want
