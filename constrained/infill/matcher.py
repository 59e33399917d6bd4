"""Grammar-constrained infill: a matcher for the middle of ``prefix + middle + suffix``.

A token is allowed in the middle when some text after it can still be followed by the suffix:
masks come from the grammar's right quotient by the suffix (constrained.cfg.quotient), whose
sentences are exactly the texts the suffix completes, read from the start of the prefix. The
middle may end (an end token is allowed) exactly when ``prefix + middle + suffix`` is a
sentence: the grammar's own matcher accepts the suffix bytes as one trial step, is asked, and
rolls that step back. Both matchers follow every token; the mask is their intersection.
A prefix and suffix that no middle can join raise InfillError before any token is generated.
"""
from __future__ import annotations

import threading
import weakref
from typing import Iterable

import numpy as np

from ..bitmask import bitmask_row, bitmask_words, bytes_arg, clear_bits, int_arg, set_bits
from ..matching import CompiledGrammar, GrammarMatcher
from ..errors import DeadEndError, EmptyLanguageError, GrammarError, MatcherError

_END = "end"


class InfillError(GrammarError):
    """No middle can join the prefix to the suffix under the grammar."""


class InfillMatcher(GrammarMatcher):
    """Matcher adapter for the middle of an infill; same API as any GrammarMatcher.

    ``end_ids`` are the tokens that end the middle (EOS, FIM pad/EOT, ...; default: the
    vocabulary's EOS tokens). ``guide`` is the grammar's right quotient by the suffix, compiled
    (built here when None and the suffix is not empty; InfillGrammar builds it once for all its
    matchers). Raises InfillError when no middle joins the prefix to the suffix.
    """

    def __init__(self, compiled: CompiledGrammar, prefix: bytes | str = b"",
                 suffix: bytes | str = b"", end_ids: Iterable[int] | None = None,
                 guide: CompiledGrammar | None = None) -> None:
        self.compiled = compiled
        self.prefix = prefix.encode("utf-8") if isinstance(prefix, str) else bytes(prefix)
        self.suffix = suffix.encode("utf-8") if isinstance(suffix, str) else bytes(suffix)
        vocab = compiled.vocab
        self.end_ids = np.array(sorted(set(vocab.eos_token_ids if end_ids is None else end_ids)),
                                dtype=np.int64)
        self._end_set = frozenset(self.end_ids.tolist())
        if guide is None and self.suffix:
            guide = quotient_grammar(compiled, self.suffix)
        self._inner = compiled.matcher()
        self._guide = guide.matcher() if guide is not None else None
        if self.prefix:
            if not self._inner.accept_bytes(self.prefix):
                raise InfillError(f"the infill prefix is not a viable start of the grammar "
                                  f"(prefix ends with {self.prefix[-40:]!r})")
            if self._guide is not None and not self._guide.accept_bytes(self.prefix):
                raise InfillError(f"no middle joins the prefix (ending {self.prefix[-40:]!r}) "
                                  f"to the suffix (starting {self.suffix[:40]!r}) under the "
                                  "grammar")
        if self._guide is not None and hasattr(self._guide, "reserve_keys"):
            _reserve_suffix_keys(self._guide, self.suffix)
        self._steps: list[str] = []  # "tok" or _END per accepted step, for rollback
        self._can_end_cache: dict = {}   # inner state -> whether the suffix completes it

    # the end rule -----------------------------------------------------------------------------
    def suffix_can_follow(self) -> bool:
        """Whether prefix + middle-so-far + suffix is a complete sentence."""
        if self.is_terminated():
            return True
        key = inner_state_key(self._inner)
        cached = self._can_end_cache.get(key) if key is not None else None
        if cached is not None:
            return cached
        if not self.suffix:
            ok = self._inner.is_accepting()
        elif self._inner.accept_bytes(self.suffix):
            ok = self._inner.is_accepting()
            self._inner.rollback(1)
        else:
            ok = False
        if key is not None:
            if len(self._can_end_cache) >= 4096:
                self._can_end_cache.clear()
            self._can_end_cache[key] = ok
        return ok

    # GrammarMatcher API -------------------------------------------------------------------------
    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        row = bitmask_row(bitmask, index, bitmask_words(self.compiled.vocab.size))
        if self.is_terminated():
            row[:] = 0
            return True
        can_end = self.suffix_can_follow()
        if self._guide is not None:
            try:
                self._guide.fill_next_token_bitmask(row)
            except DeadEndError:
                row[:] = 0
            if not row.any() and not can_end:
                raise DeadEndError(
                    f"no token can follow after {len(self._steps)} steps of the middle and "
                    f"the suffix cannot follow yet (a lexeme the grammar reads differently "
                    f"inside the whole text; see constrained/cfg/quotient.py)")
            inner = np.zeros_like(row)
            self._inner.fill_next_token_bitmask(inner)
            row &= inner
        else:
            self._inner.fill_next_token_bitmask(row)
        eos = np.fromiter(self.compiled.vocab.eos_token_ids, dtype=np.int64)
        clear_bits(row, np.union1d(eos, self.end_ids))
        if can_end:
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
        if self._guide is not None and not self._guide.accept_token(int(token_id)):
            return False
        if not self._inner.accept_token(int(token_id)):
            if self._guide is not None:
                self._guide.rollback(1)
            return False
        self._steps.append("tok")
        return True

    def accept_bytes(self, data: bytes) -> bool:
        data = bytes_arg(data)
        if self.is_terminated():
            return False
        if self._guide is not None and not self._guide.accept_bytes(data):
            return False
        if not self._inner.accept_bytes(data):
            if self._guide is not None:
                self._guide.rollback(1)
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
            if self._guide is not None:
                self._guide.rollback(inner)

    def is_accepting(self) -> bool:
        return self.is_terminated() or self.suffix_can_follow()

    def is_terminated(self) -> bool:
        return bool(self._steps) and self._steps[-1] == _END

    def reset(self) -> None:
        self.rollback(len(self._steps))

    def forced_bytes(self) -> bytes:
        """Bytes every middle must still start with (empty where the middle could end)."""
        if self.is_terminated() or self.suffix_can_follow():
            return b""
        if self._guide is not None:
            forced = self._guide.forced_bytes()
        else:
            forced = self._inner.forced_bytes()
        for cut in range(1, len(forced) + 1):
            if not self._inner.accept_bytes(forced[:cut]):
                return forced[:cut - 1]
            try:
                ends_here = self._suffix_fits_now()
            finally:
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
        if inner is None:
            return None
        guide = None if self._guide is None else inner_state_key(self._guide)
        return ("infill", inner, guide, self.is_terminated())

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
        raw = suffix.encode("utf-8") if isinstance(suffix, str) else bytes(suffix)
        self.guide = quotient_grammar(compiled, raw) if raw else None
        self.matcher()  # fail early when no middle fits

    def matcher(self) -> InfillMatcher:
        return InfillMatcher(self.inner, self.prefix, self.suffix, self.end_ids, self.guide)

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


def _reserve_suffix_keys(guide, suffix: bytes) -> None:
    """JSON: the keys the suffix writes into objects the prefix opened count as written, so
    the middle cannot write them (objects the middle opens itself are not covered)."""
    from ..cfg.json_scan import keys_ahead
    ahead = keys_ahead(suffix)
    if ahead is None:
        return
    closes, keys = ahead
    guide.reserve_keys({closes - rel: ks for rel, ks in keys.items()})


def quotient_grammar(compiled: CompiledGrammar, suffix: bytes) -> CompiledGrammar:
    """The compiled right quotient of ``compiled``'s grammar by ``suffix`` (its sentences are
    the texts that ``suffix`` completes); InfillError when there are none. The last few
    quotients of each compiled grammar are kept, so matchers of one infill share theirs."""
    from ..cfg.quotient import right_quotient
    from ..compiler import compile_grammar
    with _QUOTIENTS_LOCK:
        per_grammar = _QUOTIENTS.setdefault(compiled, {})
        got = per_grammar.get(suffix)
    if got is not None:
        return got
    try:
        guide = compile_grammar(right_quotient(compiled.grammar, suffix), compiled.vocab)
    except EmptyLanguageError:
        raise InfillError(f"no text of the grammar ends with the suffix "
                          f"(starting {suffix[:40]!r})") from None
    with _QUOTIENTS_LOCK:
        if len(per_grammar) >= _QUOTIENTS_PER_GRAMMAR:
            per_grammar.pop(next(iter(per_grammar)))
        return per_grammar.setdefault(suffix, guide)


_QUOTIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_QUOTIENTS_LOCK = threading.Lock()
_QUOTIENTS_PER_GRAMMAR = 8
