"""Finite languages of byte DFAs: whether a DFA accepts finitely many texts, and which."""
from __future__ import annotations

import numpy as np

from .byte_dfa import ByteDFA


def dfa_is_finite(dfa: ByteDFA) -> bool:
    """Whether a trimmed DFA accepts finitely many texts (it has no cycle)."""
    return not reaches_cycle(dfa.transitions, dfa.initial, {})


def reaches_cycle(trans: np.ndarray, q: int, memo: dict) -> bool:
    """Whether a cycle is reachable from state ``q`` of a transition table (int[n, 256],
    -1 for none): in a trimmed automaton, whether infinitely many texts lead on from ``q``.
    Depth-first; ``memo`` keeps the answer for every state visited (share it between calls
    on one table)."""
    if q in memo:
        return memo[q]
    on_path = {q}
    stack = [(q, iter(_next_states(trans, q)))]
    while stack:
        node, it = stack[-1]
        for nxt in it:
            if nxt in on_path or memo.get(nxt):
                for n, _ in stack:
                    memo[n] = True
                return True
            if nxt in memo:
                continue
            on_path.add(nxt)
            stack.append((nxt, iter(_next_states(trans, nxt))))
            break
        else:
            stack.pop()
            on_path.discard(node)
            memo[node] = False
    return memo[q]


def _next_states(trans: np.ndarray, q: int) -> set[int]:
    """The distinct states one byte leads to from ``q`` (a row often has a few targets)."""
    out = set(trans[q].tolist())
    out.discard(-1)
    return out


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
