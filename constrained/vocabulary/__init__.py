"""Vocabularies: the exact bytes of every token of a model, from any tokenizer source."""
from ._vocabulary import SPECIAL_MARK, Vocabulary, special_spelling

__all__ = ["SPECIAL_MARK", "Vocabulary", "special_spelling"]
