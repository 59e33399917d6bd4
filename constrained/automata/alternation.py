"""The alternatives of a regex that is a union at its top: ``A|B|C`` or ``(?:A|B|C)``.

A union's automaton is the union of its alternatives' automata, and each alternative's
automaton is cached on its own, so a terminal that unions pieces other terminals also use (a
nullable string, a value of several types) is built from those pieces instead of read anew.
Splitting is only done where it cannot change what the pattern means: no anchors, inline
flags, lookarounds or backreferences anywhere in the pattern.
"""
from __future__ import annotations

from functools import lru_cache

_UNSAFE_ESCAPES = frozenset("0123456789AZbBgkN")


def top_alternatives(pattern: str) -> list[str] | None:
    """The alternatives (two or more, none empty), or None when the pattern is not a union at
    its top or holds a construct whose meaning splitting could change."""
    parts = _split(pattern)
    return None if parts is None else list(parts)


@lru_cache(maxsize=4096)
def _split(pattern: str) -> tuple[str, ...] | None:
    """top_alternatives' answer, kept per pattern: preparation asks it of a terminal's pattern
    before building its automaton, and the builder asks again (and recurring patterns, such
    as a schema's value types, recur in every grammar of a front-end)."""
    n = len(pattern)
    depth = 0
    bars: dict[int, list[int]] = {0: [], 1: []}
    wrapped_to = -1            # where a group opened at position 0 closes
    in_class = False
    i = 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n or (not in_class and pattern[i + 1] in _UNSAFE_ESCAPES):
                return None
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            i += 1
            continue
        if c == "[":
            in_class = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":      # a "]" first in a class is a literal
                i += 1
            continue
        if c in "^$":
            return None
        if c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                return None
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and wrapped_to < 0 and pattern.startswith("(?:"):
                wrapped_to = i
        elif c == "|" and depth <= 1:
            bars[depth].append(i)
        i += 1
    if in_class or depth != 0:
        return None
    if bars[0]:
        cuts, lo, hi = bars[0], 0, n
    elif wrapped_to == n - 1 and bars[1]:
        cuts, lo, hi = bars[1], 3, n - 1
    else:
        return None
    edges = [lo - 1] + cuts + [hi]
    parts = tuple(pattern[a + 1:b] for a, b in zip(edges, edges[1:]))
    return parts if all(parts) else None
