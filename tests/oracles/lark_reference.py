"""Reference judges for Lark grammars.

``lark_accepts(lark_text, text)``: Lark's own Earley parser (``lexer="dynamic"``, the lexer
``Grammar.from_lark`` assumes) says whether ``text`` is a sentence. This is the ground truth
for "every completed output must parse with Lark".

``recognizes(grammar, text, lexing)`` / ``is_viable_prefix(grammar, text, lexing)`` run the
character-level reference Earley recognizer over the representation (earley_reference.py):
``lexing="greedy"`` is the engine's contextual greedy lexing (recognition exact; viability by a
bounded search over continuations), ``lexing="any"`` is every lexing (Lark's
``dynamic_complete``; viability exact). Greedy-accepted texts are a subset of any-accepted ones.
``grammar`` may be a ``Grammar`` or Lark source text.
"""
from __future__ import annotations

from functools import lru_cache

import lark

from constrained.grammar import Grammar

from earley_reference import recognizer


@lru_cache(maxsize=64)
def _lark(text: str, start: str, lexer: str) -> lark.Lark:
    return lark.Lark(text, parser="earley", lexer=lexer, start=start)


@lru_cache(maxsize=64)
def _from_text(text: str, start: str) -> Grammar:
    return Grammar.from_lark(text, start)


def lark_accepts(lark_text: str, text: str, start: str = "start",
                 lexer: str = "dynamic") -> bool:
    """Whether Lark's Earley parser accepts ``text`` for the grammar ``lark_text``."""
    try:
        _lark(lark_text, start, lexer).parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


def _grammar(grammar: Grammar | str, start: str) -> Grammar:
    return _from_text(grammar, start) if isinstance(grammar, str) else grammar


def recognizes(grammar: Grammar | str, text: str, lexing: str = "greedy",
               start: str = "start") -> bool:
    """Whether ``text`` is a complete sentence under ``lexing`` ("greedy" or "any")."""
    return recognizer(_grammar(grammar, start)).recognizes(text, lexing)


def is_viable_prefix(grammar: Grammar | str, text: str, lexing: str = "greedy", *,
                     start: str = "start", max_extra: int = 200, alphabet=None,
                     budget: int = 20000) -> bool:
    """Whether some continuation makes ``text`` complete under ``lexing`` (see module doc)."""
    return recognizer(_grammar(grammar, start)).is_viable_prefix(
        text, lexing, max_extra=max_extra, alphabet=alphabet, budget=budget)
