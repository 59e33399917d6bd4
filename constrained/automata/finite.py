"""Finite languages of byte DFAs: whether a DFA accepts finitely many texts, and which."""
from __future__ import annotations

import numpy as np

from .byte_dfa import ByteDFA


def dfa_is_finite(dfa: ByteDFA) -> bool:
    """Whether a trimmed DFA accepts finitely many texts (it has no cycle)."""
    return dfa.initial < 0 or not dfa.cycle_states[dfa.initial]


def dfa_texts(dfa: ByteDFA, limit: int) -> list[bytes] | None:
    """The texts of an acyclic DFA, or None when there are more than ``limit`` (counted
    first: a language of millions of texts is not listed to find that out)."""
    if dfa.initial < 0:
        return []
    trans = dfa.transitions
    states, byte = np.nonzero(trans >= 0)
    edges: list[list[tuple[bytes, int]]] = [[] for _ in range(len(trans))]
    for q, b, t in zip(states.tolist(), byte.tolist(), trans[states, byte].tolist()):
        edges[q].append((bytes((b,)), t))
    accepting = dfa.accepting.tolist()
    if _count_texts(edges, accepting, dfa.initial, limit) > limit:
        return None
    out = []
    todo = [(dfa.initial, b"")]
    while todo:
        q, text = todo.pop()
        if accepting[q]:
            out.append(text)
        for b, t in edges[q]:
            todo.append((t, text + b))
    return out


def _count_texts(edges: list, accepting: list, initial: int, limit: int) -> int:
    """How many texts an acyclic DFA accepts (one path each), capped at ``limit + 1``."""
    count: dict[int, int] = {}
    stack = [initial]
    while stack:
        q = stack[-1]
        if q in count:
            stack.pop()
            continue
        pending = [t for _, t in edges[q] if t not in count]
        if pending:
            stack += pending
            continue
        count[q] = min(accepting[q] + sum(count[t] for _, t in edges[q]), limit + 1)
        stack.pop()
    return count[initial]
