"""Minimization in C against Moore's partition refinement written out in numpy, on random
tables (dead states, unreachable states, several byte classes) and on regex automata."""
import numpy as np
import pytest

from constrained.automata.byte_dfa import regex_to_byte_dfa
from constrained.automata.determinize import minimize


def trim(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """Reference: drop states that cannot reach acceptance (and keep the rest as they are)."""
    n = len(accepting)
    src, byte = np.nonzero(trans >= 0)
    # distinct (destination, source) pairs as one sorted int64 each: predecessors by destination
    codes = np.unique(trans[src, byte].astype(np.int64) * n + src)
    pred_dst, pred_src = np.divmod(codes, n)
    starts = np.searchsorted(pred_dst, np.arange(n + 1)).tolist()
    pred_src = pred_src.tolist()
    live = accepting.copy()
    stack = np.nonzero(live)[0].tolist()
    while stack:
        d = stack.pop()
        for s in pred_src[starts[d]:starts[d + 1]]:
            if not live[s]:
                live[s] = True
                stack.append(s)
    if not live[initial]:
        return np.zeros((0, 256), np.int32), np.zeros(0, bool), -1
    new_id = np.full(n, -1, dtype=np.int32)
    new_id[live] = np.arange(int(live.sum()), dtype=np.int32)
    kept = trans[live]
    out = np.where(kept >= 0, new_id[np.maximum(kept, 0)], -1).astype(np.int32)
    return out, accepting[live], int(new_id[initial])


def _moore(trans, accepting, initial):
    """Reference: Moore refinement on the full 256 columns, dead rows kept as states, then
    the same canonical breadth-first numbering."""
    n = len(accepting)
    classes = accepting.astype(np.int64)
    k = len(np.unique(classes))
    while True:
        succ = np.where(trans >= 0, classes[np.maximum(trans, 0)], -1)
        sig = np.concatenate([classes[:, None], succ], axis=1)
        _, classes = np.unique(sig, axis=0, return_inverse=True)
        classes = classes.reshape(-1)
        if len(np.unique(classes)) == k:
            break
        k = len(np.unique(classes))
    rep = np.zeros(k, dtype=np.int64)
    rep[classes] = np.arange(n)
    ctrans = np.where(trans[rep] >= 0, classes[np.maximum(trans[rep], 0)], -1)
    order, number = [int(classes[initial])], {int(classes[initial]): 0}
    for c in order:
        for d in ctrans[c].tolist():
            if d >= 0 and d not in number:
                number[d] = len(order)
                order.append(d)
    perm = np.full(k, -1)
    perm[order] = np.arange(len(order))
    out = np.where(ctrans[order] >= 0, perm[np.maximum(ctrans[order], 0)], -1)
    return out.astype(np.int32), accepting[rep][order], 0


def _random_table(rng, n, n_bytes):
    """A random table whose language is not empty (state 0 reaches an accepting state)."""
    while True:
        trans, accepting = _any_table(rng, n, n_bytes)
        if trim(trans, accepting, 0)[2] >= 0:
            return trans, accepting


def _any_table(rng, n, n_bytes):
    trans = np.full((n, 256), -1, dtype=np.int32)
    alphabet = rng.choice(256, size=n_bytes, replace=False)
    for s in range(n):
        for b in alphabet:
            if rng.random() < 0.6:
                trans[s, b] = rng.integers(n)
    accepting = rng.random(n) < 0.3
    return trans, accepting


@pytest.mark.parametrize("seed", range(60))
def test_minimize_equals_moore_on_trimmed_random_tables(seed):
    rng = np.random.default_rng(seed)
    trans, accepting = _random_table(rng, int(rng.integers(1, 40)), int(rng.integers(1, 6)))
    trans, accepting, initial = trim(trans, accepting, 0)
    got = minimize(trans, accepting, initial)
    want = _moore(trans, accepting, initial)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2] == want[2] == 0


@pytest.mark.parametrize("seed", range(30))
def test_minimize_drops_dead_states_of_untrimmed_tables(seed):
    rng = np.random.default_rng(1000 + seed)
    trans, accepting = _random_table(rng, int(rng.integers(2, 40)), int(rng.integers(1, 6)))
    dead = len(accepting)          # a dead state every accepting state may step to
    trans = np.concatenate([trans, np.full((1, 256), -1, np.int32)])
    trans[accepting.nonzero()[0], 0] = dead
    accepting = np.concatenate([accepting, [False]])
    assert not trim(trans, accepting, 0)[1].size == len(accepting)  # has dead states
    got = minimize(trans, accepting, 0)
    want = _moore(*trim(trans, accepting, 0))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2] == want[2]


@pytest.mark.parametrize("pattern", [
    r"[a-z]+@[a-z]+\.(com|org)", r"(ab|a)*b{2,5}", r'"(?:[^"\\]|\\.){3,9}"',
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", r"(x|y|xy|yx){0,6}", r"[\u00e9-\u4e00]{1,3}",
])
def test_minimize_is_a_fixed_point_on_regex_automata(pattern):
    dfa = regex_to_byte_dfa(pattern)
    again = minimize(np.array(dfa.transitions), np.array(dfa.accepting), dfa.initial)
    want = _moore(np.array(dfa.transitions), np.array(dfa.accepting), dfa.initial)
    assert np.array_equal(again[0], dfa.transitions) and np.array_equal(again[0], want[0])
    # a copy of every state (a doubled table) minimizes back to the same automaton
    n = dfa.n_states
    doubled = np.concatenate([dfa.transitions, np.where(dfa.transitions >= 0,
                                                        dfa.transitions + n, -1)])
    doubled[0] = np.where(doubled[0] >= 0, doubled[0] + n, -1)
    acc = np.concatenate([dfa.accepting, dfa.accepting])
    got = minimize(doubled.astype(np.int32), acc, 0)
    assert np.array_equal(got[0], dfa.transitions) and np.array_equal(got[1], dfa.accepting)


def test_minimize_of_an_empty_language():
    trans = np.full((3, 256), -1, dtype=np.int32)
    trans[0, 97] = 1
    trans[1, 98] = 2
    got = minimize(trans, np.zeros(3, bool), 0)
    assert got[0].shape == (0, 256) and got[2] == -1


def test_minimize_refuses_a_transition_outside_the_table():
    trans = np.full((2, 256), -1, dtype=np.int32)
    trans[0, 97] = 2
    with pytest.raises(ValueError, match="outside the table"):
        minimize(trans, np.array([False, True]), 0)



def test_minimize_table_refuses_an_output_table_of_another_size():
    from constrained.automata._dfa_tables import minimize_table
    trans = np.full((2, 256), -1, dtype=np.int32)
    trans[0, 97] = 1
    acc = np.array([0, 1], dtype=np.uint8)
    ids, reps = np.empty(2, np.int32), np.empty(2, np.int32)
    out = np.empty((2, 256), dtype=np.int32)
    assert minimize_table(trans, acc, 0, ids, reps, out) == 2
    assert out[0, 97] == 1 and (out[1] == -1).all()
    with pytest.raises(ValueError, match="expected"):
        minimize_table(trans, acc, 0, ids, reps, np.empty((1, 256), dtype=np.int32))


@pytest.mark.parametrize("pattern", [
    r"[a-z]+@[a-z]+\.(com|org)", r"(ab|a)*b{2,5}", r'"(?:[^"\\]|\\.){3,9}"', r"(x|y|xy|yx){0,6}",
])
@pytest.mark.parametrize("seed", range(3))
def test_number_canonically_renumbers_a_minimal_table_like_minimize(pattern, seed):
    from constrained.automata.determinize import number_canonically
    dfa = regex_to_byte_dfa(pattern)
    n = dfa.n_states
    perm = np.random.default_rng(seed).permutation(n).astype(np.int32)   # old -> new number
    shuffled = np.empty_like(dfa.transitions)
    shuffled[perm] = np.where(dfa.transitions >= 0, perm[dfa.transitions], -1)
    acc = np.empty_like(dfa.accepting)
    acc[perm] = dfa.accepting
    # plus a state nothing reaches: left out like minimize leaves it out
    shuffled = np.vstack([shuffled, shuffled[:1]])
    acc = np.concatenate([acc, [True]])
    got = number_canonically(shuffled, acc, int(perm[dfa.initial]))
    assert np.array_equal(got[0], dfa.transitions) and np.array_equal(got[1], dfa.accepting)
    assert got[2] == 0
