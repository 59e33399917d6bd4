"""The fewest tokens from a matcher's state to a complete sentence, exactly, on the token level.

A breadth-first search over token steps: from a state, every token the mask allows leads to a
next state, and equal states (by the matcher's ``state_key``) are expanded once, so the first
complete state found is reached by the fewest tokens. Enumerating the next states does not step
every allowed token: the bytes that leave the state exactly as it was (the body of a string,
the digits of a number) are read off each token's start first, so a token is "its remainder"
(``abc"}`` acts as ``"}``) and all tokens with one remainder lead to one state; only distinct
remainders are stepped. What the search finds is cached per state (exact distances, and "more
than k" when a search up to k found nothing), so the decode loop asks again at no cost.

``budget_mask`` gives the tokens whose next state can still complete within a token budget: the
mask a decode loop applies while the budget is tight.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bitmask import allocate_token_bitmask, unpack_bitmask
from ..vocabulary import Vocabulary
from .budget import state_key
from .byte_tokens import accepts_tokens


@dataclass
class Successor:
    """Tokens that lead from one state to one next state (``accepting``: it is complete)."""

    token_ids: np.ndarray
    key: object
    accepting: bool


@dataclass(frozen=True)
class Distance:
    """``tokens``: a shortest completion (token ids, end-of-sequence not included), or None
    when no completion needs at most the searched number of tokens (``exceeds`` holds then)
    or the search stopped at its size limits (``exceeds`` is False: unknown)."""

    tokens: list[int] | None
    exceeds: bool = False

    @property
    def known(self) -> bool:
        return self.tokens is not None or self.exceeds


class ShortestCompletion:
    """Exact fewest-token completions for matchers over one vocabulary (see the module
    docstring); ``max_states`` bounds the states one search may expand, ``max_groups`` the
    distinct token remainders of one state (past either the answer is "unknown")."""

    def __init__(self, vocab: Vocabulary, *, max_states: int = 4000, max_groups: int = 4096,
                 cache_size: int = 50_000) -> None:
        self.vocab = vocab
        self.max_states = max_states
        self.max_groups = max_groups
        self._left = max_states       # expansions left to the current top-level call
        self.cache_size = cache_size
        n = vocab.n_tokens
        data = vocab.token_bytes[:n]
        self._bytes = data
        self._lens = np.fromiter((len(b) for b in data), dtype=np.int64, count=n)
        self._starts = np.zeros(n, dtype=np.int64)
        np.cumsum(self._lens[:-1], out=self._starts[1:])
        self._flat = np.frombuffer(b"".join(data), dtype=np.uint8)
        text = np.asarray(vocab.text_token_mask[:n], dtype=bool) & (self._lens > 0)
        self._text = text
        special = np.zeros(n, dtype=bool)
        named = sorted(vocab.special_token_ids - vocab.eos_token_ids)
        special[[t for t in named if t < n]] = True
        self._special = special
        self._loop_prefix: dict[bytes, np.ndarray] = {}
        self._exact: dict = {}        # state key -> shortest completion (token ids)
        self._more_than: dict = {}    # state key -> k: no completion of at most k tokens

    # next states ------------------------------------------------------------------------------
    def _prefix_lengths(self, loop: np.ndarray) -> np.ndarray:
        """Per token: how many of its first bytes are in ``loop`` (bool[256])."""
        key = np.packbits(loop).tobytes()
        got = self._loop_prefix.get(key)
        if got is None:
            if len(self._loop_prefix) >= 64:
                self._loop_prefix.clear()
            inside = loop[self._flat]
            pos = np.where(inside, np.iinfo(np.int64).max, np.arange(len(self._flat)))
            ends = self._starts + self._lens
            first = np.full(len(self._lens), np.iinfo(np.int64).max, dtype=np.int64)
            has = self._lens > 0
            if len(pos):
                first[has] = np.minimum.reduceat(pos, self._starts[has])
            got = np.minimum(first, ends) - self._starts
            got[~has] = 0
            self._loop_prefix[key] = got
        return got

    def successors(self, matcher) -> tuple[np.ndarray, list[Successor]] | None:
        """(tokens that leave the state as it is, the other allowed text tokens grouped by the
        state they lead to), or None past ``max_groups`` distinct token remainders. The
        matcher is left where it was."""
        key0 = state_key(matcher)
        bm = allocate_token_bitmask(self.vocab.size)
        matcher.fill_next_token_bitmask(bm)
        unpacked = unpack_bitmask(bm, self.vocab.size)[:len(self._lens)]
        allowed = np.nonzero(unpacked & self._text)[0]
        specials = np.nonzero(unpacked & self._special)[0]
        looping = getattr(matcher, "looping_bytes", None)
        if looping is not None:
            loop = looping()
        else:
            loop = np.zeros(256, dtype=bool)
            for b in range(256):
                if matcher.accept_bytes(bytes((b,))):
                    loop[b] = state_key(matcher) == key0
                    matcher.rollback(1)
        k = self._prefix_lengths(loop)[allowed]
        whole = k == self._lens[allowed]
        if int((~whole).sum()) > 4 * self.max_groups:
            return None
        same = allowed[whole]
        groups: dict[bytes, list[int]] = {}
        data = self._bytes
        for t, cut in zip(allowed[~whole].tolist(), k[~whole].tolist()):
            groups.setdefault(data[t][cut:], []).append(t)
        if len(groups) > self.max_groups:
            return None
        by_state: dict = {}
        out: list[Successor] = []

        def add(ids: list[int]) -> None:
            """Files ``ids`` (just stepped) under the state they led to, and steps back."""
            key = state_key(matcher)
            accepting = matcher.is_accepting()
            matcher.rollback(1)
            got = by_state.get(key)
            if got is None:
                got = by_state[key] = Successor([], key, accepting)
                out.append(got)
            got.token_ids.extend(ids)

        for rest, ids in groups.items():
            if matcher.accept_bytes(rest):     # always: the mask is exact
                add(ids)
        for t in specials.tolist():            # special tokens a grammar names: one step each
            if matcher.accept_token(t):
                add([t])
        for s in out:
            s.token_ids = np.array(sorted(s.token_ids), dtype=np.int64)
        return same, out

    # distances ------------------------------------------------------------------------------
    def distance(self, matcher, limit: int, max_states: int | None = None) -> Distance:
        """The fewest tokens (at most ``limit``) taking ``matcher`` to a complete sentence;
        unknown (``Distance(None)``) past ``max_states`` expanded states (default: the
        search's own bound)."""
        self._left = self.max_states if max_states is None else max_states
        return self._distance(matcher, limit)

    def _distance(self, matcher, limit: int) -> Distance:
        key0 = state_key(matcher)
        if key0 is None:
            return Distance(None)
        if matcher.is_accepting():
            return Distance([])
        got = self._exact.get(key0)
        if got is not None:
            return Distance(list(got)) if len(got) <= limit else Distance(None, True)
        if self._more_than.get(key0, -1) >= limit:
            return Distance(None, True)
        relaxed = getattr(matcher, "relaxed", None)
        if relaxed is not None:
            # a superset language first: its states are fewer (the keys written are not part
            # of them); no completion there is none here, and one it finds is exact here when
            # this matcher accepts it too
            loose = self._distance(relaxed(), limit)
            if loose.exceeds:
                return loose
            if loose.tokens is not None and accepts_tokens(matcher, loose.tokens, True):
                self._remember(matcher, loose.tokens)
                return loose
        seen = {key0}
        frontier: list[list[int]] = [[]]
        for depth in range(1, limit + 1):
            nxt: list[list[int]] = []
            for path in frontier:
                if self._left <= 0:
                    return Distance(None)
                self._left -= 1
                for t in path:
                    matcher.accept_token(t)
                try:
                    got = self.successors(matcher)
                finally:
                    if path:
                        matcher.rollback(len(path))
                if got is None:
                    return Distance(None)
                for s in got[1]:
                    if s.accepting:
                        found = path + [int(s.token_ids[0])]
                        self._remember(matcher, found)
                        return Distance(found)
                    if s.key not in seen:
                        seen.add(s.key)
                        nxt.append(path + [int(s.token_ids[0])])
            frontier = nxt
            if not frontier:
                break
        self._more_than[key0] = max(self._more_than.get(key0, -1), limit)
        return Distance(None, True)

    def _remember(self, matcher, tokens: list[int]) -> None:
        """Caches the distance of every state on a shortest path (each rest of it is a
        shortest path from where it starts)."""
        if len(self._exact) + len(tokens) >= self.cache_size:
            self._exact.clear()
            self._more_than.clear()
        for i, t in enumerate(tokens):
            self._exact[state_key(matcher)] = tuple(tokens[i:])
            matcher.accept_token(t)
        matcher.rollback(len(tokens))

    def budget_mask(self, matcher, remaining: int) -> np.ndarray | None:
        """Bool per token id: allowed now and able to complete within ``remaining`` tokens in
        all (this token and the end-of-sequence token included). None when the searches
        together expanded more than ``max_states`` states (unknown)."""
        self._left = self.max_states
        out = np.zeros(self.vocab.size, dtype=bool)
        if remaining < 1:
            return out
        if matcher.is_accepting():
            for t in self.vocab.eos_token_ids:
                out[t] = True
        if remaining < 2:
            return out
        got = self.successors(matcher)
        if got is None:
            return None
        same, succ = got
        if len(same):
            d = self._distance(matcher, remaining - 2)
            if not d.known:
                return None
            if d.tokens is not None:
                out[same] = True
        for s in succ:
            if s.accepting:
                out[s.token_ids] = True
                continue
            matcher.accept_token(int(s.token_ids[0]))
            try:
                d = self._distance(matcher, remaining - 2)
            finally:
                matcher.rollback(1)
            if not d.known:
                return None
            if d.tokens is not None:
                out[s.token_ids] = True
        return out
