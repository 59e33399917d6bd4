"""The per-sequence matcher of a compiled context-free grammar: a stack of immutable states."""
from __future__ import annotations

import numpy as np

from ..bitmask import allowed_token_ids, bytes_arg, int_arg, write_row
from ..matching import GrammarMatcher
from ..errors import DeadEndError, MatcherError
from ..vocabulary import special_spelling

_TERMINATED = None


class CFGMatcher(GrammarMatcher):
    """One ``(column, lexer state)`` per accepted step, so rollback is a list truncation."""

    def __init__(self, compiled) -> None:
        self.compiled = compiled
        self._runtime = compiled.runtime
        self._engine = compiled.engine
        self._tokens = compiled.vocab.token_bytes
        self._text_ok = compiled.text_ok
        self._eos = compiled.eos_ids
        self._special = compiled.special_ids
        self._stack: list = [self._runtime.initial]

    # masks ---------------------------------------------------------------------------------
    def _current_mask(self) -> np.ndarray:
        state = self._stack[-1]
        if state is _TERMINATED:
            return self.compiled.eos_mask
        mask = self._engine.mask(state)
        if mask is self._engine.empty_mask:
            raise DeadEndError(
                f"no token can follow after {len(self._stack) - 1} accepted steps: no token of "
                f"the vocabulary continues the text and it is not a complete sentence "
                f"(greedy lexing can block a lexeme's end; see constrained/cfg/runtime.py)")
        return mask

    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        write_row(bitmask, index, self.compiled.words, self._current_mask())
        return True

    def allowed_token_ids(self) -> np.ndarray:
        """Ids of the tokens allowed next (convenience; not for the hot path)."""
        return allowed_token_ids(self._current_mask(), self.compiled.vocab.size)

    # steps -----------------------------------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        token_id = int_arg(token_id, "token id")
        state = self._stack[-1]
        if state is _TERMINATED:
            return False
        if token_id in self._eos and self._runtime.is_accepting(state):
            self._stack.append(_TERMINATED)
            return True
        if token_id in self._special:
            data = special_spelling(token_id)
        elif not (0 <= token_id < len(self._tokens)) or not self._text_ok[token_id]:
            return False
        else:
            data = self._tokens[token_id]
        nxt = self._runtime.step(state, data)
        if nxt is None:
            return False
        self._stack.append(nxt)
        return True

    def accept_bytes(self, data: bytes) -> bool:
        state = self._stack[-1]
        if state is _TERMINATED:
            return False
        nxt = self._runtime.step(state, bytes_arg(data))
        if nxt is None:
            return False
        self._stack.append(nxt)
        return True

    def rollback(self, n_tokens: int = 1) -> None:
        n_tokens = int_arg(n_tokens, "n_tokens")
        if n_tokens < 0 or n_tokens > len(self._stack) - 1:
            raise MatcherError(f"cannot roll back {n_tokens} steps; "
                               f"{len(self._stack) - 1} were accepted")
        if n_tokens:
            del self._stack[-n_tokens:]

    def is_accepting(self) -> bool:
        state = self._stack[-1]
        return state is _TERMINATED or self._runtime.is_accepting(state)

    def is_terminated(self) -> bool:
        return self._stack[-1] is _TERMINATED

    def search_key(self):
        """A coarse key of the state for completion searches: the parser column's items
        without origins and the lexer state (states that differ only below the current
        nesting share it)."""
        state = self._stack[-1]
        return None if state is _TERMINATED else (state[0].core(), state[1])

    def looping_bytes(self) -> np.ndarray:
        """bool[256]: bytes each of which leaves the state as it is (those the lexer reads
        without leaving its state: the body of a string, the digits of a number; a loop that
        passes a lexeme's end is not listed). For completion searches."""
        state = self._stack[-1]
        if state is _TERMINATED or not state[1]:     # lexer state 0 is never re-entered
            return np.zeros(256, dtype=bool)
        col, q = state
        lexer = self._runtime.lexer(col.candidates)
        return lexer.table[q].take(lexer.byte_class) == q

    def reset(self) -> None:
        self._stack = [self._runtime.initial]

    def forced_bytes(self) -> bytes:
        state = self._stack[-1]
        return b"" if state is _TERMINATED else self._runtime.forced_bytes(state)

    @property
    def n_steps(self) -> int:
        """Number of steps accepted (what rollback can undo)."""
        return len(self._stack) - 1
