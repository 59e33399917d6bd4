"""Byte NFA -> trimmed, minimal, canonically numbered DFA transition table."""
from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import LimitExceededError
from .byte_nfa import ByteNFA


def _closure(nfa: ByteNFA, seeds, memo: dict[int, frozenset]) -> frozenset:
    out: set[int] = set()
    for s in seeds:
        c = memo.get(s)
        if c is None:
            seen = {s}
            stack = [s]
            while stack:
                for t in nfa.eps[stack.pop()]:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
            # only nodes that read a byte, or the final node, matter for the subset's identity
            c = memo[s] = frozenset(x for x in seen if nfa.edges[x] or x == nfa.final)
        out |= c
    return frozenset(out)


def determinize(nfa: ByteNFA, max_states: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Subset construction: (transitions int32[n, 256] with -1 dead, accepting bool[n], initial).

    Raises LimitExceededError when more than ``max_states`` subsets appear.
    """
    memo: dict[int, frozenset] = {}
    start = _closure(nfa, [nfa.start], memo)
    ids = {start: 0}
    order = [start]
    rows: list[np.ndarray] = []
    queue = deque([start])
    while queue:
        subset = queue.popleft()
        row = np.full(256, -1, dtype=np.int32)
        edges = [e for node in subset for e in nfa.edges[node]]
        if edges:
            cuts = sorted({lo for lo, _, _ in edges} | {hi + 1 for _, hi, _ in edges})
            for a, b in zip(cuts, cuts[1:]):
                dsts = [d for lo, hi, d in edges if lo <= a and b - 1 <= hi]
                if not dsts:
                    continue
                target = _closure(nfa, dsts, memo)
                tid = ids.get(target)
                if tid is None:
                    tid = ids[target] = len(order)
                    if tid >= max_states:
                        raise LimitExceededError(
                            f"regex DFA exceeds max_states={max_states} states")
                    order.append(target)
                    queue.append(target)
                row[a:b] = tid
        rows.append(row)
    trans = np.stack(rows).astype(np.int32)
    accepting = np.array([nfa.final in s for s in order], dtype=bool)
    return trans, accepting, 0


def trim(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """Drop states that cannot reach acceptance; returns (trans, accepting, initial or -1)."""
    n = len(accepting)
    src, byte = np.nonzero(trans >= 0)
    dst = trans[src, byte]
    pairs = np.unique(np.stack([dst, src], axis=1), axis=0) if len(src) else np.zeros((0, 2), int)
    starts = np.searchsorted(pairs[:, 0], np.arange(n + 1))
    live = accepting.copy()
    stack = list(np.nonzero(live)[0])
    while stack:
        d = stack.pop()
        for s in pairs[starts[d]:starts[d + 1], 1]:
            if not live[s]:
                live[s] = True
                stack.append(int(s))
    if not live[initial]:
        return np.zeros((0, 256), np.int32), np.zeros(0, bool), -1
    new_id = np.full(n, -1, dtype=np.int32)
    new_id[live] = np.arange(int(live.sum()), dtype=np.int32)
    kept = trans[live]
    out = np.where(kept >= 0, new_id[np.maximum(kept, 0)], -1).astype(np.int32)
    return out, accepting[live], int(new_id[initial])


def minimize(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """Moore partition refinement, then BFS renumbering from the initial state (canonical)."""
    n = len(accepting)
    if n == 0:
        return trans, accepting, initial
    classes = accepting.astype(np.int64)
    n_classes = len(np.unique(classes))
    while True:
        succ = np.where(trans >= 0, classes[np.maximum(trans, 0)], -1)
        sig = np.concatenate([classes[:, None], succ], axis=1)
        _, new = np.unique(sig, axis=0, return_inverse=True)
        new = new.reshape(-1)
        k = int(new.max()) + 1
        classes = new
        if k == n_classes:
            break
        n_classes = k
    # one representative per class, then number classes in BFS order from the initial state
    rep = np.zeros(n_classes, dtype=np.int64)
    rep[classes] = np.arange(n)
    ctrans = np.where(trans[rep] >= 0, classes[np.maximum(trans[rep], 0)], -1)
    cacc = accepting[rep]
    order = [int(classes[initial])]
    number = {order[0]: 0}
    i = 0
    while i < len(order):
        row = ctrans[order[i]]
        for c in dict.fromkeys(row[row >= 0].tolist()):
            if c not in number:
                number[c] = len(order)
                order.append(c)
        i += 1
    perm = np.full(n_classes, -1, dtype=np.int64)
    perm[order] = np.arange(len(order))
    out = ctrans[order]
    out = np.where(out >= 0, perm[np.maximum(out, 0)], -1).astype(np.int32)
    return np.ascontiguousarray(out), cacc[order].copy(), 0
