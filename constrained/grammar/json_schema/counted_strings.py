"""Automata of JSON strings with counted lengths, built directly from one character's DFA.

``"(?:CHAR){lo,hi}"`` read through the regex pipeline costs a subset construction over every
counted position (tens of milliseconds for ``maxLength: 64``). The same DFA is a chain of copies
of the one-character DFA: finishing a character in copy ``i`` enters copy ``i + 1``, and the
closing quote leaves any copy ``lo <= i <= hi``. Built with array operations, minimal by
construction: numbered canonically it is exactly the DFA the regex pipeline gives.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

from ...automata._dfa_tables import class_columns
from ...automata.byte_dfa import ByteDFA, LanguageFacts, provide_builder, regex_to_byte_dfa
from ...automata.determinize import number_canonically_from
from ...gc_untrack import untrack_all
from .chars import ANY_CHAR

_SHAPE = re.compile('(")?' + re.escape(ANY_CHAR) + r'\{(\d+)(?:(,)(\d*))?\}(")?')
_QUOTE = ord('"')
_ENDS = ("}", '}"')          # how every pattern _SHAPE matches ends (a cheap first test)


def counted_pattern(lo: int, hi: int | None) -> str:
    """The pattern of JSON strings of ``lo`` to ``hi`` characters (None: no upper bound), in
    the shape whose automaton this module builds."""
    counts = f"{{{lo}}}" if lo == hi else f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}"
    return f'"{ANY_CHAR}{counts}"'


def counted_string_automaton(pattern: str) -> ByteDFA | None:
    """The DFA of ``pattern`` when it is ``CHAR{lo,hi}`` with optional quotes around it (as
    the converter writes counted strings and their chunks); None for any other pattern."""
    shape = _shape(pattern)
    return None if shape is None else _build(pattern, *shape)


def counted_string_facts(pattern: str, max_states: int) -> LanguageFacts | None:
    """What a counted string's language holds, known from its pattern (so a grammar builds
    its automaton only when a lexer first reads it), where the automaton has at most
    ``max_states`` states; None for other patterns."""
    shape = _shape(pattern)
    if shape is None:
        return None
    opening, lo, hi, closing = shape
    full = max(lo, 1) if hi is None else hi
    if 2 + opening + full * _char_states() > max_states:
        return None
    return LanguageFacts(texts=opening or closing or hi != 0,
                         empty_text=not opening and not closing and lo == 0)


def _shape(pattern: str) -> tuple[bool, int, int | None, bool] | None:
    """(opening quote, lo, hi, closing quote) of a counted string's pattern, else None."""
    m = _SHAPE.fullmatch(pattern) if pattern.endswith(_ENDS) else None
    if m is None:
        return None
    lo = int(m.group(2))
    hi = lo if m.group(3) is None else (None if not m.group(4) else int(m.group(4)))
    if hi is not None and hi < lo:
        return None
    return bool(m.group(1)), lo, hi, bool(m.group(5))


@lru_cache(maxsize=1)
def _char_states() -> int:
    return regex_to_byte_dfa(ANY_CHAR).n_states


@lru_cache(maxsize=512)
def _build(pattern: str, opening: bool, lo: int, hi: int | None, closing: bool) -> ByteDFA:
    char = regex_to_byte_dfa(ANY_CHAR)
    done = int(np.flatnonzero(char.accepting)[0])      # the state after one whole character
    keep = np.flatnonzero(np.arange(char.n_states) != done)
    index = np.full(char.n_states, -1, dtype=np.int32)
    index[keep] = np.arange(len(keep), dtype=np.int32)
    n = len(keep)                                       # states of one copy (no "done")
    q0 = int(index[char.initial])
    inner = char.transitions[keep]
    local = index[np.maximum(inner, 0)]                 # a copy's rows, numbered from 0
    finish = inner == done                              # a character ends: the next copy
    dead = inner < 0
    base = 1 if opening else 0                          # state 0: before the opening quote
    # copies 0 .. full-1 of the character's states; ``top``: the state after the last copy
    # (hi characters read, or at least lo for {lo,}, whose characters run in copy lo-1)
    full = max(lo, 1) if hi is None else hi
    top = base + full * n
    final = top + 1                                     # after the closing quote
    trans = np.empty((final + 1, 256), dtype=np.int32)    # every row written below
    trans[:base] = -1
    trans[top:] = -1
    acc = np.zeros(final + 1, dtype=bool)

    # a copy's rows relative to its first state: a finished character enters the next copy,
    # dead bytes lie far below zero (still negative once offset, then clipped to -1)
    rel = local.copy()
    rel[finish] = n + q0
    rel[dead] = -(1 << 30)

    def place(out: np.ndarray, rows, off, after=None) -> None:
        """Write the copies' ``rows`` into ``out`` at offsets ``off`` (one per copy when copies
        are stacked on the first axis); ``after``: where a finished character goes instead of
        the next copy."""
        np.add(rel[rows], off, out=out)
        np.maximum(out, -1, out=out)
        if after is not None:
            np.copyto(out, after, where=finish[rows])

    if full:
        # every copy in one pass, but the last copy's character ends after the last copy
        # ({0,}: copy 0 loops)
        body = trans[base:top].reshape(full, n, 256)
        place(body, slice(None), (base + n * np.arange(full, dtype=np.int32)).reshape(full, 1, 1))
        np.copyto(body[-1], base + q0 if hi is None and lo == 0 else top, where=finish)
    if hi is None and lo == 0:
        ends = [base + q0]
    elif hi is None:
        ends = [top]
        place(trans[top], q0, base + (lo - 1) * n, top)
    else:
        ends = [base + i * n + q0 for i in range(lo, full)] + [top]
    if closing:
        trans[ends, _QUOTE] = final
        acc[final] = True
    else:
        acc[ends] = True
    first = base + q0 if full else top                  # after the opening quote
    if opening:
        trans[0, _QUOTE] = first
    start = 0 if opening else first
    # the chain is minimal already (copies differ in the characters left, a copy's states are
    # the character DFA's, every state reaches acceptance). With a closing quote and a last
    # copy that does not loop, every state is reachable too: the table is used as laid out
    # (numbering it canonically would cost a pass over every row and a second table); else
    # numbering it drops the unreachable rows
    if closing and not (hi is None and lo == 0):
        table, accepting, initial = trans, acc, start
        origin = np.arange(final + 1, dtype=np.int32)
    else:
        table, accepting, initial, origin = number_canonically_from(trans, acc, start)
    dfa = ByteDFA(table, accepting, initial, pattern)
    # the automaton is a function of its pattern: so is its cache key (digesting the pattern
    # costs nothing, reading the table's columns costs a pass over every copy); and every copy
    # reads the bytes as the first one does, so the byte classes come from the rows before
    # the second copy and those from ``top`` on
    dfa.__dict__["key"] = hashlib.sha256(b"counted-v2|" + pattern.encode()).hexdigest()
    rows = np.vstack([trans[:base + n * min(full, 1)], trans[top:]])
    classes = np.zeros(256, dtype=np.int32)
    class_columns(np.ascontiguousarray(rows), classes)
    classes.setflags(write=False)
    dfa.__dict__["byte_classes"] = classes
    # names of the states' futures (ByteDFA.given_future): lexers share the root walks of
    # the positions of every counted string and chunk with as many characters left
    dfa.__dict__["state_futures"] = _ChainFutures(origin, opening, lo, hi, closing, base, n,
                                                  q0, top, final)
    return dfa


class _ChainFutures:
    """Names of what a counted string's automaton accepts from each of its states: states of
    any chains with equal names accept the same texts from there on (``names[state]``)."""

    __slots__ = ("_origin", "_params")

    def __init__(self, origin: np.ndarray, *params) -> None:
        self._origin = origin           # the chain's layout state of each automaton state
        self._params = params
        untrack_all(self)               # an array and ints

    def __getitem__(self, state: int) -> tuple:
        opening, lo, hi, closing, base, n, q0, top, final = self._params
        x = int(self._origin[state])
        if opening and x == 0:
            return ("counted-v1 before the quote", lo, hi, closing)
        if x == final:
            return ("counted-v1 closed",)
        if x == top:                    # hi characters read, or at least lo for {lo,}
            i, j = (lo if hi is None else hi), q0
        else:
            i, j = divmod(x - base, n)  # copy i (i characters read), character state j
        # from a character's start: CHAR{lo - i, hi - i}; inside one: its rest, then one less
        return ("counted-v1", closing, j, max(lo - i, 0), None if hi is None else hi - i)


# also where a counted string is one alternative of a union
provide_builder(counted_string_automaton, counted_string_facts)
