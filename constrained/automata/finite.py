"""Finite languages of byte DFAs: whether a DFA accepts finitely many texts, and which."""
from __future__ import annotations

import numpy as np

from .byte_dfa import ByteDFA


def dfa_is_finite(dfa: ByteDFA) -> bool:
    """Whether a trimmed DFA accepts finitely many texts (it has no cycle)."""
    return dfa.initial < 0 or not dfa.cycle_states[dfa.initial]


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
