"""Byte classes in C (``column_classes``, ``class_columns``) against equal columns found in
numpy, hash collisions included, and the DFA cache key that hashes a table by class."""
import numpy as np
import pytest

from constrained.automata._dfa_tables import class_columns, column_classes, future_rows
from constrained.automata.byte_dfa import ByteDFA, regex_to_byte_dfa

_FNV_PRIME = 0x01000193
_FNV_START = 0x811C9DC5


def _reference_classes(trans: np.ndarray) -> np.ndarray:
    """Bytes with equal columns share a class, numbered in order of their first byte."""
    out = np.empty(256, dtype=np.int32)
    first: dict[bytes, int] = {}
    for b in range(256):
        out[b] = first.setdefault(trans[:, b].tobytes(), len(first))
    return out


def _random_table(rng: np.random.Generator, n: int, values: int) -> np.ndarray:
    # few distinct columns, as in real automata, then some noise
    pool = rng.integers(-1, values, size=(n, rng.integers(1, 12)), dtype=np.int32)
    trans = pool[:, rng.integers(0, pool.shape[1], size=256)]
    flips = rng.integers(0, 256, size=rng.integers(0, 4))
    trans[rng.integers(0, n, size=len(flips)), flips] = rng.integers(-1, values,
                                                                      size=len(flips))
    return np.ascontiguousarray(trans, dtype=np.int32)


@pytest.mark.parametrize("seed", range(40))
def test_classes_match_equal_columns(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    trans = _random_table(rng, n, n)
    want = _reference_classes(trans)
    got = np.zeros(256, dtype=np.int32)
    assert column_classes(trans, got) == want.max() + 1
    assert np.array_equal(got, want)
    got2 = np.zeros(256, dtype=np.int32)
    columns = np.frombuffer(class_columns(trans, got2), dtype=np.int32)
    assert np.array_equal(got2, want)
    first_bytes = np.unique(want, return_index=True)[1]
    assert np.array_equal(columns.reshape(n, -1), trans[:, first_bytes])


def _fnv(column) -> int:
    h = _FNV_START
    for x in column:
        h = ((h ^ (int(x) & 0xFFFFFFFF)) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def test_colliding_columns_stay_apart():
    """Two different columns with the same hash (built on purpose) get different classes:
    the hash only proposes, the rows decide."""
    x0, x1 = 5, 7
    y0 = 9
    # choose the second row of column y so both columns hash alike
    y1 = (x1 ^ ((_FNV_START ^ x0) * _FNV_PRIME) ^ ((_FNV_START ^ y0) * _FNV_PRIME)) \
        & 0xFFFFFFFF
    y1 = int(np.array([y1], dtype=np.uint32).view(np.int32)[0])
    trans = np.full((2, 256), -1, dtype=np.int32)
    trans[:, 10] = (x0, x1)
    trans[:, 20] = (y0, y1)
    assert _fnv(trans[:, 10]) == _fnv(trans[:, 20])
    got = np.zeros(256, dtype=np.int32)
    assert column_classes(trans, got) == 3
    assert np.array_equal(got, _reference_classes(trans))
    assert got[10] != got[20]


def test_dfa_key_reads_the_whole_table():
    """Equal tables have equal keys however they were built; a single changed transition, an
    accepting flag or the initial state changes the key."""
    a = regex_to_byte_dfa("[a-c]x|dy")
    same = ByteDFA(a.transitions.copy(), a.accepting.copy(), a.initial, "other text")
    assert a.key == same.key
    trans = a.transitions.copy()
    row = int(np.flatnonzero((trans >= 0).any(axis=1))[0])
    byte = int(np.flatnonzero(trans[row] >= 0)[-1])
    trans[row, byte] = -1
    assert ByteDFA(trans, a.accepting.copy(), a.initial).key != a.key
    acc = a.accepting.copy()
    acc[a.initial] = not acc[a.initial]
    assert ByteDFA(a.transitions.copy(), acc, a.initial).key != a.key
    other = 1 if a.initial == 0 else 0
    assert ByteDFA(a.transitions.copy(), a.accepting.copy(), other).key != a.key
    # the same columns moved to other bytes: same class columns, other classes
    moved = np.roll(a.transitions, 1, axis=1)
    assert ByteDFA(np.ascontiguousarray(moved), a.accepting.copy(), a.initial).key != a.key


def _language_from(dfa: ByteDFA, q: int):
    """Reference: the minimal automaton of the texts accepted from ``q`` (canonical arrays)."""
    from constrained.automata.determinize import minimize
    t, a, i = minimize(dfa.transitions, dfa.accepting, q)
    return t.tobytes(), a.tobytes(), i


@pytest.mark.parametrize("pattern", ['"(?:ab|cd)*e"', "[a-c]{2,5}x?", "(ab|abc|b)+d", "(?:aa)*",
                                     'x(?:"a"|"ab"|"b")', "(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?"])
def test_future_keys_name_the_language_from_a_state(pattern):
    dfa = regex_to_byte_dfa(pattern)
    for q in range(dfa.n_states):
        for r in range(dfa.n_states):
            same = _language_from(dfa, q) == _language_from(dfa, r)
            assert (dfa.future_key(q) == dfa.future_key(r)) == same


def test_future_keys_agree_across_automata():
    """States of different automata with the same texts ahead share a key (a literal's rest;
    any key text after two different sets of declared names), others do not."""
    a, b = regex_to_byte_dfa('"abc"'), regex_to_byte_dfa('"zbc"')
    after_a, after_z = a.walk(a.initial, b'"a'), b.walk(b.initial, b'"z')
    assert a.future_key(after_a) == b.future_key(after_z)
    assert a.future_key(a.initial) != b.future_key(b.initial)
    from constrained.grammar.json_schema.keys import key_except, key_except_automaton
    one = key_except_automaton(("name", "email"), key_except(("name", "email")))
    two = key_except_automaton(("id",), key_except(("id",)))
    tail_one, tail_two = one.walk(one.initial, b'"x'), two.walk(two.initial, b'"x')
    assert one.future_key(tail_one) == two.future_key(tail_two)
    assert one.future_key(one.walk(one.initial, b'"na')) != two.future_key(tail_two)


@pytest.mark.parametrize("seed", range(6))
def test_future_rows_read_by_class_runs_equal_those_read_by_bytes(seed):
    """A row read a run of equal byte classes at a time gives the text read a byte at a
    time, for every state (random tables: any runs of equal columns will do)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    trans = _random_table(rng, n, n)
    accepting = rng.integers(0, 2, size=n).astype(np.uint8)
    classes = _reference_classes(trans)
    ends = np.append(np.flatnonzero(classes[1:] != classes[:-1]) + 1, 256).astype(np.int32)
    for q in range(n):
        assert future_rows(trans, accepting, q, ends) == future_rows(trans, accepting, q)


def test_future_rows_refuse_run_ends_that_do_not_cut_the_bytes():
    trans = np.full((1, 256), -1, dtype=np.int32)
    accepting = np.zeros(1, dtype=np.uint8)
    for ends in ([10, 5, 256], [10, 200], [0, 256], []):
        with pytest.raises(ValueError):
            future_rows(trans, accepting, 0, np.array(ends, dtype=np.int32))
