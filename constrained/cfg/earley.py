"""Earley recognizer over terminals, with columns as immutable, interned snapshots.

A ``Column`` is the Earley item set after some sequence of lexemes. Items are
``(alternative, dot, origin)`` where ``origin`` indexes the column's ``origins`` (earlier
Columns), or is -1 for this column. Advancing a column and closing the new kernel run in C
(``_earley.c``), which packs the items into bytes (int32 triples): the garbage collector does not
track bytes, and a long generation creates many columns whose items every collection would
otherwise walk.

Columns never change once built, so a parser state is just a Column reference (rollback is free)
and ``EarleyParser.advance(column, terminals)`` results are memoized by the parser in a bounded cache (a column keeps
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
from array import array
from bisect import bisect_left

import numpy as np

from ..errors import LimitExceededError
from ._earley import advance as _c_advance
from ._earley import closure as _c_closure
from ._earley import grammar as _c_grammar
from ._earley import predictions as _c_predictions
from ..lru import LRUCache
from ..gc_untrack import untrack_all
from .prepare import PreparedGrammar

Item = tuple  # (alternative, dot, origin index | -1)

DEAD = object()     # a memoized advance that fits no item


class _Predictions:
    """The closure of predicting a set of nonterminals: items ``(alt, dot, -1)`` only.

    Predicted items start in the column being built, so (with nullable rules advanced at
    prediction time) their closure never depends on earlier columns: it is computed once per
    set of directly predicted nonterminals (in C, ``_earley.predictions``) and shared by every
    column predicting that set.
    """

    __slots__ = ("by_next", "expected", "complete", "_packed", "_items")

    def __init__(self, c_grammar, roots: bytes) -> None:
        """``roots``: the predicted nonterminals (int32 bytes)."""
        self._packed, self.by_next, expected, self.complete = _c_predictions(c_grammar, roots)
        self.expected = frozenset(_symbols(expected))
        self._items: frozenset | None = None
        untrack_all(self.expected, self)

    @property
    def items(self) -> frozenset:
        """The items as ``(alternative, dot, -1)`` tuples."""
        if self._items is None:
            self._items = frozenset(_unpack(self._packed))
            untrack_all(self._items)
        return self._items


class Column:
    """An immutable Earley item set (see the module docstring).

    Items with a real origin are kept per column; items predicted here (origin -1) come from a
    shared ``_Predictions`` object. A column refers only to older columns (its origins), never
    to its parser or to later columns, so columns form no cycles: the garbage collector does not
    track them (reference counting frees them), which keeps collections cheap in processes with
    large heaps however many columns a generation creates.
    """

    __slots__ = ("id", "origins", "dynamic", "by_next", "static", "expected",
                 "candidates", "complete", "_core", "__weakref__")

    def __init__(self, parser: "EarleyParser", cid: int, closed: tuple,
                 static: _Predictions) -> None:
        """``closed``: what ``_earley.closure`` / ``_earley.advance`` return for a new kernel
        (the closure under nullable steps and completions through the origins runs in C);
        ``static``: the shared closure of the nonterminals it predicts."""
        self.id = cid
        _, self.origins, self.dynamic, self.by_next, _, started, next_symbols = closed
        self.static = static
        self.expected, self.candidates = parser._terminal_sets(next_symbols, static)
        # the start alternative is only ever predicted in the initial column
        self.complete = static.complete or started
        self._core: frozenset | None = None
        untrack_all(self)

    def core(self) -> frozenset:
        """The column's items without their origins: equal for columns that differ only in
        what lies below them (a search key that merges nesting depths)."""
        if self._core is None:
            self._core = frozenset((a, d) for a, d, _ in _unpack(self.dynamic))
        return self._core

    def expecting(self, sym: int) -> tuple:
        """Items of this column whose next symbol is ``sym`` (origins index ``origins``)."""
        return _unpack(self.by_next.get(sym, b"") + self.static.by_next.get(sym, b""))

    def __repr__(self) -> str:
        return (f"Column(id={self.id}, items={len(self.dynamic) // 12 + len(self.static.items)}, "
                f"complete={self.complete})")


def _pack(grammar: PreparedGrammar) -> tuple:
    """The alternatives as the C parser reads them (see PreparedGrammar.packed)."""
    lengths = np.fromiter(map(len, grammar.rhs), dtype=np.int32, count=len(grammar.rhs))
    starts = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=starts[1:])
    flat = np.fromiter(itertools.chain.from_iterable(grammar.rhs), dtype=np.int32,
                       count=int(starts[-1]))
    nullable = np.zeros(grammar.n_terminals + len(grammar.nonterminal_names), dtype=np.uint8)
    nullable[list(grammar.nullable)] = 1
    return flat, starts, np.array(grammar.lhs, dtype=np.int32), nullable


class EarleyParser:
    """Builds and interns Columns for one prepared grammar; thread-safe."""

    def __init__(self, grammar: PreparedGrammar, max_interned: int = 50_000,
                 max_advances: int = 100_000) -> None:
        self.grammar = grammar
        self.n_terminals = grammar.n_terminals
        if grammar.packed is not None:
            flat, starts, lhs, nullable = grammar.packed
            packed = (np.frombuffer(flat, dtype=np.int32), np.frombuffer(starts, dtype=np.int32),
                      np.frombuffer(lhs, dtype=np.int32), np.frombuffer(nullable, dtype=np.uint8))
        else:
            packed = _pack(grammar)
        self._c_grammar = _c_grammar(*packed, grammar.n_terminals)
        self.max_interned = max_interned
        # column id << 32 | terminal set id -> next Column or DEAD (an int key: a tuple would be
        # one more object for the garbage collector to track per entry)
        self.advanced = LRUCache(max_advances)
        self._terminal_set_ids: dict[frozenset, int] = {}
        self._next_set_id = itertools.count()
        self._ids = itertools.count()
        self._interned: dict[bytes, Column] = {}       # kernel key -> Column
        self._static: dict[bytes, _Predictions] = {}   # predicted nonterminals -> closure
        self._sets: dict[tuple, tuple] = {}
        self._lock = threading.Lock()
        self._runs = LRUCache(max_interned)        # column id -> the column after a run
        self._run_base = LRUCache(max_interned)    # and back
        # the initial column predicts the start symbol (its kernel is empty, never interned)
        closed = _c_closure(self._c_grammar, [], None, None)
        start = grammar.lhs[0]
        roots = sorted(frozenset(_symbols(closed[4])) | {start})
        self.initial = Column(self, next(self._ids), closed,
                              _Predictions(self._c_grammar, _pack_symbols(roots)))

    def advance(self, col: Column, terminals: frozenset,
                set_id: int | None = None) -> Column | None:
        """The column after ``col`` and one lexeme matched by any of ``terminals`` (None when
        none fits).

        Ignored terminals leave the column unchanged; a lexeme that is both ignorable and an
        expected terminal gives the union of both outcomes. ``set_id`` is
        ``terminal_set_id(terminals)`` when the caller has it.
        """
        if set_id is None:
            set_id = self.terminal_set_id(terminals)
        key = col.id << 32 | set_id
        nxt = self.advanced.get(key)
        if nxt is not None:
            return None if nxt is DEAD else nxt
        nxt = self._advance(col, terminals)
        self.advanced.put(key, DEAD if nxt is None else nxt)
        return nxt

    def terminal_set_id(self, terminals: frozenset) -> int:
        """A small id for a terminal set (ids are never reused, and stay below 2**32: the
        advance memo packs them with column ids into one int)."""
        sid = self._terminal_set_ids.get(terminals)
        if sid is not None:
            return sid
        with self._lock:
            if len(self._terminal_set_ids) >= 100_000:
                self._terminal_set_ids = {}
            sid = self._terminal_set_ids.get(terminals)
            if sid is None:
                sid = next(self._next_set_id)
                if sid >= 1 << 32:
                    raise LimitExceededError("more than 2**32 terminal sets were numbered by one "
                                             "parser; compile the grammar again")
                self._terminal_set_ids[terminals] = sid
            return sid

    def _terminal_sets(self, next_symbols: bytes, static: _Predictions) -> tuple:
        """(expected terminals, lexer candidates) of a column whose own items expect
        ``next_symbols`` (sorted int32 bytes), shared by the columns that have them."""
        key = (next_symbols, static)
        sets = self._sets.get(key)
        if sets is None:
            symbols = _symbols(next_symbols)     # sorted: the terminals come first
            exp = frozenset(symbols[:bisect_left(symbols, self.n_terminals)]) | static.expected
            sets = (exp, exp | self.grammar.ignore)
            untrack_all(exp, sets[1], sets, key)
            sets = self._sets.setdefault(key, sets)
        return sets

    def _predictions(self, predicted: bytes) -> _Predictions:
        """The shared closure of predicting ``predicted`` (sorted int32 bytes)."""
        pred = self._static.get(predicted)
        if pred is None:
            pred = self._static.setdefault(predicted, _Predictions(self._c_grammar, predicted))
        return pred

    def _intern(self, closed: tuple) -> Column:
        """A new Column for a closed kernel, interned under its key."""
        col = Column(self, next(self._ids), closed, self._predictions(closed[4]))
        with self._lock:
            if len(self._interned) >= self.max_interned:
                self._interned.clear()
            return self._interned.setdefault(closed[0], col)

    def _advance(self, col: Column, terminals: frozenset) -> Column | None:
        if terminals & self.grammar.ignore:
            return self._advance_ignorable(col, terminals)
        got = _c_advance(self._c_grammar, col, terminals, self._interned, self.initial)
        if got is None or got.__class__ is Column:
            return got
        return self._intern(got)

    def _after_run(self, col: Column) -> Column:
        """``col`` after a run of bounded ignored whitespace: the same items, but that
        whitespace is no lexer candidate until another lexeme is read (the run is over; a
        longer one would have been one lexeme)."""
        bounded = self.grammar.bounded_ignore
        if col is self.initial or col.candidates.isdisjoint(bounded):
            return col      # (the start item must keep the initial column as its origin)
        got = self._runs.get(col.id)
        if got is None:
            got = Column.__new__(Column)
            for name in ("origins", "dynamic", "by_next", "static", "expected", "complete",
                         "_core"):
                setattr(got, name, getattr(col, name))
            got.candidates = col.candidates - bounded
            with self._lock:
                got.id = next(self._ids)
            untrack_all(got)
            got = self._runs.put(col.id, got)
            self._run_base.put(got.id, col)
        return got

    def _advance_ignorable(self, col: Column, terminals: frozenset) -> Column | None:
        """A lexeme that ignored terminals match leaves ``col`` as it is, besides advancing it
        over the expected ones."""
        got = _c_advance(self._c_grammar, col, terminals, self._interned, self.initial, True)
        if got is None:
            if self.grammar.bounded_ignore and terminals <= self.grammar.bounded_ignore:
                return self._after_run(col)
            return self._run_base.get(col.id) or col
        return got if got.__class__ is Column else self._intern(got)


# the array typecode of a 32-bit int (lists of a few symbols convert faster than with numpy)
_INT32 = next(code for code in "ilh" if array(code).itemsize == 4)


def _symbols(packed: bytes) -> list[int]:
    return array(_INT32, packed).tolist()


def _pack_symbols(symbols: list[int]) -> bytes:
    return np.array(symbols, dtype=np.int32).tobytes()


def _unpack(packed: bytes) -> list[tuple]:
    return [tuple(t) for t in np.frombuffer(packed, dtype=np.int32).reshape(-1, 3).tolist()]
