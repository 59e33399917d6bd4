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


@pytest.mark.parametrize("seed", range(5))
def test_the_merged_trie_is_the_minimal_dfa(seed):
    from constrained.automata.determinize import minimize, number_canonically
    from constrained.automata.literal_dfa import trie_classes
    rng = random.Random(seed)
    for _ in range(100):
        # shared suffixes (merged states), prefixes of other words, the empty word, duplicates
        stems = ["".join(rng.choice("abc") for _ in range(rng.randint(0, 4))) for _ in range(3)]
        words = [(rng.choice(stems) + rng.choice(["", "x", "yx", "\u00e9"])).encode()
                 for _ in range(rng.randint(1, 8))]
        src, byte, dst, final, root = trie_classes(words)
        trans = np.full((len(final), 256), -1, dtype=np.int32)
        trans[src, byte] = dst
        got = number_canonically(trans, final, root)
        # reference: the unmerged trie, minimized by refinement
        nodes = {b""}
        for w in words:
            nodes.update(w[:i] for i in range(1, len(w) + 1))
        order = sorted(nodes, key=lambda p: (len(p), p))
        ids = {p: i for i, p in enumerate(order)}
        raw = np.full((len(order), 256), -1, dtype=np.int32)
        for p in order[1:]:
            raw[ids[p[:-1]], p[-1]] = ids[p]
        want = minimize(raw, np.array([p in set(words) for p in order]), 0)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), words
        assert len(final) == len(want[1])          # merged exactly to the minimal count


def test_minimal_trie_checks_its_input():
    from constrained.automata._tries import minimal_trie
    with pytest.raises(ValueError):
        minimal_trie([b"b", b"a"], 100)
    with pytest.raises(ValueError):
        minimal_trie([b"a", b"a"], 100)
    with pytest.raises(TypeError):
        minimal_trie(["a"], 100)
    assert minimal_trie([b"abc", b"abd"], 4) is None
    assert minimal_trie([b"abc", b"abd"], 5) is not None
    assert minimal_trie([], 1)[3] == b"\x00"          # the root alone, ending no word


def test_key_except_table_checks_its_input():
    from constrained.automata._tries import key_except_table
    fixed = np.full((2, 256), -1, dtype=np.int32)
    fixed[0, ord("a")] = 0
    fixed[0, ord('"')] = 1
    acc = np.array([0, 1], dtype=np.uint8)
    template = np.full(256, -1, dtype=np.int32)
    template[ord("a")] = 0
    base = np.zeros(256, dtype=np.int32)        # (the classes matter to other tests)
    table, accepting, classes = key_except_table([b"a"], fixed, acc, template, 1, base)
    assert len(table) == 4 * 256 * len(accepting)
    bad = fixed.copy()
    bad[1, 0] = 2                               # a transition past the fixed states
    with pytest.raises(ValueError):
        key_except_table([b"a"], bad, acc, template, 1, base)
    with pytest.raises(ValueError):
        key_except_table([b"a"], fixed, acc, template, 2, base)
    with pytest.raises(ValueError):
        key_except_table([b"b", b"a"], fixed, acc, template, 1, base)
    with pytest.raises(ValueError):
        key_except_table([b"a"], fixed[:, :255].copy(), acc, template, 1, base)
    with pytest.raises(ValueError):
        key_except_table([b"a"], fixed, acc, template, 1, base[:255].copy())
