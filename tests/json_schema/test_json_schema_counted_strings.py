"""Counted JSON strings built directly equal the regex pipeline's automata, state for state."""
from __future__ import annotations

import numpy as np
import pytest

from constrained.automata.byte_dfa import _build_general
from constrained.grammar.json_schema.chars import ANY_CHAR
from constrained.grammar.json_schema.counted_strings import counted_string_automaton

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
    assert direct.initial == general.initial
    assert np.array_equal(direct.transitions, general.transitions)
    assert np.array_equal(direct.accepting, general.accepting)


@pytest.mark.parametrize("pattern", ['"' + ANY_CHAR + '*"', '"a{3}"', ANY_CHAR + "{5,2}",
                                     "[0-9]{1,3}", '"' + ANY_CHAR + "{2}x"])
def test_other_patterns_are_left_to_the_pipeline(pattern):
    assert counted_string_automaton(pattern) is None
