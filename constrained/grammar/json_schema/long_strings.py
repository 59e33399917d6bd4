"""Strings with long length bounds as a chain of fixed-size chunks.

One terminal for ``maxLength: 4096`` would need automaton states for every counted
character. Instead the string is lexed in pieces of ``CHUNK`` characters: the opening quote
with the first chunk (``HEAD``), whole chunks (``BODY``), and a last piece with the closing
quote (``TAIL``, up to ``CHUNK`` characters); a string of at most ``CHUNK`` characters is
one terminal (``SHORT``). Rules count the chunks in binary (a rule for ``2**i`` chunks, and
"exactly n" / "at most n" chunks as sums of those), so the grammar grows with the logarithm
of the bound while every terminal stays small, and the lexer's states inside a chunk are
shared by all chunks.

Lexing stays exact under the greedy lexer: a ``HEAD`` or ``BODY`` lexeme ends exactly at
``CHUNK`` characters, where nothing else can continue except a ``TAIL`` that reads a closing
quote next (the longer match, which then wins).
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
        alts.extend((head, *rest) for rest in _after_head(_Counter(cv), lo, hi))
    return Symbol(b.rule(alts, "long_string"))


def _after_head(count: "_Counter", lo: int, hi: int | None) -> list[tuple[str, ...]]:
    """Alternatives for what follows the head: ``j - 1`` whole chunks and a tail, for every
    ``j`` (chunks before the tail) whose tail length range meets [lo, hi]."""
    def tail_range(j: int) -> tuple[int, int]:
        return max(0, lo - j * CHUNK), CHUNK if hi is None else min(CHUNK, hi - j * CHUNK)

    first = max(1, lo // CHUNK - 1)
    while tail_range(first)[0] > CHUNK:
        first += 1
    full_from = max(first, -(-lo // CHUNK))          # from here on the tail is unconstrained
    alts = [(*count.exactly(j - 1), count.tail(*tail_range(j)))
            for j in range(first, full_from) if tail_range(j)[0] <= tail_range(j)[1]]
    if hi is None:
        alts.append((*count.exactly(full_from - 1), count.loop()))
        return alts
    last = hi // CHUNK                                # the last j with a tail at all
    full_to = hi // CHUNK - 1                         # the last j with an unconstrained tail
    if full_from <= full_to:
        alts.append((*count.exactly(full_from - 1), *count.up_to(full_to - full_from),
                     count.tail(0, CHUNK)))
    for j in range(max(full_from, full_to + 1), last + 1):
        least, most = tail_range(j)
        if least <= most:
            alts.append((*count.exactly(j - 1), count.tail(least, most)))
    return alts


class _Counter:
    """Rules that count whole chunks with logarithmically many rules."""

    def __init__(self, cv: "Converter") -> None:
        self.b = cv.b
        self.body = self.b.terminal(f"{ANY_CHAR}{{{CHUNK}}}", "BODY")
        self._powers = [self.body]                   # rule i: 2**i chunks

    def tail(self, least: int, most: int) -> str:
        return self.b.terminal(f'{ANY_CHAR}{{{least},{most}}}"', "TAIL")

    def loop(self) -> str:
        """Any number of chunks, then a tail."""
        loop = self.b.reserve("chunks")
        self.b.define(loop, [(self.body, loop), (self.tail(0, CHUNK),)])
        return loop

    def power(self, i: int) -> str:
        while len(self._powers) <= i:
            half = self._powers[-1]
            self._powers.append(self.b.rule([(half, half)], "chunks"))
        return self._powers[i]

    def exactly(self, n: int, unit: int = 0) -> tuple[str, ...]:
        """Symbols reading exactly ``n`` times ``2**unit`` chunks."""
        return tuple(self.power(unit + i) for i in range(n.bit_length()) if n >> i & 1)

    def up_to(self, n: int, unit: int = 0) -> tuple[str, ...]:
        """A symbol reading 0 to ``n`` times ``2**unit`` chunks, unambiguously: a count
        ``2a + b`` is ``a`` pairs and ``b`` single units."""
        if n == 0:
            return ()
        one = self.power(unit)
        if n == 1:
            return (self.b.rule([(), (one,)], "chunks"),)
        pairs = self.up_to(n // 2 if n % 2 else n // 2 - 1, unit + 1)
        alts = [pairs, (*pairs, one)]
        if n % 2 == 0:
            alts.append(self.exactly(n // 2, unit + 1))
        return (self.b.rule(alts, "chunks"),)


# keywords whose values are subschemas the converter reads as parts of a value (a union's
# branches, members, items); a schema list is a list of subschemas
_PART_KEYWORDS = frozenset({"properties", "patternProperties", "items", "prefixItems",
                            "additionalProperties", "anyOf", "oneOf", "allOf"})
_NAMED_PARTS = ("properties", "patternProperties")     # (subschemas by name)
_UNIONS = ("anyOf", "oneOf")
# the types whose texts hold no quote (no string inside)
NOT_STRINGS = frozenset({"null", "boolean", "number", "integer"})


def bounds_past(lo: int, hi: int | None, limit: int) -> bool:
    """Whether string length bounds ``lo``..``hi`` (None: none) are past what one string
    terminal counts (``limit``, max_string_length): such strings are written in chunks."""
    return lo > limit or hi is not None and hi > max(limit, lo)


def union_meets_long_string(schema, limit: int) -> bool:
    """Whether ``schema`` surely has a union (anyOf, oneOf) with a branch that holds a string
    chunked for its length bounds (past ``limit``) and another branch that may hold a quote:
    then a conversion stops at that union and starts again with every string chunked
    (converter.ChunkEveryString), so it may as well start so. A guess from the schema's own
    words ($ref not followed): a wrong one changes only which exact grammar is written."""
    stack = [(schema, False)]
    while stack:
        s, in_union = stack.pop()
        if not isinstance(s, dict):
            continue
        if in_union and _long_bounds(s, limit):
            return True
        for keyword, sub in s.items():
            if keyword not in _PART_KEYWORDS:
                continue
            if sub.__class__ is dict and keyword in _NAMED_PARTS:
                stack.extend((x, in_union) for x in sub.values())
            elif sub.__class__ is list:
                branches = in_union or keyword in _UNIONS and len(sub) > 1 and sum(
                    1 for x in sub if _may_hold_quote(x)) > 1
                stack.extend((x, branches) for x in sub)
            else:
                stack.append((sub, in_union))
    return False


def _long_bounds(s: dict, limit: int) -> bool:
    """A plain string schema whose length bounds are written in chunks (Converter
    ._long_string)."""
    t = s.get("type")
    if not (t == "string" or isinstance(t, list) and "string" in t):
        return False
    if any(k in s for k in ("pattern", "format", "enum", "const", "not")):
        return False
    lo, hi = s.get("minLength", 0), s.get("maxLength")
    if not isinstance(lo, int) or not (hi is None or isinstance(hi, int) and hi >= lo):
        return False        # (bounds no string meets: no instance, nothing chunked)
    return bounds_past(lo, hi, limit)


def _may_hold_quote(s) -> bool:
    """Whether a branch's texts may hold a quote (not only null, booleans or numbers)."""
    if not isinstance(s, dict):
        return s is not False
    if "const" in s or "enum" in s:
        values = [s["const"]] if "const" in s else s["enum"]
        return not isinstance(values, list) or any(isinstance(v, (str, list, dict))
                                                    for v in values)
    t = s.get("type")
    if isinstance(t, str):
        return t not in NOT_STRINGS
    if isinstance(t, list):
        return any(x not in NOT_STRINGS for x in t)
    return True
