"""compile_grammar: the one entry point from a Grammar to a CompiledGrammar.

A grammar that is a single regex goes to the regex engine (constrained.regex); every other grammar
goes to the context-free engine (``constrained.cfg.compile_cfg``). Both produce a
``CompiledGrammar`` whose ``matcher()`` returns a ``GrammarMatcher`` with the same API.
"""
from __future__ import annotations

from .deadline import compile_deadline
from .gc_pause import gc_paused
from .grammar import Grammar
from .matching import CompiledGrammar, GrammarMatcher
from .vocabulary import Vocabulary

__all__ = ["CompiledGrammar", "GrammarMatcher", "compile_grammar"]

DEFAULT_COMPILE_TIMEOUT = 60.0


def compile_grammar(grammar: Grammar, vocab: Vocabulary, **options) -> CompiledGrammar:
    """Compile ``grammar`` against ``vocab``.

    Regex options: ``max_states`` (DFA state limit, LimitExceededError past it),
    ``cache`` (bool, disk cache on by default; directory from CONSTRAINED_CACHE_DIR, default
    ~/.cache/constrained), ``precompute`` (True: every state's mask at compile time; "auto", the
    default: nearest states first within a time budget, the rest on first visit; False: only
    the start state). ``compile_timeout`` (seconds, default 60; None: no limit) stops a
    compile that runs longer with LimitExceededError. Other options go to
    ``constrained.cfg.compile_cfg``.
    """
    with compile_deadline(options.pop("compile_timeout", DEFAULT_COMPILE_TIMEOUT)), gc_paused():
        return _compile(grammar, vocab, **options)


def _compile(grammar: Grammar, vocab: Vocabulary, **options) -> CompiledGrammar:
    if not isinstance(grammar, Grammar):
        raise TypeError(f"grammar must be a Grammar, not {type(grammar).__name__}")
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab must be a Vocabulary, not {type(vocab).__name__}")
    pattern = grammar.regex
    if pattern is not None:
        from .regex import compile_regex
        return compile_regex(grammar, vocab, **options)
    from .cfg import compile_cfg
    return compile_cfg(grammar, vocab, **options)
