"""The terminals' automata of a prepared grammar, literal ones built when first read.

Most terminals of a JSON Schema grammar are literals (property names, enum and const values),
and what grammar preparation needs to know of them holds without their automata: a literal's
language is a non-empty set of non-empty texts. Their automata are needed only by the lexers
that have them as candidates, so they are built there, on first read: a schema's compile does
not pay for the names of objects its first masks never reach.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..automata import ByteDFA


class TerminalDFAs(Sequence):
    """A read-only sequence of terminal automata: ``built[i]``, or ``build(i)`` (kept) where
    ``built[i]`` is None. Reading is thread-safe: two threads may both build an automaton,
    and either result is the same automaton."""

    __slots__ = ("_built", "_build")

    def __init__(self, built: list[ByteDFA | None], build: Callable[[int], ByteDFA]) -> None:
        self._built = built
        self._build = build

    def __len__(self) -> int:
        return len(self._built)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(len(self._built))[i])
        dfa = self._built[i]
        if dfa is None:
            dfa = self._built[i] = self._build(i if i >= 0 else i + len(self._built))
        return dfa

    def __repr__(self) -> str:
        pending = sum(1 for d in self._built if d is None)
        return f"TerminalDFAs({len(self._built)} automata, {pending} not built yet)"
