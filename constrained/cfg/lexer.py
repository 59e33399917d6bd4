"""The lexer of one candidate terminal set: the union DFA of its terminals, built eagerly.

At a lexeme start the candidates are the terminals the parser expects plus the ignored ones.
The lexer reads bytes while some candidate can still match an extension of the lexeme (every
terminal DFA is trimmed, so "some component alive" means exactly that); ``accepting_terms[q]``
names the candidates that fully match the lexeme in state ``q``. States are tuples of component
states numbered in BFS order from ``initial`` (0, the empty lexeme, never re-entered);
``max_states`` bounds the product.
"""
from __future__ import annotations

import numpy as np

from ..automata import ByteDFA
from ..errors import LimitExceededError


class Lexer:
    """Union DFA over the terminals ``terms`` (see the module docstring)."""

    def __init__(self, terms: frozenset[int], dfas: tuple[ByteDFA, ...],
                 max_states: int = 20_000) -> None:
        self.terms = terms
        order = sorted(terms)
        comps = [dfas[t] for t in order]
        # byte classes: bytes every component treats alike
        sig = np.concatenate([d.transitions for d in comps], axis=0).T if comps else \
            np.zeros((256, 0), np.int32)
        uniq, first, inv = _unique_rows(sig)
        order_cls = np.lexsort(uniq.T[::-1]) if uniq.shape[1] else np.arange(len(uniq))
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order_cls] = np.arange(len(uniq))
        reps = first[order_cls]     # classes in the lexicographic order of their columns
        cls = rank[inv]
        k = len(comps)
        states, ids = _product(comps, reps, max_states, lambda: self._names(order, dfas))
        self.trans = np.ascontiguousarray(ids[:, cls].astype(np.int32))
        self.trans.setflags(write=False)
        self.rows: list[list[int]] = self.trans.tolist()
        comp_states = np.asarray(states, dtype=np.int64).reshape(len(states), k)
        acc_bits = np.zeros((len(states), k), dtype=bool)
        for c, d in enumerate(comps):
            col = comp_states[:, c]
            live = col >= 0
            acc_bits[live, c] = np.asarray(d.accepting, dtype=bool)[col[live]]
        sets: dict[bytes, frozenset[int]] = {}
        acc = []
        packed = np.packbits(acc_bits, axis=1) if k else np.zeros((len(states), 0), np.uint8)
        for r, key in enumerate(map(bytes, packed)):
            fs = sets.get(key)
            if fs is None:
                fs = sets[key] = frozenset(order[c] for c in np.nonzero(acc_bits[r])[0].tolist())
            acc.append(fs)
        self.accepting_terms: list[frozenset[int]] = acc
        self.acc_any = acc_bits.any(axis=1)
        # states with the same accepted terminal set end a lexeme alike: one class each
        classes: dict[frozenset, int] = {}
        self.acc_class = np.array([classes.setdefault(a, len(classes)) for a in acc],
                                  dtype=np.int32)
        self.class_terms: list[frozenset[int]] = list(classes)
        self.acc_list: list[bool] = self.acc_any.tolist()
        self.order: tuple[int, ...] = tuple(order)      # terminal of each component
        self.components: list[tuple] = states           # component states of each state
        self.initial = 0

    @property
    def n_states(self) -> int:
        return len(self.rows)

    @staticmethod
    def _names(order, dfas) -> str:
        return ", ".join(str(t) for t in order[:8]) + (" ..." if len(order) > 8 else "")


_CHUNK = 1 << 22  # next-state entries computed at once (int32: 16 MB)


def _product(comps, reps: np.ndarray, max_states: int, names):
    """Reachable product states (tuples of component states, BFS order from the initial
    tuple) and their successor ids per byte class (-1: dead). A frontier of states is
    expanded at once with numpy; only distinct successor tuples reach Python."""
    k, r = len(comps), len(reps)
    init = tuple(d.initial for d in comps)
    index: dict[tuple, int] = {}
    states: list[tuple] = [init]
    id_rows: list[np.ndarray] = []
    tables = [d.transitions[:, reps] for d in comps]   # (n_c, r) each
    done = 0
    while done < len(states):
        stop = min(len(states), done + max(1, _CHUNK // max(1, k * r)))
        frontier = np.asarray(states[done:stop], dtype=np.int64).reshape(stop - done, k)
        f = len(frontier)
        nxt = np.full((f, r, k), -1, dtype=np.int32)
        for c in range(k):
            col = frontier[:, c]
            live = col >= 0
            if live.any():
                nxt[live, :, c] = tables[c][col[live]]
        flat = nxt.reshape(f * r, k)
        alive = (flat >= 0).any(axis=1) if k else np.zeros(f * r, dtype=bool)
        ids = np.full(f * r, -1, dtype=np.int64)
        where = np.nonzero(alive)[0]
        if len(where):
            uniq, first, inv = _unique_rows(flat[where])
            uid = np.empty(len(uniq), dtype=np.int64)
            for u in np.argsort(first, kind="stable").tolist():   # first-seen order
                key = tuple(uniq[u].tolist())
                sid = index.get(key)
                if sid is None:
                    sid = len(states)
                    if sid >= max_states:
                        raise LimitExceededError(
                            f"the lexer for terminals {names()} needs more than "
                            f"max_lexer_states={max_states} states")
                    index[key] = sid
                    states.append(key)
                uid[u] = sid
            ids[where] = uid[inv.reshape(-1)]
        id_rows.append(ids.reshape(f, r))
        done = stop
    return states, np.concatenate(id_rows, axis=0) if id_rows else np.zeros((0, r), np.int64)


_WEIGHTS = np.random.default_rng(0x5EED).integers(1, 2**62, size=1 << 16, dtype=np.int64)


def _unique_rows(rows: np.ndarray):
    """np.unique(rows, axis=0, return_index, return_inverse), fast for wide rows: rows are
    hashed to int64 and the grouping is verified (exact fallback on a collision)."""
    m, k = rows.shape
    if k <= len(_WEIGHTS):
        h = (rows.astype(np.int64) + 1) @ _WEIGHTS[:k]
        _, first, inv = np.unique(h, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        uniq = rows[first]
        if np.array_equal(uniq[inv], rows):
            return uniq, first, inv
    packed = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * k)))
    _, first, inv = np.unique(packed.reshape(-1), return_index=True, return_inverse=True)
    return rows[first], first, inv.reshape(-1)
