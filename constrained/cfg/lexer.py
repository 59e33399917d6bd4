"""The lexer of one candidate terminal set: the union DFA of its terminals.

At a lexeme start the candidates are the terminals the parser expects plus the ignored ones.
The lexer reads bytes while some candidate can still match an extension of the lexeme (every
terminal DFA is trimmed, so "some component alive" means exactly that); ``accepting_terms[q]``
names the candidates that fully match the lexeme in state ``q``. States are tuples of component
states numbered in BFS order from ``initial`` (0, the empty lexeme, never re-entered);
``max_states`` bounds the product. Transitions are kept per byte class (bytes every component
treats alike): ``table[q, byte_class[b]]``. The tables depend only on the terminals' automata and
are shared process-wide: JSON strings, numbers and literals recur in every schema's lexers.

A terminal of one literal text (a property name, a const) enters the product as its text, not
as an automaton: the product reads the chain off the text, so a lexer of many names builds
none of their automata.

The product is built whole on first use of its tables (``Lexer.build``): a mask whose tokens
only pass through a lexeme's first bytes (the tokens after an object's opening brace read the
start of its keys) walks the components directly, so a lexer that no text enters yet costs
nothing.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from ..automata import ByteDFA
from ..errors import LimitExceededError
from ..lru import LRUCache
from ._product import lexer_tables as _c_lexer_tables
from ..gc_untrack import untrack_all


class _Tables:
    """A product automaton's tables: they depend only on its component automata, so lexers of
    different grammars (and of one grammar's candidate sets) with the same ones share them,
    with the per-state facts the C walks learn about them."""

    __slots__ = ("table", "byte_class", "dense", "acc_class", "cross_class", "acc_list",
                 "members", "simulates_text", "text_chars", "text_cross", "components", "nbytes",
                 "infinite", "cycles", "memo", "rows")

    def __init__(self, n: int, trans, byte_class, comp_states, acc_class, cross, members,
                 cycles, sim, text_chars, text_cross, accepts: list, k: int) -> None:
        self.byte_class = np.frombuffer(byte_class, dtype=np.int32)
        self.table = np.frombuffer(trans, dtype=np.int32).reshape(n, -1)
        self.dense: np.ndarray | None = None        # see Lexer.trans
        self.acc_class = np.frombuffer(acc_class, dtype=np.int32)
        self.cross_class = np.frombuffer(cross, dtype=np.int32)
        self.acc_list = accepts                     # cross_class >= 0, as a list
        self.members = members
        # the walks' memos (writable): see Lexer.text_chars, Lexer.text_cross
        self.text_chars = np.frombuffer(text_chars, dtype=np.int16)
        self.text_cross = np.frombuffer(text_cross, dtype=np.int32)
        self.components = np.frombuffer(comp_states, dtype=np.int32).reshape(n, k)
        self.nbytes = len(trans) + len(comp_states)
        self.infinite: list[bool] | None = None     # see Lexer.infinite
        # uint8 per state: 1 where a cycle of the product is reachable
        self.cycles = np.frombuffer(cycles, dtype=np.uint8)
        # -1 unknown, 0 not reading every JSON string text (see Lexer.simulates_text): known
        # at once where finitely many texts lead on (no cycle reachable), so the walks need
        # not search there
        self.simulates_text = np.frombuffer(sim, dtype=np.int8)
        self.memo: dict = {}                        # see Lexer.memo
        # the rows as lists, converted as Python byte steps first read them (see _Rows)
        self.rows = _Rows(self.table, self.byte_class)
        untrack_all(self.acc_list, self.members, self.rows, self)


# component automata -> tables, for lexers up to _SHARED_BYTES (bounded: at most
# 512 x 1 MB, but most are a few KB)
_SHARED = LRUCache(512)
_SHARED_BYTES = 1 << 20


def _product_tables(keys: tuple, comps: tuple[bytes | ByteDFA, ...],
                    max_states: int) -> _Tables | None:
    """The product tables of ``comps`` (automata, or texts standing for their chains; None past
    ``max_states``), shared process-wide."""
    tables = _SHARED.get(keys)
    if tables is not None and len(tables.table) <= max_states:
        return tables
    tables, classes, accepting, initial = [], [], [], []
    for d in comps:
        if isinstance(d, bytes):
            tables.append(d)
            classes.append(None)
            accepting.append(None)
            initial.append(0)
        else:
            tables.append(d.transitions)
            classes.append(d.byte_classes)
            accepting.append(d.accepting)
            initial.append(d.initial)
    n, *arrays = _c_lexer_tables(tables, classes, accepting,
                                 np.array(initial, dtype=np.int32), max_states)
    if n < 0:
        return None
    tables = _Tables(n, *arrays, len(comps))
    if tables.nbytes <= _SHARED_BYTES:
        _SHARED.put(keys, tables)
    return tables


# what a Lexer reads off its product tables (built on first use: see Lexer.build)
_TABLE_ATTRS = frozenset({"table", "byte_class", "rows", "class_terms", "_acc_class",
                          "cross_class", "acc_list", "simulates_text", "text_chars",
                          "text_cross", "components", "_tables"})


class Lexer:
    """Union DFA over the terminals ``terms`` (see the module docstring). ``words[t]``, where
    given and not None, is the one text terminal ``t`` matches.

    The product tables are built on first use of any of them (``build``), or taken at once
    when a lexer of the same components already built them: a walk that only passes through
    this lexer's first bytes can read its components directly (``parts``, see
    token_tables.walk_subtrees) without building the product."""

    def __init__(self, terms: frozenset[int], dfas: Sequence[ByteDFA], max_states: int = 20_000,
                 words: Sequence[bytes | None] | None = None) -> None:
        self.terms = terms
        order = sorted(terms)
        # per component: its one text (bytes), or its automaton
        self.parts: tuple[bytes | ByteDFA, ...] = tuple(
            dfas[t] if words is None or words[t] is None else words[t] for t in order)
        # what each component is, as a cache key: its text or its automaton's digest
        self.keys: tuple[bytes | str, ...] = tuple(c if isinstance(c, bytes) else c.key
                                                   for c in self.parts)
        self.order: tuple[int, ...] = tuple(order)      # terminal of each component
        self.initial = 0
        self._max_states = max_states
        tables = _SHARED.get(self.keys)
        if tables is not None and len(tables.table) <= max_states:
            self._attach(tables)
        # arrays, automata and sets of ints: nothing here refers back to a lexer
        untrack_all(self, self.parts)

    @property
    def built(self) -> bool:
        """Whether the product tables are there (reading any of them builds them)."""
        return "_tables" in self.__dict__

    def build(self) -> None:
        """Build the product tables (LimitExceededError past ``max_states``). Threads that
        build one lexer at once each attach tables of equal content (the product is
        deterministic), the last one staying."""
        if self.built:
            return
        tables = _product_tables(self.keys, self.parts, self._max_states)
        if tables is None:
            raise LimitExceededError(
                f"the lexer for terminals {self._names(self.order)} needs more than "
                f"max_lexer_states={self._max_states} states")
        self._attach(tables)

    def __getattr__(self, name: str):
        # only called for attributes not set yet: the tables' on first use
        if name in _TABLE_ATTRS and "_tables" not in self.__dict__:
            self.build()
            return getattr(self, name)
        raise AttributeError(f"'Lexer' object has no attribute {name!r}")

    def _attach(self, tables: "_Tables") -> None:
        order = self.order
        # successors per byte class: ``table[q, byte_class[b]]`` is the state after byte b
        self.table = tables.table
        self.byte_class = tables.byte_class
        self.rows = tables.rows
        # states with the same accepted terminal set end a lexeme alike: one class each
        self.class_terms: list[frozenset[int]] = [frozenset(map(order.__getitem__, m))
                                                  for m in tables.members]
        untrack_all(self.class_terms, *self.class_terms)
        self._acc_class = tables.acc_class
        # for the C walks: the class a lexeme ending in each state completes, -1 if none
        self.cross_class = tables.cross_class
        self.acc_list: list[bool] = tables.acc_list
        # per state: -1 unknown, else whether it keeps reading any JSON string text (C walks)
        self.simulates_text = tables.simulates_text
        # per state: -1 unknown, else how many characters of such text it surely reads, whether
        # longer text dies or crosses into one class (C walks: ``chars_read`` in _walks.c)
        self.text_chars = tables.text_chars
        # and that class, once text_chars is known (-1: none)
        self.text_cross = tables.text_cross
        self.components = tables.components
        self._tables = tables       # last: ``built`` reads it
        untrack_all(self)           # (attributes set on an untracked object track it again)

    @cached_property
    def component_tables(self) -> tuple[list, list, np.ndarray]:
        """The components as ``_walks.walk_components`` reads them: per component its text or
        transition table, its accepting flags as bytes (None for a text), its initial state."""
        parts, accepting, initial = [], [], []
        for part in self.parts:
            if isinstance(part, bytes):
                parts.append(part)
                accepting.append(None)
                initial.append(0)
            else:
                parts.append(part.transitions)
                accepting.append(part.accepting.view(np.uint8))
                initial.append(part.initial)
        tables = (parts, accepting, np.array(initial, dtype=np.int32))
        untrack_all(parts, accepting, tables)     # arrays and texts
        return tables

    @cached_property
    def accepting_terms(self) -> list[frozenset[int]]:
        """Per state, the candidates that fully match the lexeme (empty: none)."""
        terms = self.class_terms
        out = [terms[c] for c in self._acc_class.tolist()]
        untrack_all(out)
        return out

    @property
    def infinite(self) -> list[bool]:
        """``infinite[q]``: whether infinitely many texts lead on from state ``q`` (computed
        for every state on first use, kept with the tables)."""
        tables = self._tables
        if tables.infinite is None:
            # the product of trimmed automata is trimmed: a reachable cycle is where
            # infinitely many texts lead on
            tables.infinite = tables.cycles.astype(bool).tolist()
            untrack_all(tables.infinite)
        return tables.infinite

    @property
    def memo(self) -> dict:
        """Facts about the tables that callers learn and keep (shared by every lexer with
        these tables)."""
        return self._tables.memo

    @property
    def n_states(self) -> int:
        return len(self.table)

    @property
    def trans(self) -> np.ndarray:
        """The transitions as a dense (states, 256) table (built on first use, kept with the
        tables: the walks read the class table)."""
        tables = self._tables
        if tables.dense is None:
            tables.dense = self.table[:, self.byte_class]
            tables.dense.setflags(write=False)
        return tables.dense

    @staticmethod
    def _names(order) -> str:
        return ", ".join(str(t) for t in order[:8]) + (" ..." if len(order) > 8 else "")


class _Rows(dict):
    """``rows[q][b]``: the lexer's transitions as Python lists, converted a row at a time (byte
    stepping in Python reads few rows; converting them all costs more than the walks). A dict
    of the rows converted so far, kept with the tables (every lexer of the same components, in
    any grammar, reads the same rows): reading one is a plain dict lookup, and a missing one
    is converted by ``__missing__``."""

    __slots__ = ("_table", "_byte_class")

    def __init__(self, table: np.ndarray, byte_class: np.ndarray) -> None:
        super().__init__()
        self._table = table
        self._byte_class = byte_class

    def __missing__(self, q: int) -> list[int]:
        if not 0 <= q < len(self._table):
            raise IndexError(f"lexer state {q} out of range")
        row = self[q] = self._table[q].take(self._byte_class).tolist()
        untrack_all(row, self)      # lists of ints (a list in a dict tracks the dict)
        return row
