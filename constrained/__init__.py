"""Exact grammar-constrained decoding: token masks from grammars over a model's vocabulary."""
from .errors import (ConstrainedError, DeadEndError, GrammarError, LimitExceededError,
                     MatcherError, ModelNotFoundError, RegexError, VocabularyError)
from .grammar import Grammar
from .vocabulary import Vocabulary

__all__ = ["Vocabulary", "Grammar", "ConstrainedError", "DeadEndError", "GrammarError",
           "LimitExceededError", "MatcherError", "ModelNotFoundError", "RegexError",
           "VocabularyError"]


from .errors import DecodingError  # noqa: E402

__all__ += ["compile_grammar", "CompiledGrammar", "GrammarMatcher", "generate", "stream",
            "GenerationResult", "DecodingError"]


def __getattr__(name: str):
    # the compiler and the decode loop (torch) load on first use: compiling grammars and
    # computing masks never imports torch
    if name in ("compile_grammar", "CompiledGrammar", "GrammarMatcher"):
        from . import compiler
        return getattr(compiler, name)
    if name in ("generate", "stream", "GenerationResult"):
        from . import decoding
        return getattr(decoding, name)
    raise AttributeError(name)
