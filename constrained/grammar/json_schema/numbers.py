"""JSON number and integer terminals with exact bounds.

Integers: exact for any bounds (negative and multi-digit included). A float with a zero
fraction ("5.0") is an integer in JSON Schema; integer terminals are integer literals unless
asked for the zero fraction too (``fraction``: "" none, "+" any number of zeros, or a bound).
Numbers with a finite bound are written without exponent; unbounded numbers (and numbers
bounded only by zero, where the sign decides) keep the exponent.
"""
from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache

from .ranges import integer_range

NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
INTEGER_LITERAL = r"-?(?:0|[1-9][0-9]*)"
INTEGER = INTEGER_LITERAL + r"(?:\.0+)?"
# every spelling without exponent, and the spellings of negative zero (equal to 0)
NUMBER_NO_EXPONENT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
NEGATIVE_ZERO = r"-0(?:\.0+)?"
_EXP = r"(?:[eE][+-]?[0-9]+)?"


def integer_pattern(lo: float | int | None, lo_excl: bool, hi: float | int | None,
                    hi_excl: bool, fraction: str = "+") -> str | None:
    """Regex for integers within the bounds, or None when no integer fits. ``fraction`` is
    the quantifier of the zeros an optional ".0..." may carry ("" for integer literals)."""
    ilo = None if lo is None else (math.floor(lo) + 1 if lo_excl else math.ceil(lo))
    ihi = None if hi is None else (math.ceil(hi) - 1 if hi_excl else math.floor(hi))
    suffix = rf"(?:\.0{fraction})?" if fraction else ""
    if ilo is None and ihi is None:
        return INTEGER_LITERAL + suffix
    body = integer_range(ilo, ihi)
    return None if body is None else body + suffix


def number_pattern(lo: float | int | None, lo_excl: bool, hi: float | int | None,
                   hi_excl: bool) -> str | None:
    """Regex for JSON numbers within the bounds, or None when the range is empty."""
    if lo is None and hi is None:
        return NUMBER
    dlo = None if lo is None else Decimal(repr(lo)) if isinstance(lo, float) else Decimal(lo)
    dhi = None if hi is None else Decimal(repr(hi)) if isinstance(hi, float) else Decimal(hi)
    if dlo is not None and dhi is not None and (dlo > dhi or (dlo == dhi and (lo_excl or hi_excl))):
        return None
    parts = []
    if dlo is None or dlo < 0:  # negative side: "-" then the magnitude in [-hi, -lo]
        m_lo, m_lo_x = (Decimal(0), True) if dhi is None or dhi >= 0 else (-dhi, hi_excl)
        m_hi, m_hi_x = (None, False) if dlo is None else (-dlo, lo_excl)
        body = _magnitude(m_lo, m_lo_x, m_hi, m_hi_x)
        if body:
            parts.append("-" + body)
    if dhi is None or dhi >= 0:
        p_lo, p_lo_x = (Decimal(0), False) if dlo is None or dlo < 0 else (dlo, lo_excl)
        body = _magnitude(p_lo, p_lo_x, dhi, hi_excl)
        if body:
            parts.append(body)
    if not parts:
        return None
    pattern = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    zero_only = (dlo is None or dlo == 0) and (dhi is None or dhi == 0)
    return pattern + _EXP if zero_only else pattern


def _split(d: Decimal) -> tuple[int, str]:
    """Integer part and fraction digits (no trailing zeros) of a non-negative decimal."""
    i = int(d)
    frac = format(d - i, "f")
    frac = frac.split(".")[1].rstrip("0") if "." in frac else ""
    return i, frac


def _magnitude(lo: Decimal, lo_x: bool, hi: Decimal | None, hi_x: bool) -> str | None:
    """Unsigned decimals (no exponent) with lo <=/< value <=/< hi; hi None is open."""
    li, lf = _split(lo)
    parts = []
    if hi is None:
        parts.append(_with_frac(li, lf, lo_x, None, False))
        rest = integer_range(li + 1, None)
        parts.append(rest + r"(?:\.[0-9]+)?")
    else:
        hi_i, hf = _split(hi)
        if li == hi_i:
            parts.append(_with_frac(li, lf, lo_x, hf, hi_x))
        else:
            parts.append(_with_frac(li, lf, lo_x, None, False))
            mid = integer_range(li + 1, hi_i - 1)
            if mid is not None:
                parts.append(mid + r"(?:\.[0-9]+)?")
            parts.append(_with_frac(hi_i, "", False, hf, hi_x))
    parts = [p for p in parts if p]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _with_frac(i: int, lf: str, lo_x: bool, hf: str | None, hi_x: bool) -> str | None:
    """Integer part i followed by an optional fraction 0.F within the given fraction bounds."""
    ends, body = _frac(lf, lo_x, hf, hi_x, 0, True, hf is not None)
    alts = []
    if body is not None:
        alts.append(r"\." + body)
    if not alts and not ends:
        return None
    suffix = "" if not alts else f"(?:{alts[0]})" + ("?" if ends else "")
    return str(i) + suffix


@lru_cache(maxsize=4096)
def _frac(lo: str, lo_x: bool, hi: str | None, hi_x: bool, k: int, tl: bool,
          th: bool) -> tuple[bool, str | None]:
    """After k fraction digits (tl/th: still equal to the lower/upper bound's digits), whether
    the fraction may end here, and the regex of the non-empty digit strings that may follow."""
    lo_rest_zero = k >= len(lo) or not lo[k:].strip("0")
    hi_rest_zero = hi is None or k >= len(hi) or not hi[k:].strip("0")
    ends = True
    if tl and (not lo_rest_zero or lo_x):
        ends = False
    if th and hi_rest_zero and hi_x:
        ends = False
    if not tl and not th:
        return ends, "[0-9]+"
    if tl and not th and k >= len(lo):
        return ends, ("0*[1-9][0-9]*" if lo_x else "[0-9]+")
    if th and not tl and k >= len(hi):
        return ends, (None if hi_x else "0+")
    if tl and th and k >= len(lo) and k >= len(hi):
        return ends, ("0+" if ends else None)
    dl = int(lo[k]) if tl and k < len(lo) else 0
    dh = (int(hi[k]) if k < len(hi) else 0) if th and hi is not None else 9
    groups: dict[tuple[bool, bool], list[int]] = {}
    for d in range(dl, dh + 1):
        groups.setdefault((tl and d == dl, th and d == dh), []).append(d)
    alts = []
    for (ntl, nth), digits in groups.items():
        sub_ends, sub = _frac(lo, lo_x, hi, hi_x, k + 1, ntl, nth)
        cls = str(digits[0]) if len(digits) == 1 else f"[{digits[0]}-{digits[-1]}]"
        if sub_ends and sub is not None:
            alts.append(f"{cls}(?:{sub})?")
        elif sub_ends:
            alts.append(cls)
        elif sub is not None:
            alts.append(cls + sub if sub.startswith("(") or len(sub) < 3 else f"{cls}(?:{sub})")
    if not alts:
        return ends, None
    return ends, alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def outside(lo, lo_excl: bool, hi, hi_excl: bool) -> tuple[str, ...]:
    """Regexes of the numbers (spelled without exponent) outside the bounds."""
    out = []
    if lo is not None:
        below = number_pattern(None, False, lo, not lo_excl)
        if below is not None:
            out.append(below)
    if hi is not None:
        above = number_pattern(hi, not hi_excl, None, False)
        if above is not None:
            out.append(above)
    return tuple(out)


def bounds(s: dict) -> tuple:
    """(low, low exclusive, high, high exclusive) from the numeric keywords of a schema."""
    lo, lo_x, hi, hi_x = None, False, None, False
    mn, mx = s.get("minimum"), s.get("maximum")
    emn, emx = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    if _num(mn):
        lo, lo_x = mn, emn is True
    if _num(emn) and (lo is None or emn >= lo):
        lo, lo_x = emn, True
    if _num(mx):
        hi, hi_x = mx, emx is True
    if _num(emx) and (hi is None or emx <= hi):
        hi, hi_x = emx, True
    return lo, lo_x, hi, hi_x


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
