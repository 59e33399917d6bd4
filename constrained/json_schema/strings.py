"""String terminals: a whole JSON string (quotes included) as one regex.

minLength/maxLength count decoded characters; pattern is an unanchored ECMA search; format
uses formats.FORMATS. A pattern or format combined with lengths it does not already imply
cannot be expressed as one regex and is refused.
"""
from __future__ import annotations

from typing import Callable

from . import patterns
from .chars import ANY_CHAR
from .formats import UNSUPPORTED as FORMAT_UNSUPPORTED
from .formats import format_body
from .options import SchemaOptions

Refuse = Callable[[str, str, str], None]


def string_pattern(schema: dict, ptr: str, opts: SchemaOptions, refuse: Refuse) -> str | None:
    """Regex of the JSON strings (with quotes) the string keywords of ``schema`` allow."""
    lo = int(schema.get("minLength", 0) or 0)
    hi = schema.get("maxLength")
    hi = None if hi is None else int(hi)
    if hi is not None and hi < lo:
        return None
    fmt = schema.get("format")
    fmt_body = format_body(fmt) if isinstance(fmt, str) else None
    if isinstance(fmt, str) and fmt in FORMAT_UNSUPPORTED:
        refuse(ptr + "/format", "format", f"format {fmt!r} is not enforced")
    pat = schema.get("pattern")
    body = None
    if isinstance(pat, str):
        try:
            body = patterns.pattern_body(pat)
            plo, phi = patterns.width(pat) if patterns.is_anchored(pat) else (0, None)
        except patterns.PatternError as e:
            refuse(ptr + "/pattern", "pattern", str(e))
            body = None
        else:
            if body is None:
                return None
            if fmt_body is not None:
                refuse(ptr + "/format", "format", "format together with pattern")
            if not _implied(lo, hi, plo, phi):
                bounded = patterns.bounded_body(pat, lo, hi)
                if bounded is not None:
                    return '"' + bounded + '"'
                refuse(ptr + "/maxLength" if hi is not None else ptr + "/minLength",
                       "maxLength" if hi is not None else "minLength",
                       "string lengths together with a pattern that does not imply them")
            return '"' + body + '"'
    if fmt_body is not None:
        flo, fhi = patterns.width("^" + fmt_body + "$")
        if not _implied(lo, hi, flo, fhi):
            refuse(ptr + "/format", "format",
                   "string lengths together with a format that does not imply them")
        return '"' + fmt_body + '"'
    if hi is not None and hi > max(opts.max_string_length, lo):
        refuse(ptr + "/maxLength", "maxLength",
               f"maxLength {hi} exceeds max_string_length={opts.max_string_length} (raise "
               f"that option: compile time grows with the bound; lenient=True tightens it)")
        hi = max(opts.max_string_length, lo)
    if lo == 0 and hi is None:
        return f'"{ANY_CHAR}*"'
    if hi is None:
        q = "+" if lo == 1 else f"{{{lo},}}"
    else:
        q = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
    return f'"{ANY_CHAR}{q}"'


def _implied(lo: int, hi: int | None, plo: int, phi: int | None) -> bool:
    return plo >= lo and (hi is None or (phi is not None and phi <= hi))
