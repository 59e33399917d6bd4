"""Literal patterns built as tries give exactly the arrays of the general regex pipeline."""
import random

import numpy as np
import pytest

from constrained.automata.byte_dfa import _build_general, regex_to_byte_dfa
from constrained.automata.literal_dfa import literal_alternatives, literals_dfa
from constrained.errors import LimitExceededError

LITERALS = ['"name"', ",", '"a\\.b"', '(?:"x"|"yz")', '(?:"scriptures"|"historical records")',
            '"caf\u00e9 \u6f22\u5b57"', '"quote \\" and \\\\ slash"', "a|ab|abc|b", "abc|xbc|bc",
            '"\U0001f600"', "(?:-|\\+)", "x y", '"it\'s"', "#", "~!@%&=:;<>,/'`"]
NOT_LITERAL = ["a*", "[ab]", "\\d", "a|", "|a", "(?:a)|(?:b)", "a.b", "(?i:ab)", "", "(?:)",
               "a{2}", "^a", "a$", "\\n", "\\x41", "(a)"]


@pytest.mark.parametrize("pattern", LITERALS)
def test_literals_equal_the_general_pipeline(pattern):
    assert literal_alternatives(pattern) is not None
    fast = regex_to_byte_dfa(pattern)
    slow = _build_general(pattern, 10_000)
    assert fast.initial == slow.initial
    assert np.array_equal(fast.transitions, slow.transitions)
    assert np.array_equal(fast.accepting, slow.accepting)


@pytest.mark.parametrize("pattern", NOT_LITERAL)
def test_other_patterns_take_the_general_pipeline(pattern):
    assert literal_alternatives(pattern) is None


def test_random_literal_alternations_equal_the_general_pipeline():
    rng = random.Random(5)
    alphabet = 'ab."\\é -'
    for _ in range(200):
        words = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
                 for _ in range(rng.randint(1, 5))}
        pattern = "(?:" + "|".join(
            "".join("\\" + c if c in '.\\' else c for c in w) for w in sorted(words)) + ")"
        fast = regex_to_byte_dfa(pattern)
        slow = _build_general(pattern, 10_000)
        assert np.array_equal(fast.transitions, slow.transitions), pattern
        assert np.array_equal(fast.accepting, slow.accepting), pattern


def test_tries_over_the_state_limit_are_left_to_the_general_pipeline():
    assert literals_dfa([b"abcdef"], 4) is None
    assert literals_dfa([b"abc", b"xyz"], 4) is None
    with pytest.raises(LimitExceededError):
        regex_to_byte_dfa("abcdefgh|xyzuvw", max_states=5)
