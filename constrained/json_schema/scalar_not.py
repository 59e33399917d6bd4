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
from .strings import string_pattern

if TYPE_CHECKING:
    from .converter import Converter

_EXPONENT = r"[^eE]*[eE].*"
_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING = ("minLength", "maxLength", "pattern")


def _applies(body: dict, t: str) -> bool:
    types = type_set(body)
    return types is None or t in types


def _values(body: dict) -> list | None:
    if "const" in body:
        return [body["const"]]
    return list(body["enum"]) if "enum" in body else None


def holds_for_all(cv: "Converter", body: dict, t: str) -> bool:
    """Whether ``body`` accepts every value of type ``t`` (so ``not body`` removes ``t``)."""
    if not _applies(body, t):
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


def string_exclusions(cv: "Converter", bodies: list[dict], ptr: str) -> tuple[str, ...]:
    """Regexes (quoted JSON strings) of the strings some body accepts."""
    out = []
    for body in bodies:
        if not _applies(body, "string"):
            continue
        values = _values(body)
        if values is not None:
            out += [literal_string(v) for v in values
                    if isinstance(v, str) and cv.validates(v, body)]
            continue
        kw = {k: body[k] for k in _STRING if k in body}
        pattern = string_pattern(kw, ptr, cv.opts, cv.refuse)
        if pattern is not None:
            out.append(pattern)
    return tuple(dict.fromkeys(out + [UNCOMMON_STRING])) if out else ()


def number_exclusions(cv: "Converter", bodies: list[dict], ptr: str) -> tuple[str, ...]:
    """Regexes of the numbers (every spelling without exponent) some body accepts."""
    out = []
    for body in bodies:
        if not (_applies(body, "number") or _applies(body, "integer")):
            continue
        values = _values(body)
        if "multipleOf" in body and values is None:
            pattern = multiple_pattern(body["multipleOf"], "+")
            if pattern is None or any(b is not None for b in bounds(body)[::2]):
                cv.refuse(ptr + "/multipleOf", "multipleOf",
                          "multipleOf inside not is enforced for small integer divisors "
                          "without bounds only")
                continue
            out.append(pattern)
            continue
        if values is not None:
            for v in values:
                if isinstance(v, (int, float)) and not isinstance(v, bool) \
                        and cv.validates(v, body):
                    pattern = number_pattern(v, False, v, False)
                    if pattern is not None:
                        out.append(pattern)
            continue
        types = type_set(body)
        fn = integer_pattern if types is not None and "number" not in types else number_pattern
        pattern = fn(*bounds(body))
        if pattern is not None:
            out.append(pattern)
    return tuple(dict.fromkeys(out + [_EXPONENT, NEGATIVE_ZERO])) if out else ()
