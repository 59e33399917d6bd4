"""String terminals: a whole JSON string (quotes included) as one regex.

minLength/maxLength count decoded characters; pattern is an unanchored ECMA search; format
uses formats.FORMATS (a format not listed there is an annotation: the converter decides
whether to accept that). A pattern or format combined with lengths it does not already imply
cannot be expressed as one regex and is refused.
"""
from __future__ import annotations

import json
from typing import Callable, Iterable

from ...automata.byte_dfa import ByteDFA, regex_difference_dfa, regex_to_byte_dfa
from ...automata.finite import dfa_is_finite, dfa_texts

from . import patterns
from .chars import ANY_CHAR, ANY_STRING
from .counted_strings import counted_pattern
from .formats import format_body
from .options import SchemaOptions

Refuse = Callable[[str, str, str], None]


def string_pattern(schema: dict, ptr: str, opts: SchemaOptions, refuse: Refuse) -> str | None:
    """Regex of the JSON strings (with quotes) the string keywords of ``schema`` allow, for
    callers that need one regex (lengths a pattern or format does not imply are refused)."""
    language = string_language(schema, ptr, opts, refuse)
    if language is None:
        return None
    pattern, exclude = language
    if exclude:
        hi = schema.get("maxLength")
        refuse(ptr + "/maxLength" if hi is not None else ptr + "/minLength",
               "maxLength" if hi is not None else "minLength",
               "string lengths together with a pattern or format here")
    return pattern


def string_language(schema: dict, ptr: str, opts: SchemaOptions,
                    refuse: Refuse) -> tuple[str, tuple[str, ...]] | None:
    """The JSON strings (with quotes) the string keywords of ``schema`` allow, as a regex and
    the regexes excluded from it (the lengths a pattern or format does not imply: strings
    shorter or longer than allowed), or None when no string is allowed."""
    lo = int(schema.get("minLength", 0) or 0)
    hi = schema.get("maxLength")
    hi = None if hi is None else int(hi)
    if hi is not None and hi < lo:
        return None
    fmt = schema.get("format")
    fmt_body = format_body(fmt) if isinstance(fmt, str) else None
    pat = schema.get("pattern")
    if isinstance(pat, str):
        try:
            body = patterns.pattern_body(pat)
            plo, phi = patterns.width(pat) if patterns.is_anchored(pat) else (0, None)
        except patterns.PatternError as e:
            refuse(ptr + "/pattern", "pattern", str(e))
        else:
            if body is None:
                return None
            if fmt_body is not None:
                refuse(ptr + "/format", "format", "format together with pattern")
            if _implied(lo, hi, plo, phi):
                return '"' + body + '"', ()
            bounded = patterns.bounded_body(pat, lo, hi)
            if bounded is not None:
                return '"' + bounded + '"', ()
            return '"' + body + '"', _outside_lengths(lo, hi, ptr, opts, refuse)
    if fmt_body is not None:
        flo, fhi = patterns.width("^" + fmt_body + "$")
        if _implied(lo, hi, flo, fhi):
            return '"' + fmt_body + '"', ()
        return '"' + fmt_body + '"', _outside_lengths(lo, hi, ptr, opts, refuse)
    hi = _capped(lo, hi, ptr, opts, refuse)
    if lo == 0 and hi is None:
        return ANY_STRING, ()
    if hi is None and lo == 1:
        return f'"{ANY_CHAR}+"', ()
    return counted_pattern(lo, hi), ()


def _capped(lo: int, hi: int | None, ptr: str, opts: SchemaOptions, refuse: Refuse):
    """maxLength, refused past ``max_string_length`` (each counted character costs states)."""
    if hi is not None and hi > max(opts.max_string_length, lo):
        refuse(ptr + "/maxLength", "maxLength",
               f"maxLength {hi} exceeds max_string_length={opts.max_string_length} (raise "
               f"that option: compile time grows with the bound; lenient=True tightens it)")
        return max(opts.max_string_length, lo)
    return hi


def _outside_lengths(lo: int, hi: int | None, ptr: str, opts: SchemaOptions,
                     refuse: Refuse) -> tuple[str, ...]:
    """Regexes of the JSON strings shorter than ``lo`` or longer than ``hi`` characters."""
    hi = _capped(lo, hi, ptr, opts, refuse)
    out = []
    if lo > 0:
        out.append(f'"{ANY_CHAR}{{0,{lo - 1}}}"')
    if hi is not None:
        out.append(f'"{ANY_CHAR}{{{hi + 1},}}"')
    return tuple(out)


def _implied(lo: int, hi: int | None, plo: int, phi: int | None) -> bool:
    return plo >= lo and (hi is None or (phi is not None and phi <= hi))


def language_dfa(pattern: str, exclude: tuple[str, ...] = (),
                 automaton: ByteDFA | None = None) -> ByteDFA:
    """The DFA of a terminal's language (``pattern`` minus ``exclude``; ``automaton``: the
    pattern's DFA when already built)."""
    base = automaton if automaton is not None else regex_to_byte_dfa(pattern)
    return regex_difference_dfa(pattern, exclude, base=base) if exclude else base


def count_json_strings(dfas: Iterable[ByteDFA], cap: int) -> int | None:
    """How many distinct values the JSON string texts of these DFAs decode to, at most
    ``cap`` (also when there are too many texts to list); None when one language is
    infinite (the DFAs after it are not drawn from ``dfas``)."""
    finite = []
    for dfa in dfas:
        if not dfa_is_finite(dfa):
            return None
        finite.append(dfa)
    values: set = set()
    for dfa in finite:
        texts = dfa_texts(dfa, cap * 64)
        if texts is None:
            return cap
        values.update(json.loads(t) for t in texts)
    return min(len(values), cap)
