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

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..bitmask import allocate_token_bitmask, unpack_bitmask
from ..vocabulary import Vocabulary
from .budget import state_key


_FEW = 24    # token sets at most this small are read on one token at a time


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
        self._state_info: dict = {}   # state key -> (its looping bytes, whether it accepts)
        self._edges: dict = {}        # (state key, byte) -> the next state's key
        self._exact: dict = {}        # state key -> shortest completion (token ids)
        self._more_than: dict = {}    # state key -> k: no completion of at most k tokens

    # next states ------------------------------------------------------------------------------
    def _non_looping(self, loop: np.ndarray) -> np.ndarray:
        """Sorted positions in the concatenated token bytes of the bytes not in ``loop``."""
        key = np.packbits(loop).tobytes()
        got = self._loop_prefix.get(key)
        if got is None:
            if len(self._loop_prefix) >= 64:
                self._loop_prefix.clear()
            got = self._loop_prefix[key] = np.flatnonzero(~loop[self._flat])
        return got

    def _loop_runs(self, loop: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per token: the offset where its run of ``loop`` bytes from ``offsets`` ends (its
        length when the run reaches its end)."""
        stops = self._non_looping(loop)
        starts = self._starts[ids]
        ends = starts + self._lens[ids]
        j = np.searchsorted(stops, starts + offsets)
        first = np.where(j < len(stops), stops[np.minimum(j, len(stops) - 1)], ends)
        return np.minimum(first, ends) - starts

    def _loop_of(self, matcher, key) -> np.ndarray:
        looping = getattr(matcher, "looping_bytes", None)
        if looping is not None:
            return looping()
        loop = np.zeros(256, dtype=bool)
        for b in range(256):
            if matcher.accept_bytes(bytes((b,))):
                loop[b] = state_key(matcher) == key
                matcher.rollback(1)
        return loop

    def _info(self, matcher, key, path: bytes) -> tuple[np.ndarray, bool]:
        """(looping bytes, accepting) of the state ``path`` leads to from the matcher's."""
        got = self._state_info.get(key)
        if got is None:
            moved = bool(path) and matcher.accept_bytes(path)
            try:
                got = (self._loop_of(matcher, key), matcher.is_accepting())
            finally:
                if moved:
                    matcher.rollback(1)
            self._state_info[key] = got
        return got

    def _edge(self, matcher, key, path: bytes, byte: int):
        """The key of the state ``byte`` leads to from the state ``path`` leads to."""
        child = self._edges.get((key, byte))
        if child is None:
            if not matcher.accept_bytes(path + bytes((byte,))):  # never: the mask is exact
                raise AssertionError("a byte path of allowed tokens was refused")
            child = self._edges[(key, byte)] = state_key(matcher)
            matcher.rollback(1)
        return child

    def successors(self, matcher) -> tuple[np.ndarray, list[Successor]] | None:
        """(tokens that leave the state as it is, the other allowed text tokens grouped by the
        state they lead to), or None past ``max_groups`` byte steps. The matcher is left where
        it was.

        Tokens are read together, byte by byte: a run of bytes that leaves a state as it is
        counts as nothing (``"abc"}`` and ``"xyz"}`` both read as ``""}`` when the string body
        loops), and tokens whose bytes so far lead to one state are read on together (the
        characters of a UTF-8 class share their middle states). What a state's bytes do is
        kept per state key, so the matcher steps each state and byte once."""
        key0 = state_key(matcher)
        if len(self._edges) > self.cache_size:
            self._edges.clear()
            self._state_info.clear()
        bm = allocate_token_bitmask(self.vocab.size)
        matcher.fill_next_token_bitmask(bm)
        unpacked = unpack_bitmask(bm, self.vocab.size)[:len(self._lens)]
        allowed = np.nonzero(unpacked & self._text)[0]
        specials = np.nonzero(unpacked & self._special)[0]
        by_state: dict = {}
        out: list[Successor] = []
        same: list = []

        def file(key, accepting: bool, ids) -> None:
            if key == key0:
                same.append(ids)
                return
            got = by_state.get(key)
            if got is None:
                got = by_state[key] = Successor([], key, accepting)
                out.append(got)
            got.token_ids.append(ids)

        # per state reached and not yet read on: (a path of bytes to it, the tokens on it, where
        # each is read up to); paths that meet in one state are read on together
        pending: dict = {key0: (b"", [allowed], [np.zeros(len(allowed), dtype=np.int64)])}
        order = deque([key0])
        steps = 0
        while order:
            key = order.popleft()
            path, id_parts, offset_parts = pending.pop(key)
            ids, offsets = np.concatenate(id_parts), np.concatenate(offset_parts)
            if len(ids) <= _FEW:
                steps += self._read_each(matcher, key, path, ids, offsets, file)
                if steps > self.max_groups:
                    return None
                continue
            loop, accepting = self._info(matcher, key, path)
            ends = self._loop_runs(loop, ids, offsets)
            done = ends == self._lens[ids]
            if done.any():
                file(key, accepting, ids[done])
            ids, ends = ids[~done], ends[~done]
            if not len(ids):
                continue
            nxt = self._flat[self._starts[ids] + ends]
            by_byte = np.argsort(nxt, kind="stable")
            ids, ends, nxt = ids[by_byte], ends[by_byte], nxt[by_byte]
            cuts = np.flatnonzero(np.diff(nxt)) + 1
            steps += len(cuts) + 1
            if steps > self.max_groups:
                return None
            for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(ids)]):
                byte = int(nxt[lo])
                child = self._edge(matcher, key, path, byte)
                got = pending.get(child)
                if got is None:
                    got = pending[child] = (path + bytes((byte,)), [], [])
                    order.append(child)
                got[1].append(ids[lo:hi])
                got[2].append(ends[lo:hi] + 1)
        for t in specials.tolist():            # special tokens a grammar names: one step each
            if matcher.accept_token(t):
                file(state_key(matcher), matcher.is_accepting(), np.array([t]))
                matcher.rollback(1)
        for s in out:
            s.token_ids = np.sort(np.concatenate(s.token_ids)).astype(np.int64)
        same_ids = np.sort(np.concatenate(same)).astype(np.int64) if same else \
            np.zeros(0, dtype=np.int64)
        return same_ids, out

    def _read_each(self, matcher, key, path: bytes, ids: np.ndarray, offsets: np.ndarray,
                   file) -> int:
        """Reads a few tokens on one at a time from the state ``path`` leads to (``key``),
        filing each under the state it ends in; returns the byte steps taken."""
        steps = 0
        for t, i in zip(ids.tolist(), offsets.tolist()):
            data = self._bytes[t]
            k, p = key, path
            while True:
                loop, accepting = self._info(matcher, k, p)
                while i < len(data) and loop[data[i]]:
                    i += 1
                if i == len(data):
                    file(k, accepting, np.array([t]))
                    break
                k = self._edge(matcher, k, p, data[i])
                p += data[i:i + 1]
                i += 1
                steps += 1
        return steps

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
        relaxed = getattr(matcher, "relaxed", None)
        if relaxed is not None and key0 not in self._exact:
            # a superset language first: its states are fewer (the keys written are not part
            # of them); no completion there is none here, and one it finds is exact here when
            # this matcher accepts it too
            loose = self._distance(relaxed(), limit)
            if loose.exceeds:
                return loose
            if loose.tokens is not None and self._accepts(matcher, loose.tokens):
                self._remember(matcher, loose.tokens)
                return loose
        got = self._exact.get(key0)
        if got is not None:
            return Distance(list(got)) if len(got) <= limit else Distance(None, True)
        if self._more_than.get(key0, -1) >= limit:
            return Distance(None, True)
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

    @staticmethod
    def _accepts(matcher, tokens: list[int]) -> bool:
        """Whether ``tokens`` take ``matcher`` to a complete sentence (it is left as it was)."""
        done = 0
        try:
            for t in tokens:
                if not matcher.accept_token(t):
                    return False
                done += 1
            return matcher.is_accepting()
        finally:
            if done:
                matcher.rollback(done)

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

