"""Exact grammar-constrained decoding: token masks from grammars over a model's vocabulary."""
from .errors import (ConstrainedError, DeadEndError, GrammarError, LimitExceededError,
                     ModelNotFoundError, RegexError, VocabularyError)
from .grammar import Grammar
from .vocabulary import Vocabulary

__all__ = ["Vocabulary", "Grammar", "ConstrainedError", "DeadEndError", "GrammarError",
           "LimitExceededError", "ModelNotFoundError", "RegexError", "VocabularyError"]


def __getattr__(name: str):
    # compile_grammar pulls in the compiler only when used
    if name == "compile_grammar":
        from .compiler import compile_grammar
        return compile_grammar
    raise AttributeError(name)
