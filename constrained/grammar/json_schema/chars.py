"""Characters of JSON strings: a set of code points -> regex of all its JSON encodings.

A decoded character may appear literally (when JSON allows it), as a short escape (\\n, \\"),
or as \\uXXXX (hex in either case; astral characters as a surrogate pair). These helpers build
regexes over the encoded text that match exactly the encodings of characters in a set; lone
surrogate escapes are never produced.
"""
from __future__ import annotations

from functools import lru_cache

from ...automata.utf8 import complement_ranges, merge_ranges
from .ranges import fixed_width_range

MAX_CP = 0x10FFFF
Ranges = tuple[tuple[int, int], ...]

ALL: Ranges = ((0, MAX_CP),)
_SHORT = {0x22: '\\\\"', 0x5C: "\\\\\\\\", 0x2F: "\\\\/", 0x08: "\\\\b", 0x0C: "\\\\f",
          0x0A: "\\\\n", 0x0D: "\\\\r", 0x09: "\\\\t"}
_HEX = "[0-9a-fA-F]"


def normalize(ranges) -> Ranges:
    """Sorted, merged, non-overlapping ranges."""
    return tuple(merge_ranges(ranges))


def complement(ranges) -> Ranges:
    return tuple(complement_ranges(ranges, surrogates=True))


def intersect(a, b) -> Ranges:
    out = []
    for lo1, hi1 in normalize(a):
        for lo2, hi2 in normalize(b):
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return normalize(out)


def _cls_char(cp: int) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    c = chr(cp)
    return "\\" + c if c in "\\]^-[" else c


def char_class(ranges) -> str:
    """A regex character class for code point ranges (no surrogates expected)."""
    ranges = normalize(ranges)
    if ranges and ranges[-1][1] == MAX_CP:
        # large classes are written negated: the byte-DFA builder splits them much faster
        rest = complement(list(ranges) + [(0xD800, 0xDFFF)])
        body = "".join(_cls_char(lo) if lo == hi else
                       _cls_char(lo) + ("-" if hi > lo + 1 else "") + _cls_char(hi)
                       for lo, hi in rest)
        return f"[^{body}]" if body else r"[\s\S]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        c = chr(ranges[0][0])
        return _cls_char(ranges[0][0]) if c not in ".$*+?()|{}/" else "\\" + c
    body = "".join(_cls_char(lo) if lo == hi else
                   _cls_char(lo) + ("-" if hi > lo + 1 else "") + _cls_char(hi)
                   for lo, hi in ranges)
    return f"[{body}]"


def json_char(ranges) -> str | None:
    """Regex for one JSON-encoded character whose decoded value lies in ``ranges``.

    Sound (never matches a character outside ``ranges``) and complete for what json.dumps
    writes, with or without ensure_ascii; printable ASCII written as \\u00XX is not accepted.
    """
    return _json_char(normalize(ranges))


@lru_cache(maxsize=4096)
def _json_char(ranges: Ranges) -> str | None:
    if not ranges:
        return None
    if ranges == ALL:
        return ANY_CHAR
    alts = []
    literal = intersect(ranges, ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0xD7FF), (0xE000, MAX_CP)))
    if literal:
        alts.append(char_class(literal))
    shorts = [esc for cp, esc in _SHORT.items() if intersect(ranges, ((cp, cp),))]
    alts += shorts
    # \\u escapes for the characters JSON writers escape (controls, non-ASCII); printable ASCII
    # is always written literally, which keeps these regexes small
    bmp = intersect(ranges, ((0, 0x1F), (0x7F, 0xD7FF), (0xE000, 0xFFFF)))
    hexes = [fixed_width_range(lo, hi, 4, 16) for lo, hi in bmp]
    if hexes:
        alts.append("\\\\u" + (hexes[0] if len(hexes) == 1 else "(?:" + "|".join(hexes) + ")"))
    if intersect(ranges, ((0x10000, MAX_CP),)) == ((0x10000, MAX_CP),):
        alts.append(_PAIR)
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


_NON_SURROGATE = "(?:[0-9a-cA-CeEfF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})"
_PAIR = "\\\\u[dD][89abAB][0-9a-fA-F]{2}\\\\u[dD][c-fC-F][0-9a-fA-F]{2}"
ANY_CHAR = (r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u' + _NON_SURROGATE + "|" + _PAIR + ")")


def literal_char(cp: int) -> str:
    """Regex for one character as JSON writes it: literally, or as json.dumps escapes it."""
    if cp in _SHORT and cp != 0x2F:
        return _SHORT[cp]
    if cp < 0x20:
        return f"\\\\u{_ci_hex(cp)}"
    if 0xD800 <= cp <= 0xDFFF:
        return f"\\\\u{cp:04x}"
    c = chr(cp)
    lit = "\\" + c if c in ".^$*+?()[]{}|\\/-" else c
    if cp < 0x7F:
        return lit
    if cp <= 0xFFFF:
        return f"(?:{lit}|\\\\u{_ci_hex(cp)})"
    hi = 0xD800 + ((cp - 0x10000) >> 10)
    lo = 0xDC00 + ((cp - 0x10000) & 0x3FF)
    return f"(?:{lit}|\\\\u{_ci_hex(hi)}\\\\u{_ci_hex(lo)})"


def _ci_hex(v: int) -> str:
    return "".join(c if c.isdigit() else f"[{c}{c.upper()}]" for c in f"{v:04x}")


# encodings json_char leaves out (printable ASCII and short-escape characters as \\u, "\\/",
# surrogate pairs): a string with one of them is a valid instance that excluding a language
# of such regexes would miss, so complements are taken over strings without them
_UNCOMMON = ("\\\\(?:/|u00(?:[2-6][0-9a-fA-F]|7[0-9a-eA-E]|0[89aAcCdD])"
             "|u[dD][89abAB][0-9a-fA-F]{2}\\\\u[dD][c-fC-F][0-9a-fA-F]{2})")
# every JSON string, escapes written any way
ANY_STRING = f'"{ANY_CHAR}*"'
UNCOMMON_STRING = f'"{ANY_CHAR}*{_UNCOMMON}{ANY_CHAR}*"'


class _LiteralChars(dict):
    """``str.translate`` table: code point -> literal_char(code point), filled on first use
    (bounded: past 4096 code points the rest are computed each time)."""

    def __missing__(self, cp: int) -> str:
        out = literal_char(cp)
        if len(self) < 4096:
            self[cp] = out
        return out


_LITERAL_CHARS = _LiteralChars()


def literal_string(s: str) -> str:
    """Regex for the JSON string literal of ``s`` (with quotes), as JSON writers emit it."""
    return '"' + s.translate(_LITERAL_CHARS) + '"'
