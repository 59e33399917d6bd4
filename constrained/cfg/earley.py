"""Earley recognizer over terminals, with columns as immutable, interned snapshots.

A ``Column`` is the Earley item set after some sequence of lexemes. Items are
``(alternative, dot, origin)`` where ``origin`` indexes the column's ``origins`` (earlier
Columns), or is -1 for this column. The closure of a column's kernel runs in C (``_earley.c``)
and returns its items in containers of ints that the garbage collector does not track: a long
generation creates many columns, and a full collection otherwise walks every item of every one.

Columns never change once built, so a parser state is just a Column reference (rollback is free)
and ``advance(terminals)`` results are memoized by the parser in a bounded cache (a column keeps
no reference to its successors, so columns nobody uses any more are freed).

Columns are interned by their kernel (the scanned items and their origins' identities), so equal
parse situations share one object and one ``id``; masks and tables keyed by ``Column.id`` are
therefore reused across positions (e.g. every element of a JSON array). Interning is only an
optimization: the intern table is bounded and simply forgets when full.

Nullable rules follow Aycock and Horspool: predicting a nullable nonterminal also advances over
it, so completions never need to look at the column being built. Left recursion, ambiguity and
epsilon rules need nothing special.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from ._earley import closure as _c_closure
from ._earley import grammar as _c_grammar
from .lru import LRUCache
from .prepare import PreparedGrammar

Item = tuple  # (alternative, dot, origin index | -1)

DEAD = object()     # a memoized advance that fits no item


class _Predictions:
    """The closure of predicting a set of nonterminals: items ``(alt, dot, -1)`` only.

    Predicted items start in the column being built, so (with nullable rules advanced at
    prediction time) their closure never depends on earlier columns: it is computed once per
    set of directly predicted nonterminals and shared by every column predicting that set.
    """

    __slots__ = ("by_next", "expected", "complete", "items")

    def __init__(self, grammar: PreparedGrammar, roots: frozenset) -> None:
        rhs, by_lhs, nullable, n_term = grammar.rhs, grammar.by_lhs, grammar.nullable, \
            grammar.n_terminals
        items: set = set()
        agenda = []
        for n in roots:
            for a in by_lhs.get(n, ()):
                items.add((a, 0, -1))
        agenda = list(items)
        predicted = set(roots)
        by_next: dict[int, list] = {}
        while agenda:
            a, d, _ = it = agenda.pop()
            r = rhs[a]
            if d >= len(r):
                continue
            sym = r[d]
            by_next.setdefault(sym, []).append(it)
            if sym >= n_term:
                if sym not in predicted:
                    predicted.add(sym)
                    for a2 in by_lhs.get(sym, ()):
                        new = (a2, 0, -1)
                        if new not in items:
                            items.add(new)
                            agenda.append(new)
                if sym in nullable:
                    new = (a, d + 1, -1)
                    if new not in items:
                        items.add(new)
                        agenda.append(new)
        self.by_next = {k: tuple(v) for k, v in by_next.items()}
        self.expected = frozenset(k for k in by_next if k < n_term)
        self.complete = (0, 1, -1) in items
        self.items = frozenset(items)


class Column:
    """An immutable Earley item set (see the module docstring).

    Items with a real origin are kept per column; items predicted here (origin -1) come from a
    shared ``_Predictions`` object.
    """

    __slots__ = ("id", "parser", "origins", "dynamic", "by_next", "static", "expected",
                 "candidates", "complete", "_core", "__weakref__")

    def __init__(self, parser: "EarleyParser", kernel: list, cid: int,
                 roots: frozenset = frozenset()) -> None:
        """``kernel``: items ``(alternative, dot, origin Column)``; the closure (nullable
        steps and completions through the origins) runs in C (``_earley.c``)."""
        self.id = cid
        self.parser = parser
        self.origins, self.dynamic, self.by_next, predicted, started = _c_closure(
            parser._c_grammar, kernel, getattr(parser, "initial", None))
        self.static = parser._predictions(predicted | roots if roots else predicted)
        self.expected, self.candidates = parser._terminal_sets(frozenset(self.by_next), self.static)
        # the start alternative is only ever predicted in the initial column
        self.complete = self.static.complete or started
        self._core: frozenset | None = None

    def core(self) -> frozenset:
        """The column's items without their origins: equal for columns that differ only in
        what lies below them (a search key that merges nesting depths)."""
        if self._core is None:
            self._core = frozenset((a, d) for a, d, _ in self.dynamic)
        return self._core

    def expecting(self, sym: int) -> tuple:
        """Items of this column whose next symbol is ``sym`` (origins index ``origins``)."""
        dyn = self.by_next.get(sym)
        sta = self.static.by_next.get(sym, ())
        return dyn + sta if dyn else sta

    def kernel_items(self) -> list[tuple]:
        """Every item as ``(alternative, dot, origin Column)``."""
        origins = self.origins
        return [(a, d, origins[k]) for a, d, k in self.dynamic] + \
            [(a, d, self) for a, d, _ in self.static.items]

    def advance(self, terminals: frozenset, set_id: int | None = None) -> "Column | None":
        """The column after one lexeme matched by any of ``terminals`` (None when none fits).

        Ignored terminals leave the column unchanged; a lexeme that is both ignorable and an
        expected terminal gives the union of both outcomes. ``set_id`` is
        ``parser.terminal_set_id(terminals)`` when the caller has it.
        """
        parser = self.parser
        if set_id is None:
            set_id = parser.terminal_set_id(terminals)
        key = (self.id, set_id)
        col = parser.advanced.get(key)
        if col is not None:
            return None if col is DEAD else col
        col = parser._advance(self, terminals)
        parser.advanced.put(key, DEAD if col is None else col)
        return col

    def __repr__(self) -> str:
        return (f"Column(id={self.id}, items={len(self.dynamic) + len(self.static.items)}, "
                f"complete={self.complete})")


class EarleyParser:
    """Builds and interns Columns for one prepared grammar; thread-safe."""

    def __init__(self, grammar: PreparedGrammar, max_interned: int = 50_000,
                 max_advances: int = 100_000) -> None:
        self.grammar = grammar
        self.n_terminals = grammar.n_terminals
        n_symbols = grammar.n_terminals + len(grammar.nonterminal_names)
        lengths = np.array([len(r) for r in grammar.rhs], dtype=np.int32)
        starts = np.zeros(len(lengths) + 1, dtype=np.int32)
        np.cumsum(lengths, out=starts[1:])
        flat = np.fromiter((s for r in grammar.rhs for s in r), dtype=np.int32,
                           count=int(starts[-1]))
        nullable = np.zeros(n_symbols, dtype=np.uint8)
        nullable[list(grammar.nullable)] = 1
        self._c_grammar = _c_grammar(flat, starts, np.array(grammar.lhs, dtype=np.int32),
                                     nullable, grammar.n_terminals)
        self.max_interned = max_interned
        # (column id, terminal set id) -> next Column or DEAD
        self.advanced = LRUCache(max_advances)
        self._terminal_set_ids: dict[frozenset, int] = {}
        self._next_set_id = itertools.count()
        self._ids = itertools.count()
        self._interned: dict[tuple, Column] = {}
        self._static: dict[frozenset, _Predictions] = {}
        self._sets: dict[tuple, tuple] = {}
        self._lock = threading.Lock()
        start = grammar.lhs[0]
        self.initial = Column(self, [], next(self._ids), frozenset((start,)))

    def terminal_set_id(self, terminals: frozenset) -> int:
        """A small id for a terminal set (ids are never reused)."""
        sid = self._terminal_set_ids.get(terminals)
        if sid is not None:
            return sid
        with self._lock:
            if len(self._terminal_set_ids) >= 100_000:
                self._terminal_set_ids = {}
            return self._terminal_set_ids.setdefault(terminals, next(self._next_set_id))

    def _terminal_sets(self, next_symbols: frozenset, static: _Predictions) -> tuple:
        """(expected terminals, lexer candidates) of a column whose own items expect
        ``next_symbols``, shared by the columns that have them."""
        key = (next_symbols, static)
        sets = self._sets.get(key)
        if sets is None:
            n_term = self.n_terminals
            exp = frozenset(s for s in next_symbols if s < n_term) | static.expected
            sets = self._sets.setdefault(key, (exp, exp | self.grammar.ignore))
        return sets

    def _predictions(self, roots: frozenset) -> _Predictions:
        pred = self._static.get(roots)
        if pred is None:
            pred = self._static.setdefault(roots, _Predictions(self.grammar, roots))
        return pred

    def _column(self, kernel: list) -> Column:
        key = tuple(sorted([(a, d, o.id) for a, d, o in kernel]))
        col = self._interned.get(key)
        if col is None:
            col = Column(self, kernel, next(self._ids))
            with self._lock:
                if len(self._interned) >= self.max_interned:
                    self._interned.clear()
                col = self._interned.setdefault(key, col)
        return col

    def _advance(self, col: Column, terminals: frozenset) -> Column | None:
        ignore = self.grammar.ignore
        origins = col.origins
        kernel = set()
        for t in terminals:
            for a, d, k in col.expecting(t):
                kernel.add((a, d + 1, col if k < 0 else origins[k]))
        if not kernel:
            return col if terminals & ignore else None
        if terminals & ignore:
            kernel.update(col.kernel_items())
        return self._column(list(kernel))
