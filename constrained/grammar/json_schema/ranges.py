"""Regexes for numerals in a range: fixed-width digit strings in any base, decimal integers."""
from __future__ import annotations

_DEC = "0123456789"


def _digit_class(lo: int, hi: int, base: int) -> str:
    """A character class for the digits lo..hi; hex letters match in either case."""
    if base == 10:
        return _DEC[lo] if lo == hi else f"[{_DEC[lo]}-{_DEC[hi]}]"
    if lo == hi and hi < 10:
        return str(lo)
    parts = []
    if lo < 10:
        parts.append((str(lo), str(min(hi, 9))))
    if hi >= 10:
        a, b = "abcdef"[max(lo, 10) - 10], "abcdef"[hi - 10]
        parts += [(a, b), (a.upper(), b.upper())]
    return "[" + "".join(x if x == y else f"{x}-{y}" for x, y in parts) + "]"


def _any_digits(width: int, base: int) -> str:
    if width == 0:
        return ""
    d = _digit_class(0, base - 1, base)
    return d if width == 1 else f"{d}{{{width}}}"


def fixed_width_range(lo: int, hi: int, width: int, base: int = 10) -> str:
    """Regex matching the ``width``-digit numerals (leading zeros kept) with lo <= value <= hi."""
    if not 0 <= lo <= hi < base ** width:
        raise ValueError(f"bad range {lo}..{hi} for width {width}")
    if width == 0:
        return ""
    if lo == 0 and hi == base ** width - 1:
        return _any_digits(width, base)
    p = base ** (width - 1)
    lo_d, lo_r = divmod(lo, p)
    hi_d, hi_r = divmod(hi, p)
    if lo_d == hi_d:
        return _digit_class(lo_d, lo_d, base) + fixed_width_range(lo_r, hi_r, width - 1, base)
    parts = []
    first, last = lo_d, hi_d
    if lo_r != 0:
        parts.append(_digit_class(lo_d, lo_d, base) + fixed_width_range(lo_r, p - 1, width - 1, base))
        first += 1
    tail = None
    if hi_r != p - 1:
        tail = _digit_class(hi_d, hi_d, base) + fixed_width_range(0, hi_r, width - 1, base)
        last -= 1
    if first <= last:
        parts.append(_digit_class(first, last, base) + _any_digits(width - 1, base))
    if tail is not None:
        parts.append(tail)
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _natural_range(lo: int, hi: int | None) -> list[str]:
    """Alternatives for decimal naturals without leading zeros in [lo, hi] (hi None: unbounded)."""
    parts = []
    width = len(str(lo))
    while True:
        w_lo = max(lo, 0 if width == 1 else 10 ** (width - 1))
        w_hi = 10 ** width - 1
        if hi is not None and hi < w_hi:
            w_hi = hi
        if hi is None and w_lo == 10 ** (width - 1) and width > 1:
            parts.append(f"[1-9][0-9]{{{width - 1},}}")
            return parts
        if hi is None and w_lo == 0 and width == 1:
            parts.append("0")
            parts.append("[1-9][0-9]*")
            return parts
        if w_lo <= w_hi:
            parts.append(fixed_width_range(w_lo, w_hi, width))
        if hi is not None and w_hi >= hi:
            return parts
        width += 1


def integer_range(lo: int | None, hi: int | None) -> str | None:
    """Regex for decimal integers (JSON syntax) in [lo, hi]; None bounds are open. None if empty."""
    if lo is not None and hi is not None and lo > hi:
        return None
    parts = []
    # negative part: -n with n in [max(1, -hi), -lo]
    if lo is None or lo < 0:
        n_lo = 1 if hi is None or hi >= 0 else -hi
        n_hi = None if lo is None else -lo
        parts += ["-" + _group(_natural_range(n_lo, n_hi))]
    if hi is None or hi >= 0:
        parts += _natural_range(max(lo, 0) if lo is not None else 0, hi)
    return _group(parts)


def _group(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
