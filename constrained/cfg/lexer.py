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
from ._product import product as _c_product


class Lexer:
    """Union DFA over the terminals ``terms`` (see the module docstring)."""

    def __init__(self, terms: frozenset[int], dfas: tuple[ByteDFA, ...],
                 max_states: int = 20_000) -> None:
        self.terms = terms
        order = sorted(terms)
        comps = [dfas[t] for t in order]
        # byte classes: bytes every component treats alike (refining each one's classes)
        sig = np.stack([d.byte_classes for d in comps], axis=1) if comps else \
            np.zeros((256, 0), np.int32)
        uniq, first, inv = _unique_rows(sig)
        order_cls = np.lexsort(uniq.T[::-1]) if uniq.shape[1] else np.arange(len(uniq))
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order_cls] = np.arange(len(uniq))
        reps = first[order_cls]     # classes in a canonical order (of their class ids)
        cls = rank[inv]
        k = len(comps)
        ids, comp_states, acc_bits = _product(comps, reps, max_states,
                                               lambda: self._names(order, dfas))
        self.trans = np.ascontiguousarray(ids[:, cls])
        self.trans.setflags(write=False)
        self.rows = _Rows(self.trans)
        # states with the same accepted terminal set end a lexeme alike: one class each
        packed = np.packbits(acc_bits, axis=1) if k else np.zeros((len(ids), 1), np.uint8)
        _, first, inv = _unique_rows(packed)
        self.acc_class = inv.astype(np.int32)
        self.class_terms: list[frozenset[int]] = [
            frozenset(order[c] for c in np.flatnonzero(acc_bits[f]).tolist())
            for f in first.tolist()]
        self.accepting_terms: list[frozenset[int]] = [self.class_terms[c]
                                                      for c in self.acc_class.tolist()]
        self.acc_any = acc_bits.any(axis=1) if k else np.zeros(len(ids), dtype=bool)
        self.acc_u8 = self.acc_any.astype(np.uint8)     # for the C walks
        self.acc_list: list[bool] = self.acc_any.tolist()
        # per state: -1 unknown, else whether it keeps reading any JSON string text (C walks)
        self.simulates_text = np.full(len(ids), -1, dtype=np.int8)
        self.order: tuple[int, ...] = tuple(order)      # terminal of each component
        self.keys: tuple[str, ...] = tuple(d.key for d in comps)   # automaton of each
        self.components = comp_states                   # int32[n, k]: component states
        self.initial = 0

    @property
    def n_states(self) -> int:
        return len(self.rows)

    @staticmethod
    def _names(order, dfas) -> str:
        return ", ".join(str(t) for t in order[:8]) + (" ..." if len(order) > 8 else "")


class _Rows:
    """``rows[q][b]``: the lexer's transitions as Python lists, converted a row at a time (byte
    stepping in Python reads few rows; converting them all costs more than the walks)."""

    __slots__ = ("_trans", "_rows")

    def __init__(self, trans: np.ndarray) -> None:
        self._trans = trans
        self._rows: dict[int, list[int]] = {}

    def __getitem__(self, q: int) -> list[int]:
        row = self._rows.get(q)
        if row is None:
            row = self._rows[q] = self._trans[q].tolist()
        return row

    def __len__(self) -> int:
        return len(self._trans)


def _product(comps, reps: np.ndarray, max_states: int, names):
    """(successor ids int32[n, classes], component states int32[n, k], accepting flags
    bool[n, k]) of the reachable product states, numbered in BFS order from the initial tuple
    (C: _product.c)."""
    k, r = len(comps), len(reps)
    tables = [np.ascontiguousarray(d.transitions[:, reps], dtype=np.int32) for d in comps]
    sizes = np.array([len(t) for t in tables], dtype=np.int32)
    offsets = np.zeros(k, dtype=np.int64)
    if k > 1:
        offsets[1:] = np.cumsum(sizes.astype(np.int64) * r)[:-1]
    flat = np.concatenate([t.reshape(-1) for t in tables]) if k else np.zeros(1, np.int32)
    init = np.array([d.initial for d in comps], dtype=np.int32)
    accepting = np.concatenate([np.asarray(d.accepting, dtype=np.uint8) for d in comps]) \
        if k else np.zeros(0, np.uint8)
    n, ids, comp, acc = _c_product(flat, offsets, sizes, init, accepting, max(r, 1), max_states)
    if n < 0:
        raise LimitExceededError(f"the lexer for terminals {names()} needs more than "
                                 f"max_lexer_states={max_states} states")
    return (np.frombuffer(ids, dtype=np.int32).reshape(n, max(r, 1))[:, :r],
            np.frombuffer(comp, dtype=np.int32).reshape(n, k),
            np.frombuffer(acc, dtype=np.uint8).reshape(n, k).view(bool))


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
