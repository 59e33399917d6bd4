"""Finite languages of byte DFAs: whether a DFA accepts finitely many texts, and which."""
from __future__ import annotations

import numpy as np

from .byte_dfa import ByteDFA


def dfa_is_finite(dfa: ByteDFA) -> bool:
    """Whether a trimmed DFA accepts finitely many texts (it has no cycle)."""
    trans = dfa.transitions
    color = [0] * dfa.n_states          # 0 unseen, 1 on the path, 2 done
    stack = [(dfa.initial, iter(np.flatnonzero(trans[dfa.initial] >= 0).tolist()))]
    color[dfa.initial] = 1
    while stack:
        node, it = stack[-1]
        for b in it:
            nxt = int(trans[node, b])
            if color[nxt] == 1:
                return False
            if color[nxt] == 0:
                color[nxt] = 1
                stack.append((nxt, iter(np.flatnonzero(trans[nxt] >= 0).tolist())))
                break
        else:
            stack.pop()
            color[node] = 2
    return True


def dfa_texts(dfa: ByteDFA, limit: int) -> list[bytes] | None:
    """The texts of an acyclic DFA, or None when there are more than ``limit``."""
    out = []
    todo = [(dfa.initial, b"")]
    trans = dfa.transitions
    while todo:
        q, text = todo.pop()
        if dfa.accepting[q]:
            out.append(text)
            if len(out) > limit:
                return None
        for b in np.flatnonzero(trans[q] >= 0).tolist():
            todo.append((int(trans[q, b]), text + bytes((b,))))
    return out
