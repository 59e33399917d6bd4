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
