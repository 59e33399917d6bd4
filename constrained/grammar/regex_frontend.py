"""Regex front-end: a pattern becomes a grammar of one regular terminal."""
from __future__ import annotations

from ._grammar import Terminal

REGEX_TERMINAL = "REGEX"


def grammar_from_regex(cls, pattern: str):
    """See Grammar.from_regex; the pattern is validated when compiled to an automaton."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, not {type(pattern).__name__}")
    return cls(start="start", rules={"start": ((REGEX_TERMINAL,),)},
               terminals={REGEX_TERMINAL: Terminal(REGEX_TERMINAL, pattern)}, source="regex",
               text=pattern)
