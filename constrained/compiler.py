"""compile_grammar: the one entry point from a Grammar to a CompiledGrammar.

A grammar that is a single regex goes to the regex engine (constrained.regex); every other grammar
goes to the context-free engine (``constrained.cfg.compile_cfg``). Both produce a
``CompiledGrammar`` whose ``matcher()`` returns a ``GrammarMatcher`` with the same API.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from .grammar import Grammar
from .vocabulary import Vocabulary


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
        return self.accept_bytes(text.encode("utf-8"))

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


def compile_grammar(grammar: Grammar, vocab: Vocabulary, **options) -> CompiledGrammar:
    """Compile ``grammar`` against ``vocab``.

    Regex options: ``max_states`` (DFA state limit, LimitExceededError past it),
    ``cache`` (bool, disk cache on by default; directory from CONSTRAINED_CACHE_DIR, default
    ~/.cache/constrained), ``precompute`` (True: every state's mask at compile time; "auto", the
    default: nearest states first within a time budget, the rest on first visit; False: only
    the start state). Other options go to ``constrained.cfg.compile_cfg``.
    """
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
