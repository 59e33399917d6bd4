"""Byte NFA -> DFA table (subset construction), and the minimal, canonically numbered DFA of a
table (dead and unreachable states dropped)."""
from __future__ import annotations

from array import array

import numpy as np

from ..deadline import check_deadline
from ..errors import LimitExceededError
from ._dfa_tables import column_classes, minimize_table, number_table
from ._subsets import subset_construction
from .byte_nfa import ByteNFA


def determinize(nfa: ByteNFA, max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Subset construction in C (``_subsets.subset_construction``): (transitions int32[n, 256]
    with -1 dead, accepting bool[n], initial 0). Raises LimitExceededError past ``max_states``
    subsets, and the deadline's error when it passes during the construction."""
    # the NFA's lists packed into int32 arrays (``array`` is quicker than numpy at this size)
    edge_at, lows, highs, targets = array("i", [0]), array("i"), array("i"), array("i")
    for es in nfa.edges:
        for lo, hi, dst in es:
            lows.append(lo)
            highs.append(hi)
            targets.append(dst)
        edge_at.append(len(lows))
    eps_at, eps = array("i", [0]), array("i")
    for es in nfa.eps:
        eps.extend(es)
        eps_at.append(len(eps))
    return _subsets(edge_at, lows, highs, targets, eps_at, eps, nfa.start, nfa.final,
                    max_states=max_states)


def disjoint_union(tables: list[tuple[np.ndarray, np.ndarray, int]],
                   max_states: int) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The DFA table of the union of DFAs whose first bytes differ (``true``, ``null``, a
    string, a number), without a subset construction: each DFA's states are copied and a new
    initial state takes each one's first-byte transitions (a non-empty text's first byte
    chooses the only DFA that can read it). None when two DFAs share a first byte, or past
    ``max_states`` states (the subset construction then decides)."""
    parts = [(t, a, i) for t, a, i in tables if len(a) and i >= 0]
    total = 1 + sum(len(a) for _, a, _ in parts)
    if total > max_states:
        return None
    taken = np.zeros(256, dtype=bool)
    trans = np.full((total, 256), -1, dtype=np.int32)
    accepting = np.zeros(total, dtype=bool)
    base = 1
    for t, a, i in parts:
        n = len(a)
        first = t[i] >= 0
        if (first & taken).any():
            return None
        taken |= first
        trans[base:base + n] = np.where(t >= 0, t + base, -1)
        trans[0, first] = t[i, first] + base
        accepting[base:base + n] = a
        accepting[0] |= bool(a[i])
        base += n
    return trans, accepting, 0


def determinize_union(tables: list[tuple[np.ndarray, np.ndarray, int]],
                      max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The DFA table of the union of DFAs given as (transitions, accepting, initial), by the
    same subset construction: each DFA's transitions become byte-range edges of one NFA (a
    run of bytes with one target is one edge), a new start reaches every initial state and
    every accepting state reaches a new final node. Limits as ``determinize``."""
    srcs, los, his, dsts = [], [], [], []
    eps_src, eps_dst = [], []
    base = 2                                  # node 0: the start, node 1: the final node
    for trans, accepting, initial in tables:
        n = len(accepting)
        if n == 0 or initial < 0:
            continue
        change = np.ones((n, 256), dtype=bool)
        change[:, 1:] = trans[:, 1:] != trans[:, :-1]
        state, start = np.nonzero(change)
        end = np.full(len(start), 255, dtype=np.int64)
        same_row = state[1:] == state[:-1]
        end[:-1][same_row] = start[1:][same_row] - 1
        target = trans[state, start]
        live = target >= 0
        srcs.append(state[live] + base)
        los.append(start[live])
        his.append(end[live])
        dsts.append(target[live] + base)
        eps_src.append(0)
        eps_dst.append(base + int(initial))
        for a in np.flatnonzero(accepting).tolist():
            eps_src.append(base + a)
            eps_dst.append(1)
        base += n
    src = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    edge_counts = np.bincount(src, minlength=base).astype(np.int32)
    eps_counts = np.bincount(np.asarray(eps_src, dtype=np.int64), minlength=base).astype(np.int32)
    order = np.argsort(np.asarray(eps_src, dtype=np.int64), kind="stable")

    def flat(parts: list) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0), np.int32)

    return _subsets(_offsets(edge_counts), flat(los), flat(his), flat(dsts),
                    _offsets(eps_counts),
                    np.ascontiguousarray(np.asarray(eps_dst, np.int32)[order]), 0, 1,
                    max_states=max_states)


def _subsets(*nfa_arrays, max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The C subset construction on an NFA in arrays (edge offsets, lows, highs, targets,
    epsilon offsets, epsilon targets, start, final): the DFA table, initial state 0."""
    got = subset_construction(*nfa_arrays, max_states, _check)
    if got is None:
        raise LimitExceededError(f"regex DFA exceeds max_states={max_states} states")
    trans = np.frombuffer(got[0], dtype=np.int32).reshape(-1, 256).copy()
    return trans, np.frombuffer(got[1], dtype=bool).copy(), 0


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=out[1:])
    return out


def _check() -> None:
    check_deadline("building a terminal's automaton")


def distinct_columns(trans: np.ndarray) -> np.ndarray:
    """Sorted indexes of the first byte of each group of equal columns (byte classes in C:
    ``_dfa_tables.column_classes``, numbered by first byte)."""
    classes = np.empty(256, dtype=np.int32)
    column_classes(np.ascontiguousarray(trans, dtype=np.int32), classes)
    first = np.ones(256, dtype=bool)
    first[1:] = classes[1:] > np.maximum.accumulate(classes)[:-1]
    return np.flatnonzero(first)


def minimize(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """The minimal DFA of a table, numbered canonically (breadth-first from the initial state,
    bytes ascending): Hopcroft's refinement in C (``_dfa_tables.minimize_table``). States that
    cannot reach acceptance become dead transitions; an empty language has no states and
    initial -1."""
    return _canonical(minimize_table, trans, accepting, initial)


def number_canonically(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """``minimize``'s result for a table built minimal (no two states equivalent, every state
    reaching acceptance): its states reachable from ``initial`` numbered canonically, without
    the refinement's cost."""
    return _canonical(number_table, trans, accepting, initial)


def number_canonically_from(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """``number_canonically``'s (transitions, accepting, initial), and the state of ``trans``
    each new state is (int32 per new state)."""
    return _canonical(number_table, trans, accepting, initial, origins=True)


def _canonical(kernel, trans: np.ndarray, accepting: np.ndarray, initial: int,
               origins: bool = False):
    n = len(accepting)
    k = 0
    if n:
        table = np.ascontiguousarray(trans, dtype=np.int32)
        acc = np.ascontiguousarray(accepting, dtype=bool)
        ids = np.empty(n, dtype=np.int32)
        reps = np.empty(n, dtype=np.int32)
        out = np.empty((n, 256), dtype=np.int32)
        k = kernel(table, acc.view(np.uint8), int(initial), ids, reps, out)
    if k == 0:      # (an empty language: no states)
        found = np.zeros((0, 256), np.int32), np.zeros(0, bool), -1
        return found + (np.zeros(0, np.int32),) if origins else found
    found = (out if k == n else out[:k].copy()), acc[reps[:k]], 0
    return found + (reps[:k].copy(),) if origins else found
