"""Vocabularies: the exact bytes of every token of a model, from any tokenizer source."""
from ._vocabulary import Vocabulary

__all__ = ["Vocabulary"]
