"""Collects rules and terminals while a schema is converted; shares identical ones."""
from __future__ import annotations

from dataclasses import dataclass

from ...automata.byte_dfa import ByteDFA
from ...errors import LimitExceededError
from .._grammar import Terminal


@dataclass(frozen=True)
class Regular:
    """A value that is one regular language: the full matches of ``pattern`` that match none
    of ``exclude`` (becomes one terminal; pieces without exclusions merge in unions)."""

    pattern: str
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Symbol:
    """A value that is a rule (objects, arrays, references)."""

    name: str


Piece = Regular | Symbol | None  # None: no instance at all


class GrammarBuilder:
    """Rules (name -> alternatives) and terminals (deduplicated by pattern)."""

    def __init__(self, max_rules: int) -> None:
        self.rules: dict[str, tuple[tuple[str, ...], ...]] = {}
        self.terminals: dict[str, Terminal] = {}
        self._by_pattern: dict[tuple, str] = {}
        self._by_alts: dict[tuple, str] = {}
        self._count = 0
        self._max_rules = max_rules
        self.distinct_arrays: list[str] = []   # terminals opening arrays of distinct strings

    def terminal(self, pattern: str, hint: str = "T", exclude: tuple[str, ...] = (),
                 automaton: ByteDFA | None = None, opens_distinct: bool = False) -> str:
        """The terminal of ``pattern``'s full matches minus those of ``exclude``
        (``automaton``: the pattern's DFA, when built directly; a counted string's is built
        when a lexer first reads it, see counted_strings). ``opens_distinct``: a terminal of
        its own that opens arrays of distinct strings (Grammar.distinct_arrays)."""
        key = (pattern, exclude, opens_distinct)
        name = self._by_pattern.get(key)
        if name is None:
            name = hint if hint not in self.terminals else f"{hint}_{len(self.terminals)}"
            self.terminals[name] = Terminal._plain(name, pattern, exclude, automaton)
            self._by_pattern[key] = name
            if opens_distinct:
                self.distinct_arrays.append(name)
        return name

    def reserve(self, hint: str) -> str:
        self._count += 1
        if self._count > self._max_rules:
            raise LimitExceededError(f"grammar exceeds {self._max_rules} rules (max_rules)")
        return f"{hint}_{self._count}"

    def reserve_all(self, hints) -> tuple[str, ...]:
        """``reserve`` for each of ``hints``, in order."""
        first = self._count + 1
        self._count += len(hints)
        if self._count > self._max_rules:
            raise LimitExceededError(f"grammar exceeds {self._max_rules} rules (max_rules)")
        return tuple([f"{hint}_{i}" for i, hint in enumerate(hints, first)])

    def define(self, name: str, alts) -> str:
        self.rules[name] = tuple(tuple(a) for a in alts)
        return name

    def define_tuples(self, name: str, alts: tuple[tuple[str, ...], ...]) -> str:
        """``define`` for alternatives that are already tuples of tuples."""
        self.rules[name] = alts
        return name

    def rule(self, alts, hint: str = "r") -> str:
        """A rule with these alternatives; an identical existing rule is reused."""
        key = tuple(tuple(a) for a in alts)
        name = self._by_alts.get(key)
        if name is None:
            name = self.define(self.reserve(hint), key)
            self._by_alts[key] = name
        return name

    def symbol(self, piece: Piece, hint: str = "T") -> str:
        """The grammar symbol standing for a piece (a terminal for a regular piece)."""
        if isinstance(piece, Regular):
            return self.terminal(piece.pattern, hint, piece.exclude)
        if isinstance(piece, Symbol):
            return piece.name
        return self.never()

    def never(self) -> str:
        """A rule with no sentences (used where a schema admits no instance)."""
        if "never" not in self.rules:
            self.rules["never"] = (("never",),)
        return "never"
