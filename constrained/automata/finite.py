"""Finite languages of byte DFAs: whether a DFA accepts finitely many texts, and which."""
from __future__ import annotations

import numpy as np

from ._dfa_tables import cycle_reach
from .byte_dfa import ByteDFA


def dfa_is_finite(dfa: ByteDFA) -> bool:
    """Whether a trimmed DFA accepts finitely many texts (it has no cycle)."""
    return dfa.initial < 0 or not dfa.cycle_states[dfa.initial]


def cycle_states(trans: np.ndarray) -> np.ndarray:
    """uint8 per state of a transition table (int[n, 256], -1 for none): 1 where a cycle is
    reachable, so, in a trimmed automaton, where infinitely many texts lead on (in C:
    ``_dfa_tables.cycle_reach``)."""
    reach = np.zeros(len(trans), dtype=np.uint8)
    cycle_reach(np.ascontiguousarray(trans, dtype=np.int32), reach)
    return reach


def dfa_texts(dfa: ByteDFA, limit: int) -> list[bytes] | None:
    """The texts of an acyclic DFA, or None when there are more than ``limit``."""
    trans = dfa.transitions
    states, byte = np.nonzero(trans >= 0)
    edges: list[list[tuple[bytes, int]]] = [[] for _ in range(len(trans))]
    for q, b, t in zip(states.tolist(), byte.tolist(), trans[states, byte].tolist()):
        edges[q].append((bytes((b,)), t))
    accepting = dfa.accepting.tolist()
    out = []
    todo = [(dfa.initial, b"")]
    while todo:
        q, text = todo.pop()
        if accepting[q]:
            out.append(text)
            if len(out) > limit:
                return None
        for b, t in edges[q]:
            todo.append((t, text + b))
    return out
