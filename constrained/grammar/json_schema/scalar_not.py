"""``not`` over scalar keywords: which types it removes, and what it excludes from the rest.

A ``not`` whose body only names scalar keywords (see algebra.scalar_not) either removes a whole
type (the body holds for every value of it), or leaves a type's terminal with some of its
spellings excluded: the regexes of the strings or numbers the body accepts. Those regexes
must match every spelling of each value they describe, so strings are taken without the rare
encodings the string regexes leave out (chars.UNCOMMON_STRING), and numbers without exponent
and without a negative zero.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .chars import UNCOMMON_STRING, literal_string
from .merge import type_set
from .multiples import multiple_pattern
from .numbers import NEGATIVE_ZERO, bounds, integer_pattern, number_pattern
from .strings import string_language

if TYPE_CHECKING:
    from .converter import Converter

_EXPONENT = r"[^eE]*[eE].*"
_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING = ("minLength", "maxLength", "pattern")


def applies(body: dict, t: str) -> bool:
    """Whether ``body`` constrains values of type ``t`` at all."""
    types = type_set(body)
    return types is None or t in types


def _values(body: dict) -> list | None:
    if "const" in body:
        return [body["const"]]
    return list(body["enum"]) if "enum" in body else None


def holds_for_all(cv: "Converter", body: dict, t: str) -> bool:
    """Whether ``body`` accepts every value of type ``t`` (so ``not body`` removes ``t``)."""
    if not applies(body, t):
        return False
    if t == "null":
        return cv.validates(None, body)
    if t == "boolean":
        return cv.validates(True, body) and cv.validates(False, body)
    if _values(body) is not None:
        return False
    if t == "string":
        return not any(k in body for k in _STRING)
    if t in ("number", "integer"):
        return not any(k in body for k in _NUMERIC)
    return True


def string_exclusions(cv: "Converter", bodies: list[dict], ptr: str) -> list[tuple[str, ...]]:
    """What to exclude from a string terminal: one tuple of regexes (quoted JSON strings) per
    piece of the result (a body that is an intersection, pattern and lengths, excludes one of
    its parts in each of two pieces)."""
    parts = []
    for body in bodies:
        if not applies(body, "string"):
            continue
        values = _values(body)
        if values is not None:
            found = [literal_string(v) for v in values
                     if isinstance(v, str) and cv.validates(v, body)]
            if found:
                parts.append(["(?:" + "|".join(found) + ")" if len(found) > 1 else found[0]])
            continue
        kw = {k: body[k] for k in _STRING if k in body}
        language = string_language(kw, ptr, cv.opts, cv.refuse)
        if language is None:
            continue
        pattern, outside = language
        if outside:      # pattern and lengths: strings failing either are kept
            lengths = {k: kw[k] for k in ("minLength", "maxLength") if k in kw}
            parts.append([pattern, string_language(lengths, ptr, cv.opts, cv.refuse)[0]])
        else:
            parts.append([pattern])
    return _choices(parts, (UNCOMMON_STRING,))


def number_exclusions(cv: "Converter", bodies: list[dict], ptr: str) -> list[tuple[str, ...]]:
    """What to exclude from a number terminal (spellings without exponent): one tuple of
    regexes per piece of the result, as string_exclusions."""
    parts = []
    for body in bodies:
        if not (applies(body, "number") or applies(body, "integer")):
            continue
        values = _values(body)
        if values is not None:
            found = [p for v in values if isinstance(v, (int, float))
                     and not isinstance(v, bool) and cv.validates(v, body)
                     for p in [number_pattern(v, False, v, False)] if p is not None]
            if found:
                parts.append(["(?:" + "|".join(found) + ")" if len(found) > 1 else found[0]])
            continue
        types = type_set(body)
        fn = integer_pattern if types is not None and "number" not in types else number_pattern
        bounded = any(b is not None for b in bounds(body)[::2])
        if "multipleOf" in body:
            multiple = multiple_pattern(body["multipleOf"], "+")
            if multiple is None:
                cv.refuse(ptr + "/multipleOf", "multipleOf",
                          "multipleOf inside not is enforced for small integer divisors only")
                continue
            if not bounded:
                parts.append([multiple])
            elif fn(*bounds(body)) is not None:       # an empty range accepts nothing
                parts.append([multiple, fn(*bounds(body))])
            continue
        pattern = fn(*bounds(body))
        if pattern is not None:
            parts.append([pattern])
    return _choices(parts, (_EXPONENT, NEGATIVE_ZERO))


def _choices(parts: list[list[str]], guard: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Excluding bodies b1, b2, ... where body i is the intersection of parts[i]: the union,
    over one part chosen per body, of the terminal minus the chosen parts."""
    if not parts:
        return [()]
    out = [()]
    for options in parts:
        out = [chosen + (o,) for chosen in out for o in options]
    return [tuple(dict.fromkeys(chosen + guard)) for chosen in out]
