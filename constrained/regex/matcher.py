"""The per-sequence matcher of a compiled regex: a stack of DFA states, one per step."""
from __future__ import annotations

from ..errors import MatcherError

import numpy as np

from ..bitmask import allowed_token_ids, bytes_arg, int_arg, write_row
from ..matching import GrammarMatcher
from .compiled import CompiledRegex

_TERMINATED = -2


class RegexMatcher(GrammarMatcher):
    """Tracks the DFA state after every accepted token so rollback is exact.

    After EOS is accepted the matcher is terminated: it accepts nothing more and its mask holds
    only the EOS tokens (so a batch can keep padding with EOS).
    """

    def __init__(self, compiled: CompiledRegex) -> None:
        self.compiled = compiled
        self._dfa = compiled.dfa
        self._tokens = compiled.vocab.token_bytes
        self._stack = [compiled.dfa.initial]

    @property
    def state(self) -> int:
        """Current DFA state (-2 after EOS)."""
        return self._stack[-1]

    def _current_mask(self) -> np.ndarray:
        state = self._stack[-1]
        if state == _TERMINATED:
            return self.compiled.eos_mask
        return self.compiled.state_mask(state)

    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        write_row(bitmask, index, self.compiled.words, self._current_mask())
        return True

    def allowed_token_ids(self) -> np.ndarray:
        """Ids of the tokens allowed next (convenience; not for the hot path)."""
        return allowed_token_ids(self._current_mask(), self.compiled.vocab.size)

    def accept_token(self, token_id: int) -> bool:
        token_id = int_arg(token_id, "token id")
        state = self._stack[-1]
        if state == _TERMINATED:
            return False
        if token_id in self.compiled.eos_ids:
            if self._dfa.accepting[state]:
                self._stack.append(_TERMINATED)
                return True
            return False
        if not (0 <= token_id < len(self._tokens)) or token_id in self.compiled.special_ids:
            return False
        data = self._tokens[token_id]
        if not data:   # an empty token carries no text and is never in a mask
            return False
        nxt = self._dfa.walk(state, data)
        if nxt < 0:
            return False
        self._stack.append(nxt)
        return True

    def accept_bytes(self, data: bytes) -> bool:
        state = self._stack[-1]
        if state == _TERMINATED:
            return False
        nxt = self._dfa.walk(state, bytes_arg(data))
        if nxt < 0:
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
        return state == _TERMINATED or bool(self._dfa.accepting[state])

    def is_terminated(self) -> bool:
        return self._stack[-1] == _TERMINATED

    def reset(self) -> None:
        self._stack = [self._dfa.initial]

    def forced_bytes(self) -> bytes:
        state = self._stack[-1]
        return b"" if state == _TERMINATED else self._dfa.forced_bytes(state)

    def state_key(self) -> int:
        """Hashable key equal for matchers whose futures are equal (the DFA state; -2 after EOS)."""
        return self._stack[-1]

    @property
    def n_steps(self) -> int:
        """Number of steps accepted (what rollback can undo)."""
        return len(self._stack) - 1
