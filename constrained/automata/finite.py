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
    edges = state_exits(dfa.transitions)
    accepting = dfa.accepting.tolist()
    if accepting[dfa.initial] + count_paths(edges, accepting, dfa.initial, {}, limit) > limit:
        return None
    out = []
    todo = [(dfa.initial, b"")]
    while todo:
        q, text = todo.pop()
        if accepting[q]:
            out.append(text)
        for b, t in edges[q]:
            todo.append((t, text + bytes((b,))))
    return out


def state_exits(trans: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
    """The (byte, target) edges of every state of a transition table, bytes ascending."""
    rows, cols = np.nonzero(trans >= 0)
    targets = trans[rows, cols].tolist()
    starts = np.searchsorted(rows, np.arange(len(trans) + 1)).tolist()
    cols = cols.tolist()
    return [tuple(zip(cols[starts[s]:starts[s + 1]], targets[starts[s]:starts[s + 1]]))
            for s in range(len(trans))]


def count_paths(exits: list, accepting, q: int, memo: dict, cap: int) -> int:
    """How many paths of at least one edge lead from state ``q`` to an accepting state (in a
    DFA: how many non-empty texts it accepts from ``q``), capped at ``cap + 1``; ``q`` reaches
    no cycle. ``exits[s]``: (label, target) per edge of state ``s``; ``memo`` keeps the
    counts of the states met (reusable for the same automaton and cap)."""
    stack = [q]
    while stack:
        s = stack[-1]
        if s in memo:
            stack.pop()
            continue
        pending = [nxt for _, nxt in exits[s] if nxt not in memo]
        if pending:
            stack += pending
            continue
        total = sum(memo[nxt] + bool(accepting[nxt]) for _, nxt in exits[s])
        memo[s] = min(total, cap + 1)
        stack.pop()
    return memo[q]
