"""Exact grammar-constrained decoding: token masks from grammars over a model's vocabulary."""
from .errors import (ConstrainedError, DeadEndError, GrammarError, LimitExceededError,
                     MatcherError, ModelNotFoundError, RegexError, VocabularyError)
from .grammar import Grammar
from .vocabulary import Vocabulary

__all__ = ["Vocabulary", "Grammar", "ConstrainedError", "DeadEndError", "GrammarError",
           "LimitExceededError", "MatcherError", "ModelNotFoundError", "RegexError",
           "VocabularyError"]


def __getattr__(name: str):
    # compile_grammar pulls in the compiler only when used
    if name in ("compile_grammar", "CompiledGrammar", "GrammarMatcher"):
        from . import compiler
        return getattr(compiler, name)
    raise AttributeError(name)


from .decoding import GenerationResult, generate, stream  # noqa: E402
from .errors import DecodingError  # noqa: E402

__all__ += ["generate", "stream", "GenerationResult", "DecodingError"]
