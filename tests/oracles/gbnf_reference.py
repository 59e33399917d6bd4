"""Reference recognizer for GBNF grammars (llama.cpp semantics: the whole text matches root).

``recognizes(grammar, text)`` and ``is_viable_prefix(grammar, text)`` take a ``Grammar`` made by
``Grammar.from_gbnf`` or GBNF source text. Every GBNF terminal is one character, so lexing is
trivial and both answers are exact (see earley_reference.py). Text is ``str`` (code points);
a byte-level caller decodes first (a prefix ending inside a UTF-8 sequence is viable iff some
completion of that character is).
"""
from __future__ import annotations

from functools import lru_cache

from constrained.grammar import Grammar

from earley_reference import recognizer


@lru_cache(maxsize=256)
def _from_text(text: str) -> Grammar:
    return Grammar.from_gbnf(text)


def _grammar(grammar: Grammar | str) -> Grammar:
    return _from_text(grammar) if isinstance(grammar, str) else grammar


def recognizes(grammar: Grammar | str, text: str) -> bool:
    """Whether ``text`` is a complete sentence of the GBNF grammar."""
    return recognizer(_grammar(grammar)).recognizes(text, "any")


def is_viable_prefix(grammar: Grammar | str, text: str) -> bool:
    """Whether some continuation of ``text`` is a complete sentence (exact)."""
    return recognizer(_grammar(grammar)).is_viable_prefix(text, "any")
