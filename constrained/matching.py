"""The interface every engine implements: a compiled grammar and its per-sequence matchers.

``compile_grammar`` (constrained.compiler) returns a CompiledGrammar; the regex engine, the
context-free engine and the wrappers (healing, infill) implement these two classes, so the
decode loop and the integrations work with any of them.
"""
from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .bitmask import token_ids_to_bitmask
from .errors import MatcherError
from .grammar import Grammar
from .vocabulary import Vocabulary


@dataclass(frozen=True)
class VocabularyFacts:
    """What every compiled grammar of one vocabulary looks up on the hot path, built once per
    vocabulary (not per compile)."""

    eos_mask: np.ndarray          # read-only words with exactly the end-of-sequence tokens
    eos_ids: frozenset
    special_ids: frozenset        # special tokens step as their spellings
    text_ok: bytes                # per token: 1 when it can carry grammar text (bytes, not a
    #                               list: a list of vocabulary size is scanned by every collection)


_FACTS: "weakref.WeakKeyDictionary[Vocabulary, VocabularyFacts]" = weakref.WeakKeyDictionary()


def vocabulary_facts(vocab: Vocabulary) -> VocabularyFacts:
    """The vocabulary's ``VocabularyFacts`` (kept while the vocabulary lives)."""
    facts = _FACTS.get(vocab)
    if facts is None:
        eos_mask = token_ids_to_bitmask(sorted(vocab.eos_token_ids), vocab.size)
        eos_mask.setflags(write=False)
        facts = VocabularyFacts(
            eos_mask, frozenset(vocab.eos_token_ids), frozenset(vocab.special_token_ids),
            vocab.text_token_mask[:vocab.n_tokens].astype(np.uint8).tobytes())
        facts = _FACTS.setdefault(vocab, facts)
    return facts


class GrammarMatcher(ABC):
    """Per-sequence state: which tokens may come next, and the tokens accepted so far."""

    @abstractmethod
    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        """Write the allowed tokens into ``bitmask`` (1-D, or row ``index`` of a 2-D mask).

        ``bitmask`` is a CPU torch int32 tensor or numpy int32 array of at least
        ``(vocab.size + 31) // 32`` words; bit ``i % 32`` of word ``i // 32`` <=> token ``i``.
        Returns True when some token is disallowed (the mask needs applying).
        """

    @abstractmethod
    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (state unchanged) when the token is not allowed."""

    @abstractmethod
    def accept_bytes(self, data: bytes) -> bool:
        """Advance by raw text bytes as one step; False (state unchanged) when not viable."""

    def accept_string(self, text: str) -> bool:
        """Advance by UTF-8 text as one step; False (state unchanged) when not viable."""
        if not isinstance(text, str):
            raise MatcherError(f"text must be a str, not {type(text).__name__}")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise MatcherError(f"text is not valid Unicode at character {e.start} (a lone "
                               f"surrogate); UTF-8 cannot encode it") from None
        return self.accept_bytes(data)

    @abstractmethod
    def rollback(self, n_tokens: int = 1) -> None:
        """Undo the last ``n_tokens`` accepted steps, restoring the exact earlier state."""

    @abstractmethod
    def is_accepting(self) -> bool:
        """Whether the text so far is a complete sentence (EOS would be allowed)."""

    @abstractmethod
    def is_terminated(self) -> bool:
        """Whether an EOS token has been accepted."""

    @abstractmethod
    def reset(self) -> None:
        """Back to the initial state, history cleared."""

    @abstractmethod
    def forced_bytes(self) -> bytes:
        """Bytes every valid continuation must start with (empty when there is a choice)."""

    def find_jump_forward_string(self) -> str:
        """The forced continuation as text (whole UTF-8 characters only)."""
        data = self.forced_bytes()
        for cut in range(len(data), max(len(data) - 4, -1), -1):
            try:
                return data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return ""


class CompiledGrammar(ABC):
    """A grammar compiled against a vocabulary: immutable and shareable across threads."""

    grammar: Grammar
    vocab: Vocabulary

    @abstractmethod
    def matcher(self) -> GrammarMatcher:
        """A new matcher at the start of the grammar."""
