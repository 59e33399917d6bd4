"""JSON Schema ``pattern`` (ECMA-262 regex, unanchored search) -> regex over encoded JSON text.

The pattern is parsed with Python's regex parser and re-emitted with every character set
replaced by the regex of its JSON encodings (chars.json_char), so the terminal matches the
encoded string exactly when the decoded string matches the pattern. ECMA meanings are used
for ``\\d``, ``\\w``, ``\\s`` and ``.``. Backreferences and lookaround are refused;
a ^ or $ that is not at an end of the pattern never matches there.
"""
from __future__ import annotations

import re
from functools import lru_cache
import re._constants as C  # type: ignore[import-not-found]
import re._parser as P  # type: ignore[import-not-found]

from ...automata.utf8 import ASCII_DIGIT, ASCII_WORD
from . import chars

_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
          (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
          (0xFEFF, 0xFEFF))
_NEWLINES = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_CATEGORIES = {C.CATEGORY_DIGIT: (ASCII_DIGIT, False), C.CATEGORY_NOT_DIGIT: (ASCII_DIGIT, True),
               C.CATEGORY_WORD: (ASCII_WORD, False), C.CATEGORY_NOT_WORD: (ASCII_WORD, True),
               C.CATEGORY_SPACE: (_SPACE, False), C.CATEGORY_NOT_SPACE: (_SPACE, True)}


class PatternError(ValueError):
    """The pattern uses a construct that cannot become a regular terminal."""


@lru_cache(maxsize=256)
def parse(pattern: str):
    """Parse an ECMA pattern with Python's parser (named groups rewritten); PatternError if not.
    Cached (schemas repeat patterns and formats): callers only read the tree."""
    text = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    try:
        tree = P.parse(text)
    except (re.error, OverflowError, RecursionError) as e:
        raise PatternError(f"cannot parse pattern {pattern!r}: {e}") from None
    if tree.state.flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE):
        raise PatternError(f"inline flags are not supported in pattern {pattern!r}")
    return tree


@lru_cache(maxsize=1024)
def width(pattern: str) -> tuple[int, int | None]:
    """Min and max decoded length of the strings the (anchored) pattern matches."""
    lo, hi = parse(pattern).getwidth()
    return lo, (None if hi >= C.MAXREPEAT else hi)


@lru_cache(maxsize=1024)
def is_anchored(pattern: str) -> bool:
    """True when the pattern is ^...$ as a whole, so its match is the whole string."""
    items = list(parse(pattern))
    return (len(items) >= 2 and items[0] == (C.AT, C.AT_BEGINNING)
            and items[-1][0] == C.AT and items[-1][1] in (C.AT_END, C.AT_END_STRING))


@lru_cache(maxsize=1024)
def pattern_body(pattern: str) -> str | None:
    """Regex over encoded string content whose decoded text contains a match of ``pattern``
    (None when no string does)."""
    tree = parse(pattern)
    out = []
    for seq in _alternatives(list(tree)):
        seq = list(seq)
        start = bool(seq) and seq[0][0] == C.AT and seq[0][1] in (C.AT_BEGINNING,
                                                                   C.AT_BEGINNING_STRING)
        if start:
            seq = seq[1:]
        end = bool(seq) and seq[-1][0] == C.AT and seq[-1][1] in (C.AT_END, C.AT_END_STRING)
        if end:
            seq = seq[:-1]
        body = _seq(seq)
        if body is None:
            continue
        out.append(("" if start else chars.ANY_CHAR + "*") + body
                   + ("" if end else chars.ANY_CHAR + "*"))
    if not out:
        return None
    return out[0] if len(out) == 1 else "(?:" + "|".join(out) + ")"


_MAX_ALTERNATIVES = 256
_ANCHORS = (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_END, C.AT_END_STRING)


def _has_anchor(items) -> bool:
    for op, av in items:
        if op == C.AT and av in _ANCHORS:
            return True
        if op == C.BRANCH and any(_has_anchor(alt) for alt in av[1]):
            return True
        if op == C.SUBPATTERN and _has_anchor(av[-1]):
            return True
    return False


def _alternatives(items) -> list[list]:
    """The pattern as alternative sequences, with every group or alternation that holds an
    anchor spread out, so anchors sit at the ends of a sequence where they can be read
    (``^$|^(a|b)$`` is parsed as ``^`` then an alternation; ``(^a|b$)`` holds anchors)."""
    result: list[list] = [[]]
    for op, av in items:
        if op == C.BRANCH and _has_anchor([(op, av)]):
            subs = [s for alt in av[1] for s in _alternatives(list(alt))]
        elif op == C.SUBPATTERN and _has_anchor(av[-1]):
            subs = _alternatives(list(av[-1]))
        else:
            subs = [[(op, av)]]
        result = [r + sub for r in result for sub in subs]
        if len(result) > _MAX_ALTERNATIVES:
            raise PatternError(f"pattern has more than {_MAX_ALTERNATIVES} anchored alternatives")
    return result


def _seq(items) -> str | None:
    parts = []
    for op, av in items:
        r = _node(op, av)
        if r is None:
            return None
        parts.append(r)
    return "".join(parts)


def _node(op, av) -> str | None:
    if op == C.LITERAL:
        return _wrap(chars.json_char(((av, av),)))
    if op == C.NOT_LITERAL:
        return _wrap(chars.json_char(chars.complement(((av, av),))))
    if op == C.ANY:
        return _wrap(chars.json_char(chars.complement(_NEWLINES)))
    if op == C.IN:
        return _wrap(chars.json_char(_class(av)))
    if op == C.SUBPATTERN:
        body = _seq(av[-1])
        return None if body is None else f"(?:{body})"
    if op == C.ATOMIC_GROUP:
        body = _seq(av)
        return None if body is None else f"(?:{body})"
    if op == C.BRANCH:
        alts = [b for b in (_seq(x) for x in av[1]) if b is not None]
        return None if not alts else "(?:" + "|".join(alts) + ")"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        lo, hi, sub = av
        body = _seq(sub)
        if body is None:
            return "" if lo == 0 else None
        if hi >= C.MAXREPEAT:
            q = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
        else:
            q = "?" if (lo, hi) == (0, 1) else f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
        return f"(?:{body}){q}"
    if op == C.AT:
        if av in (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_END, C.AT_END_STRING):
            return None  # an anchor inside the text never matches (no multiline mode)
        raise PatternError(f"pattern anchor {av} is not supported")
    raise PatternError(f"pattern construct {op} is not supported")


def _wrap(r: str | None) -> str | None:
    if r is None:
        return None
    return r if r.startswith("(?:") or r.startswith("[") and r.endswith("]") else f"(?:{r})"


def _class(items) -> chars.Ranges:
    ranges: list[tuple[int, int]] = []
    negate = False
    for op, av in items:
        if op == C.NEGATE:
            negate = True
        elif op == C.LITERAL:
            ranges.append((av, av))
        elif op == C.RANGE:
            ranges.append(av)
        elif op == C.CATEGORY:
            base, neg = _CATEGORIES[av]
            ranges += chars.complement(base) if neg else base
        else:
            raise PatternError(f"character class item {op} is not supported")
    return chars.complement(ranges) if negate else chars.normalize(ranges)


@lru_cache(maxsize=1024)
def bounded_body(pattern: str, lo: int, hi: int | None) -> str | None:
    """Body for an anchored pattern of single characters with at most one repeated character
    (e.g. ^ab[a-z]+$), with the repeat tightened so the whole length is in [lo, hi].
    None when the pattern has another shape (or no string fits)."""
    items = list(parse(pattern))
    if not (len(items) >= 2 and items[0] == (C.AT, C.AT_BEGINNING)
            and items[-1][0] == C.AT and items[-1][1] in (C.AT_END, C.AT_END_STRING)):
        return None
    items = items[1:-1]
    single = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN)
    fixed, var = 0, None
    for i, (op, av) in enumerate(items):
        if op in single:
            fixed += 1
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and len(av[2]) == 1 \
                and av[2][0][0] in single and var is None:
            var = i
        else:
            return None
    if var is None:
        return None
    rmin, rmax, sub = items[var][1]
    a = max(rmin, lo - fixed)
    b = rmax if rmax < C.MAXREPEAT else None
    if hi is not None:
        b = hi - fixed if b is None else min(b, hi - fixed)
    if b is not None and a > b:
        return None
    parts = []
    for i, (op, av) in enumerate(items):
        if i == var:
            unit = _node(*sub[0])
            q = f"{{{a},}}" if b is None else f"{{{a}}}" if a == b else f"{{{a},{b}}}"
            parts.append(f"(?:{unit}){q}")
        else:
            parts.append(_node(op, av))
    return "".join(parts)
