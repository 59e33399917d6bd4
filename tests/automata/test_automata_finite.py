"""Finite languages of byte DFAs: cycle detection and the list of texts, against brute force."""
import itertools
import re

import numpy as np
import pytest

from constrained.automata.byte_dfa import ByteDFA, cycle_states, regex_to_byte_dfa
from constrained.automata.finite import dfa_is_finite, dfa_texts


@pytest.mark.parametrize("pattern,finite", [
    ("abc", True), ("(a|bc){0,3}d?", True), ("[ab]{2,4}", True), ("é|ü{1,2}", True),
    ("a*", False), ("x(ab)+y", False), ("(a|b{1,3})c*", False), ("[^a]{3}", True),
])
def test_finiteness(pattern, finite):
    dfa = regex_to_byte_dfa(pattern)
    assert dfa_is_finite(dfa) == finite
    for q in range(dfa.n_states):
        assert dfa.cycle_states[q] == _reaches_cycle_by_search(dfa.transitions, q)


@pytest.mark.parametrize("pattern", ["abc", "(a|bc){0,3}d?", "[ab]{2,4}", "é|ü{1,2}", "(x|yz|)w?"])
def test_texts_are_the_language(pattern):
    dfa = regex_to_byte_dfa(pattern)
    texts = dfa_texts(dfa, 10_000)
    assert len(texts) == len(set(texts))
    alphabet = sorted({c for c in pattern if c.isalpha()})
    want = {"".join(p).encode() for n in range(8) for p in itertools.product(alphabet, repeat=n)
            if re.fullmatch(pattern, "".join(p))}
    assert set(texts) == want


def test_texts_past_the_limit_are_none():
    dfa = regex_to_byte_dfa("[ab]{1,6}")
    assert len(dfa_texts(dfa, 126)) == 126
    assert dfa_texts(dfa, 125) is None


def test_a_large_finite_language_is_counted_not_listed():
    dfa = regex_to_byte_dfa("[a-z]{1,9}")       # about 5.6e12 texts
    assert dfa_is_finite(dfa) and dfa_texts(dfa, 16_384) is None
    assert dfa_texts(regex_to_byte_dfa("[a-z]{1,2}"), 702) is not None


def test_the_empty_language_has_no_texts():
    empty = ByteDFA(np.zeros((0, 256), dtype=np.int32), np.zeros(0, dtype=bool), -1)
    assert dfa_is_finite(empty) and dfa_texts(empty, 10) == []


def _reaches_cycle_by_search(trans, q) -> bool:
    """Reference: some state reachable from ``q`` (``q`` included) lies on a cycle, i.e. can
    reach itself again."""
    def reachable(start):
        seen, todo = set(), [start]
        while todo:
            s = todo.pop()
            for t in set(trans[s].tolist()) - {-1}:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen
    return any(s in reachable(s) for s in reachable(q) | {q})


@pytest.mark.parametrize("seed", range(30))
def test_cycle_states_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    trans = np.full((n, 256), -1, dtype=np.int32)
    for s in range(n):
        for _ in range(int(rng.integers(0, 3))):
            # mostly forward edges (acyclic parts), some back edges and self-loops
            t = int(rng.integers(s, n)) if rng.random() < 0.85 else int(rng.integers(0, n))
            trans[s, int(rng.integers(0, 256))] = t
    reach = cycle_states(trans)
    for q in range(n):
        assert reach[q] == _reaches_cycle_by_search(trans, q)


def test_cycle_states_refuses_a_table_leading_outside():
    trans = np.full((2, 256), -1, dtype=np.int32)
    trans[0, 5] = 2
    with pytest.raises(ValueError):
        cycle_states(trans)
