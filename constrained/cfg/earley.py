"""Earley recognizer over terminals, with columns as immutable, interned snapshots.

A ``Column`` is the Earley item set after some sequence of lexemes. Items are
``(alternative, dot, origin)`` where ``origin`` is an earlier Column (or ``None``: this column).
Columns never change once built, so a parser state is just a Column reference (rollback is free)
and ``advance(terminals)`` memoizes its result per column.

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
from typing import Iterable

from .prepare import PreparedGrammar

Item = tuple  # (alternative, dot, origin Column | None)


class Column:
    """An immutable Earley item set (see the module docstring)."""

    __slots__ = ("id", "parser", "items", "by_next", "expected", "candidates", "complete",
                 "_advance",
                 "__weakref__")

    def __init__(self, parser: "EarleyParser", kernel: Iterable[Item], cid: int) -> None:
        self.id = cid
        self.parser = parser
        g = parser.grammar
        rhs, lhs, by_lhs, nullable = g.rhs, g.lhs, g.by_lhs, g.nullable
        n_term = g.n_terminals
        items: set = set()
        by_next: dict[int, list] = {}
        predicted: set[int] = set()
        agenda = []
        for it in kernel:
            if it not in items:
                items.add(it)
                agenda.append(it)
        while agenda:
            a, d, o = it = agenda.pop()
            r = rhs[a]
            if d < len(r):
                s = r[d]
                lst = by_next.get(s)
                if lst is None:
                    by_next[s] = [it]
                else:
                    lst.append(it)
                if s >= n_term:
                    if s not in predicted:
                        predicted.add(s)
                        for a2 in by_lhs.get(s, ()):
                            new = (a2, 0, None)
                            if new not in items:
                                items.add(new)
                                agenda.append(new)
                    if s in nullable:
                        new = (a, d + 1, o)
                        if new not in items:
                            items.add(new)
                            agenda.append(new)
            elif o is not None:
                for a2, d2, o2 in o.by_next.get(lhs[a], ()):
                    new = (a2, d2 + 1, o if o2 is None else o2)
                    if new not in items:
                        items.add(new)
                        agenda.append(new)
        self.items = frozenset(items)
        self.by_next = by_next
        self.expected = frozenset(s for s in by_next if s < n_term)
        self.candidates = self.expected | g.ignore
        self.complete = any(a == 0 and d == 1 for a, d, _ in items)
        self._advance: dict[frozenset, Column | None] = {}

    def advance(self, terminals: frozenset) -> "Column | None":
        """The column after one lexeme matched by any of ``terminals`` (None when none fits).

        Ignored terminals leave the column unchanged; a lexeme that is both ignorable and an
        expected terminal gives the union of both outcomes.
        """
        try:
            return self._advance[terminals]
        except KeyError:
            pass
        col = self.parser._advance(self, terminals)
        if len(self._advance) < 256:
            self._advance[terminals] = col
        return col

    def __repr__(self) -> str:
        return f"Column(id={self.id}, items={len(self.items)}, complete={self.complete})"


class EarleyParser:
    """Builds and interns Columns for one prepared grammar; thread-safe."""

    def __init__(self, grammar: PreparedGrammar, max_interned: int = 200_000) -> None:
        self.grammar = grammar
        self.max_interned = max_interned
        self._ids = itertools.count()
        self._interned: dict[frozenset, Column] = {}
        self._lock = threading.Lock()
        self.initial = self._column(((0, 0, None),))

    def _column(self, kernel: tuple) -> Column:
        key = frozenset((a, d, -1 if o is None else o.id) for a, d, o in kernel)
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
        kernel = []
        for t in terminals:
            for a, d, o in col.by_next.get(t, ()):
                kernel.append((a, d + 1, col if o is None else o))
        if not kernel:
            return col if terminals & ignore else None
        if terminals & ignore:
            kernel.extend((a, d, col if o is None else o) for a, d, o in col.items)
        return self._column(tuple(set(kernel)))
