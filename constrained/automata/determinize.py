"""Byte NFA -> trimmed, minimal, canonically numbered DFA transition table."""
from __future__ import annotations

from collections import deque

import numpy as np

from ..deadline import check_deadline
from ..errors import LimitExceededError
from ._dfa_tables import minimize_table
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

    Bytes are first grouped into classes no edge distinguishes, so each subset is expanded once
    per class rather than once per byte. Raises LimitExceededError past ``max_states`` subsets.
    """
    cuts = sorted({0, 256} | {lo for es in nfa.edges for lo, _, _ in es}
                  | {hi + 1 for es in nfa.edges for _, hi, _ in es})
    class_of = np.zeros(256, dtype=np.int64)
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        class_of[a:b] = k
    n_classes = len(cuts) - 1
    by_class: list[dict[int, list[int]]] = []
    for es in nfa.edges:
        m: dict[int, list[int]] = {}
        for lo, hi, d in es:
            for k in range(int(class_of[lo]), int(class_of[hi]) + 1):
                m.setdefault(k, []).append(d)
        by_class.append(m)

    memo: dict[int, frozenset] = {}
    targets: dict[frozenset, frozenset] = {}
    start = _closure(nfa, [nfa.start], memo)
    ids = {start: 0}
    order = [start]
    rows: list[np.ndarray] = []
    queue = deque([start])
    while queue:
        if len(order) & 255 == 0:
            check_deadline("building a terminal's automaton")
        subset = queue.popleft()
        moves: dict[int, set[int]] = {}
        for node in subset:
            for k, ds in by_class[node].items():
                got = moves.get(k)
                if got is None:
                    moves[k] = set(ds)
                else:
                    got.update(ds)
        class_row = np.full(n_classes, -1, dtype=np.int32)
        for k, ds in moves.items():
            key = frozenset(ds)
            target = targets.get(key)
            if target is None:
                target = targets[key] = _closure(nfa, key, memo)
            tid = ids.get(target)
            if tid is None:
                tid = ids[target] = len(order)
                if tid >= max_states:
                    raise LimitExceededError(
                        f"regex DFA exceeds max_states={max_states} states")
                order.append(target)
                queue.append(target)
            class_row[k] = tid
        rows.append(class_row)
    trans = np.stack(rows)[:, class_of].astype(np.int32)
    accepting = np.array([nfa.final in s for s in order], dtype=bool)
    return trans, accepting, 0


def trim(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """Drop states that cannot reach acceptance; returns (trans, accepting, initial or -1)."""
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


def distinct_columns(trans: np.ndarray) -> np.ndarray:
    """Sorted indexes of the first of each group of equal columns: grouped by a random
    linear hash of each column (one matrix product), checked exactly afterwards."""
    n = trans.shape[0]
    weights = np.random.default_rng(n).integers(1, 1 << 62, size=n, dtype=np.int64) | 1
    with np.errstate(over="ignore"):
        hashes = (trans.T.astype(np.int64) + 2) @ weights
    _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
    if np.array_equal(trans[:, first[group]], trans):
        return np.sort(first)
    _, first = np.unique(trans.T, axis=0, return_index=True)     # a hash collision
    return np.sort(first)


def minimize(trans: np.ndarray, accepting: np.ndarray, initial: int):
    """The minimal DFA of a table, numbered canonically (breadth-first from the initial state,
    bytes ascending): Hopcroft's refinement in C (``_dfa_tables.minimize_table``). States that
    cannot reach acceptance become dead transitions; an empty language has no states and
    initial -1."""
    n = len(accepting)
    if n == 0:
        return trans, accepting, initial
    table = np.ascontiguousarray(trans, dtype=np.int32)
    acc = np.ascontiguousarray(accepting, dtype=bool)
    ids = np.empty(n, dtype=np.int32)
    reps = np.empty(n, dtype=np.int32)
    k = minimize_table(table, acc.view(np.uint8), int(initial), ids, reps)
    if k == 0:
        return np.zeros((0, 256), np.int32), np.zeros(0, bool), -1
    rows = table[reps[:k]]
    out = np.where(rows >= 0, ids[np.maximum(rows, 0)], -1).astype(np.int32)
    return out, acc[reps[:k]], 0
