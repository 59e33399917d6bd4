"""Byte NFA -> DFA table (subset construction), and the minimal, canonically numbered DFA of a
table (dead and unreachable states dropped)."""
from __future__ import annotations

from array import array

import numpy as np

from ..deadline import check_deadline
from ..errors import LimitExceededError
from ._dfa_tables import column_classes, minimize_table, number_table
from ._subsets import subset_construction, union_product
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


def union_tables(tables: list[tuple[np.ndarray, np.ndarray, int]], classes: list[np.ndarray],
                 max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The DFA table of the union of DFAs given as (transitions, accepting, initial), with each
    one's byte classes (int32[256], equal for the bytes it treats alike), by a product in C
    (``_subsets.union_product``): the states and their count are those of the subset
    construction of the union's NFA (a new start reaching every initial state), without
    building the NFA. Limits as ``determinize``."""
    got = union_product([np.ascontiguousarray(t, dtype=np.int32) for t, _, _ in tables],
                        [np.ascontiguousarray(c, dtype=np.int32) for c in classes],
                        [np.ascontiguousarray(a, dtype=np.uint8) for _, a, _ in tables],
                        np.array([i if len(a) else -1 for _, a, i in tables], dtype=np.int32),
                        max_states, _check)
    if got is None:
        raise LimitExceededError(f"regex DFA exceeds max_states={max_states} states")
    return _read_only_table(got)


def _subsets(*nfa_arrays, max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The C subset construction on an NFA in arrays (edge offsets, lows, highs, targets,
    epsilon offsets, epsilon targets, start, final): the DFA table, initial state 0."""
    got = subset_construction(*nfa_arrays, max_states, _check)
    if got is None:
        raise LimitExceededError(f"regex DFA exceeds max_states={max_states} states")
    return _read_only_table(got)


def _read_only_table(got: tuple[bytes, bytes]) -> tuple[np.ndarray, np.ndarray, int]:
    """(transitions, accepting, initial 0) read in place from the C construction's bytes (the
    tables are only read: minimizing writes a new one)."""
    return (np.frombuffer(got[0], dtype=np.int32).reshape(-1, 256),
            np.frombuffer(got[1], dtype=bool), 0)


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
