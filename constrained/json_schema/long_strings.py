"""Strings with long length bounds as a chain of fixed-size chunks.

One terminal for ``maxLength: 4096`` would need automaton states for every counted
character. Instead the string is lexed in pieces of ``CHUNK`` characters: the opening quote
with the first chunk (``HEAD``), whole chunks (``BODY``), and a last piece with the closing
quote (``TAIL``, up to ``CHUNK`` characters); a string of at most ``CHUNK`` characters is
one terminal (``SHORT``). Rules count the chunks, so the grammar grows linearly in the bound
(one rule per chunk) while every terminal stays small, and the lexer's states inside a chunk
are shared by all chunks.

Lexing stays exact under the greedy lexer: a ``HEAD`` or ``BODY`` lexeme ends exactly at
``CHUNK`` characters, where nothing else can continue except a ``SHORT``/``TAIL`` that reads a
closing quote next (the longer match, which then wins).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .builder import Piece, Symbol
from .chars import ANY_CHAR

if TYPE_CHECKING:
    from .converter import Converter

CHUNK = 32


def chunked_string(cv: "Converter", lo: int, hi: int | None) -> Piece:
    """JSON strings of ``lo`` to ``hi`` characters (``hi`` None: no upper bound)."""
    b = cv.b
    if hi is not None and hi < lo:
        return None
    alts = []
    if lo <= CHUNK:
        top = CHUNK if hi is None else min(hi, CHUNK)
        alts.append((b.terminal(f'"{ANY_CHAR}{{{lo},{top}}}"', "SHORT"),))
    if hi is None or hi > CHUNK:
        head = b.terminal(f'"{ANY_CHAR}{{{CHUNK}}}', "HEAD")
        alts.append((head, _after(cv, 1, lo, hi)))
    return Symbol(b.rule(alts, "long_string"))


def _after(cv: "Converter", chunks: int, lo: int, hi: int | None) -> str:
    """The rule for what follows ``chunks`` whole chunks: more chunks, then the tail."""
    b = cv.b
    if hi is None and chunks * CHUNK >= lo:    # every length from here on: one loop
        loop = b.reserve("chunks")
        tail = b.terminal(f'{ANY_CHAR}{{0,{CHUNK}}}"', "TAIL")
        body = b.terminal(f"{ANY_CHAR}{{{CHUNK}}}", "BODY")
        b.define(loop, [(body, loop), (tail,)])
        return loop
    levels = []
    j = chunks
    while hi is None or j * CHUNK <= hi:
        levels.append(j)
        if hi is None and j * CHUNK >= lo:
            break
        j += 1
    name = None
    for j in reversed(levels):
        done = j * CHUNK
        alts = []
        least = max(0, lo - done)
        most = CHUNK if hi is None else min(CHUNK, hi - done)
        if least <= most:
            alts.append((b.terminal(f'{ANY_CHAR}{{{least},{most}}}"', "TAIL"),))
        if name is not None:
            alts.append((b.terminal(f"{ANY_CHAR}{{{CHUNK}}}", "BODY"), name))
        elif hi is None:
            alts.append((b.terminal(f"{ANY_CHAR}{{{CHUNK}}}", "BODY"),
                         _after(cv, j + 1, lo, hi)))
        name = b.rule(alts, "chunks")
    return name
