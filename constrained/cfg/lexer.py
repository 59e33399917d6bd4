"""The lexer of one candidate terminal set: the union DFA of its terminals, built eagerly.

At a lexeme start the candidates are the terminals the parser expects plus the ignored ones.
The lexer reads bytes while some candidate can still match an extension of the lexeme (every
terminal DFA is trimmed, so "some component alive" means exactly that); ``accepting_terms[q]``
names the candidates that fully match the lexeme in state ``q``. States are tuples of component
states numbered in BFS order from ``initial`` (0, the empty lexeme, never re-entered);
``max_states`` bounds the product.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..automata import ByteDFA
from ..errors import LimitExceededError
from ._product import lexer_tables as _c_lexer_tables


class Lexer:
    """Union DFA over the terminals ``terms`` (see the module docstring)."""

    def __init__(self, terms: frozenset[int], dfas: tuple[ByteDFA, ...],
                 max_states: int = 20_000) -> None:
        self.terms = terms
        order = sorted(terms)
        comps = [dfas[t] for t in order]
        n, trans, comp_states, acc_class, cross, members = _c_lexer_tables(
            [d.transitions for d in comps], [d.byte_classes for d in comps],
            [d.accepting for d in comps], np.array([d.initial for d in comps], dtype=np.int32),
            max_states)
        if n < 0:
            raise LimitExceededError(f"the lexer for terminals {self._names(order, dfas)} needs "
                                     f"more than max_lexer_states={max_states} states")
        self.trans = np.frombuffer(trans, dtype=np.int32).reshape(n, 256)
        self.rows = _Rows(self.trans)
        # states with the same accepted terminal set end a lexeme alike: one class each
        self.class_terms: list[frozenset[int]] = [frozenset(order[j] for j in m)
                                                  for m in members]
        self._acc_class = np.frombuffer(acc_class, dtype=np.int32)
        # for the C walks: the class a lexeme ending in each state completes, -1 if none
        self.cross_class = np.frombuffer(cross, dtype=np.int32)
        self.acc_any = self.cross_class >= 0
        self.acc_list: list[bool] = self.acc_any.tolist()
        # per state: -1 unknown, else whether it keeps reading any JSON string text (C walks)
        self.simulates_text = np.full(n, -1, dtype=np.int8)
        # per state: -1 unknown, else how many characters of such text it surely reads (C walks)
        self.text_chars = np.full(n, -1, dtype=np.int16)
        self.order: tuple[int, ...] = tuple(order)      # terminal of each component
        self.keys: tuple[str, ...] = tuple(d.key for d in comps)   # automaton of each
        self.components = np.frombuffer(comp_states, dtype=np.int32).reshape(n, len(order))
        self.initial = 0

    @cached_property
    def accepting_terms(self) -> list[frozenset[int]]:
        """Per state, the candidates that fully match the lexeme (empty: none)."""
        terms = self.class_terms
        return [terms[c] for c in self._acc_class.tolist()]

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
