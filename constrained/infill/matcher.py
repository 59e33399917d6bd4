"""Grammar-constrained infill: a matcher for the middle of ``prefix + middle + suffix``.

The wrapped matcher first accepts the prefix bytes, so the grammar sees the middle as the
continuation of the prefix. The middle may end (an end token is allowed) only where the suffix
can follow: the inner matcher accepts the suffix bytes as one trial step, is asked whether the
text is then a complete sentence, and rolls that step back. Non-end tokens get the grammar's own
mask (prefix + middle must stay viable); a middle from which the suffix can never follow is not
excluded in advance (that would need the grammar's full lookahead), so a token budget bounds it.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ..bitmask import bitmask_row, bitmask_words, bytes_arg, clear_bits, int_arg, set_bits
from ..matching import CompiledGrammar, GrammarMatcher
from ..errors import GrammarError, MatcherError

_END = "end"


class InfillMatcher(GrammarMatcher):
    """Matcher adapter for the middle of an infill; same API as any GrammarMatcher.

    ``end_ids`` are the tokens that end the middle (EOS, FIM pad/EOT, ...; default: the
    vocabulary's EOS tokens). Raises GrammarError when the prefix itself is not viable.
    """

    def __init__(self, compiled: CompiledGrammar, prefix: bytes | str = b"",
                 suffix: bytes | str = b"", end_ids: Iterable[int] | None = None) -> None:
        self.compiled = compiled
        self.prefix = prefix.encode("utf-8") if isinstance(prefix, str) else bytes(prefix)
        self.suffix = suffix.encode("utf-8") if isinstance(suffix, str) else bytes(suffix)
        vocab = compiled.vocab
        self.end_ids = np.array(sorted(set(vocab.eos_token_ids if end_ids is None else end_ids)),
                                dtype=np.int64)
        self._end_set = frozenset(self.end_ids.tolist())
        self._inner = compiled.matcher()
        self._base = 0
        if self.prefix:
            if not self._inner.accept_bytes(self.prefix):
                raise GrammarError(f"the infill prefix is not a viable start of the grammar "
                                   f"(prefix ends with {self.prefix[-40:]!r})")
            self._base = 1
        self._steps: list[str] = []  # "tok" or _END per accepted step, for rollback
        self._can_end_cache: dict[int, bool] = {}

    # the end rule -----------------------------------------------------------------------------
    def suffix_can_follow(self) -> bool:
        """Whether prefix + middle-so-far + suffix is a complete sentence."""
        key = len(self._steps)
        cached = self._can_end_cache.get(key)
        if cached is not None:
            return cached
        if not self.suffix:
            ok = self._inner.is_accepting()
        elif self._inner.accept_bytes(self.suffix):
            ok = self._inner.is_accepting()
            self._inner.rollback(1)
        else:
            ok = False
        self._can_end_cache[key] = ok
        return ok

    # GrammarMatcher API -------------------------------------------------------------------------
    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        row = bitmask_row(bitmask, index, bitmask_words(self.compiled.vocab.size))
        if self.is_terminated():
            row[:] = 0
            return True
        self._inner.fill_next_token_bitmask(row)
        eos = np.fromiter(self.compiled.vocab.eos_token_ids, dtype=np.int64)
        clear_bits(row, np.union1d(eos, self.end_ids))
        if self.suffix_can_follow():
            set_bits(row, self.end_ids)
        return True

    def accept_token(self, token_id: int) -> bool:
        token_id = int_arg(token_id, "token id")
        if self.is_terminated():
            return False
        if int(token_id) in self._end_set:
            if not self.suffix_can_follow():
                return False
            self._steps.append(_END)
            return True
        if int(token_id) in self.compiled.vocab.eos_token_ids:
            return False  # an EOS that is not configured to end the middle
        if not self._inner.accept_token(int(token_id)):
            return False
        self._steps.append("tok")
        return True

    def accept_bytes(self, data: bytes) -> bool:
        if self.is_terminated() or not self._inner.accept_bytes(bytes_arg(data)):
            return False
        self._steps.append("tok")
        return True

    def rollback(self, n_tokens: int = 1) -> None:
        n_tokens = int_arg(n_tokens, "n_tokens")
        if n_tokens < 0 or n_tokens > len(self._steps):
            raise MatcherError(f"cannot roll back {n_tokens} steps; "
                               f"{len(self._steps)} were accepted")
        inner = 0
        for _ in range(n_tokens):
            if self._steps.pop() != _END:
                inner += 1
        if inner:
            self._inner.rollback(inner)
        for key in [k for k in self._can_end_cache if k > len(self._steps)]:
            del self._can_end_cache[key]

    def is_accepting(self) -> bool:
        return self.is_terminated() or self.suffix_can_follow()

    def is_terminated(self) -> bool:
        return bool(self._steps) and self._steps[-1] == _END

    def reset(self) -> None:
        self.rollback(len(self._steps))

    def forced_bytes(self) -> bytes:
        """Bytes every middle must still start with: the grammar's forced bytes, cut where the
        middle could already end (the suffix may supply the rest)."""
        if self.is_terminated():
            return b""
        forced = self._inner.forced_bytes()
        for cut in range(len(forced) + 1):
            if cut and not self._inner.accept_bytes(forced[:cut]):
                return forced[:cut - 1]
            try:
                ends_here = self._suffix_fits_now()
            finally:
                if cut:
                    self._inner.rollback(1)
            if ends_here:
                return forced[:cut]
        return forced

    def _suffix_fits_now(self) -> bool:
        if not self.suffix:
            return self._inner.is_accepting()
        if not self._inner.accept_bytes(self.suffix):
            return False
        ok = self._inner.is_accepting()
        self._inner.rollback(1)
        return ok

    def state_key(self):
        """Equal for equal states (the end rule depends on the inner state only)."""
        inner = inner_state_key(self._inner)
        return None if inner is None else ("infill", inner, self.is_terminated())

    @property
    def middle_steps(self) -> int:
        """Number of steps accepted into the middle (end token included)."""
        return len(self._steps)


class InfillGrammar(CompiledGrammar):
    """A compiled grammar whose matchers constrain the middle of ``prefix + middle + suffix``.

    Hand it wherever a CompiledGrammar goes (a decode loop, the completion function): each
    ``matcher()`` is an :class:`InfillMatcher`. Keep ``end_ids`` to the loop's EOS tokens
    unless the loop also stops on the extra end tokens (FIM pad/EOT).
    """

    def __init__(self, compiled: CompiledGrammar, prefix: bytes | str, suffix: bytes | str,
                 end_ids: Iterable[int] | None = None) -> None:
        self.inner = compiled
        self.grammar = compiled.grammar
        self.vocab = compiled.vocab
        self.prefix = prefix
        self.suffix = suffix
        self.end_ids = None if end_ids is None else tuple(int(t) for t in end_ids)
        self.matcher()  # fail early when the prefix is not viable

    def matcher(self) -> InfillMatcher:
        return InfillMatcher(self.inner, self.prefix, self.suffix, self.end_ids)

    def __repr__(self) -> str:
        return (f"InfillGrammar({self.inner!r}, prefix={len(self.prefix)}B, "
                f"suffix={len(self.suffix)}B)")


def inner_state_key(matcher):
    """A hashable key of a wrapped matcher's exact state, or None when it exposes none."""
    key = getattr(matcher, "state_key", None)
    if callable(key):
        return key()
    stack = getattr(matcher, "_stack", None)  # the regex and CFG matchers keep a state stack
    if isinstance(stack, list) and stack:
        return stack[-1]
    return None
