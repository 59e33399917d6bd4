"""multipleOf: the automaton built from remainders is the automaton of the regex, and the
regex's language is the multiples (checked by value on every integer of a range)."""
import re

import numpy as np
import pytest

from constrained.automata import byte_dfa
from constrained.grammar.json_schema import multiples


@pytest.mark.parametrize("divisor", [3, 7, 12, 16, 48])
@pytest.mark.parametrize("fraction", ["", "+", "{1,3}"])
def test_direct_automaton_equals_the_regex_automaton(divisor, fraction):
    pattern = multiples.multiple_pattern(divisor, fraction)
    direct = multiples._multiples_dfa(divisor, multiples._fraction_zeros(fraction))
    general = byte_dfa._build_general(pattern, 10_000)      # the subset construction
    assert np.array_equal(direct.transitions, general.transitions)
    assert np.array_equal(direct.accepting, general.accepting)
    assert direct.initial == general.initial


@pytest.mark.parametrize("divisor", [7, 16, 48])
def test_long_patterns_compile_to_the_multiples(divisor):
    pattern = multiples.multiple_pattern(divisor, "{1,2}")
    assert len(pattern) > multiples._DIRECT_ABOVE       # the automaton came from remainders
    dfa = byte_dfa.regex_to_byte_dfa(pattern)
    for n in range(-3 * divisor - 5, 40 * divisor):
        for text in (str(n), f"{n}.0", f"{n}.00", f"{n}.000"):
            expected = n % divisor == 0 and re.fullmatch(r"-?\d+(\.0{1,2})?", text) \
                and text != "-0" and not text.startswith("-0.")
            assert dfa.accepts(text.encode()) == bool(expected), text
    assert not dfa.accepts(b"0" + str(divisor).encode())      # no leading zero
