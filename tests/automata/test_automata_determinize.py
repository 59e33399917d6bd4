"""Subset construction in C against simulating the NFA itself, on random byte NFAs (epsilon
cycles, overlapping ranges, unreachable nodes), and its limits."""
import itertools

import numpy as np
import pytest

from constrained.automata.byte_nfa import ByteNFA
from constrained.automata.determinize import determinize
from constrained.errors import LimitExceededError

_ALPHABET = (0x61, 0x62, 0x63, 0xC3, 0xFF)


def _random_nfa(rng) -> ByteNFA:
    nfa = ByteNFA(max_nodes=1000)
    n = int(rng.integers(2, 12))
    for _ in range(n):
        nfa.new_node()
    for x in range(n):
        for _ in range(int(rng.integers(0, 3))):
            lo = int(rng.choice(_ALPHABET))
            hi = min(255, lo + int(rng.integers(0, 3)))
            nfa.edges[x].append((lo, hi, int(rng.integers(n))))
        if rng.random() < 0.4:
            nfa.eps[x].append(int(rng.integers(n)))
    nfa.start, nfa.final = 0, int(rng.integers(n))
    return nfa


def _nfa_accepts(nfa: ByteNFA, data: bytes) -> bool:
    def close(nodes):
        todo, seen = list(nodes), set(nodes)
        while todo:
            for y in nfa.eps[todo.pop()]:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen
    cur = close({nfa.start})
    for b in data:
        cur = close({d for x in cur for lo, hi, d in nfa.edges[x] if lo <= b <= hi})
    return nfa.final in cur


def _dfa_accepts(trans, accepting, data: bytes) -> bool:
    s = 0
    for b in data:
        s = int(trans[s, b])
        if s < 0:
            return False
    return bool(accepting[s])


@pytest.mark.parametrize("seed", range(40))
def test_subset_construction_accepts_what_the_nfa_accepts(seed):
    rng = np.random.default_rng(seed)
    nfa = _random_nfa(rng)
    trans, accepting, initial = determinize(nfa, 10_000)
    assert initial == 0 and trans.shape == (len(accepting), 256)
    alphabet = _ALPHABET + (0x64, 0x00)
    for n in range(5):
        for word in itertools.product(alphabet, repeat=n):
            data = bytes(word)
            assert _dfa_accepts(trans, accepting, data) == _nfa_accepts(nfa, data), data


def test_subset_construction_states_are_distinct_subsets():
    # (a|b)*a(a|b)(a|b): the classic 2^3 blow-up, exactly 8 reachable subsets... plus none
    nfa = ByteNFA(max_nodes=100)
    for _ in range(5):
        nfa.new_node()
    nfa.edges[0] += [(0x61, 0x62, 0), (0x61, 0x61, 1)]
    nfa.edges[1].append((0x61, 0x62, 2))
    nfa.edges[2].append((0x61, 0x62, 3))
    nfa.start, nfa.final = 0, 3
    trans, accepting, _ = determinize(nfa, 100)
    assert len(accepting) == 8 and int(accepting.sum()) == 4
    with pytest.raises(LimitExceededError):
        determinize(nfa, 7)


def test_subset_construction_without_edges():
    nfa = ByteNFA(max_nodes=10)
    nfa.new_node()
    nfa.new_node()
    nfa.eps[0].append(1)
    nfa.start, nfa.final = 0, 1
    trans, accepting, _ = determinize(nfa, 10)
    assert len(accepting) == 1 and accepting[0] and (trans == -1).all()


def test_subset_construction_stops_at_the_compile_deadline():
    import time

    from constrained.deadline import compile_deadline
    # a(a|b){12}: 2^12 subsets, far past the first check after 256 states
    nfa = ByteNFA(max_nodes=100)
    for _ in range(14):
        nfa.new_node()
    nfa.edges[0] += [(0x61, 0x62, 0), (0x61, 0x61, 1)]
    for i in range(1, 13):
        nfa.edges[i].append((0x61, 0x62, i + 1))
    nfa.start, nfa.final = 0, 13
    with compile_deadline(0.001):
        time.sleep(0.002)
        with pytest.raises(LimitExceededError, match="compile_timeout"):
            determinize(nfa, 100_000)
    assert len(determinize(nfa, 100_000)[1]) == 1 << 13


@pytest.mark.parametrize("lo, hi, dst", [(300, 301, 1), (98, 97, 1), (97, 97, 5), (-1, 3, 1)])
def test_subset_construction_refuses_a_malformed_nfa(lo, hi, dst):
    from constrained.automata._subsets import subset_construction

    def arr(*values):
        return np.array(values, dtype=np.int32)
    with pytest.raises(ValueError, match="malformed NFA"):
        subset_construction(arr(0, 1, 1), arr(lo), arr(hi), arr(dst), arr(0, 0, 0), arr(),
                            0, 1, 10, None)
