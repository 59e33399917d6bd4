"""Budget-aware completion: keep a short way to finish the sentence within the token budget.

A *plan* is a list of tokens that takes the matcher from its current state to a complete
sentence. For context-free grammars plans walk down the grammar's byte distances
(constrained.cfg.distance: the fewest bytes to a complete sentence, from the parser and lexer
state), taking at each step a byte that brings the end one byte nearer, checked by the matcher;
the bytes are then cut into the fewest vocabulary tokens, where a token may also begin with a
space the grammar takes there (`` []`` is one token in many vocabularies, ``[]`` two: a byte
longer, a token shorter). Where that walk gets stuck (greedy
lexing, keys already written) or the matcher is not a context-free one, plans come from a
small breadth-first search over bytes, else from a greedy depth-first search that tries closers
first and backtracks (both deduplicate states by the matcher's exact state when it exposes one);
when that fails, from depth-first searches with a deepening limit, two byte orders and coarser
state keys. Every plan is checked token by token, so it is a real path.
The loop keeps the invariant
``len(plan) + 1 <= remaining`` (the +1 is the end-of-sequence token): it follows the plan once
the budget is that tight, and rejects sampled tokens whose own plan would no longer fit.
"""
from __future__ import annotations

import weakref
from collections import deque

from .byte_tokens import ByteTokenizer

# bytes tried first: closers and short atoms finish sentences sooner; whitespace comes last
_PREFERRED = b'"}])\'0123456789,:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
_LAST = b" \n\t\r"
_BYTE_ORDER = tuple(dict.fromkeys(list(_PREFERRED) + [b for b in range(256) if b not in _LAST]
                                  + list(_LAST)))
# the second order closes brackets and lines before opening a string (a string after a string
# after ... is an endless branch in languages that concatenate strings)
_CLOSERS_FIRST = tuple(dict.fromkeys(list(b"}])\n") + list(_BYTE_ORDER)))


def search_key(matcher):
    """The key completion searches deduplicate by: the matcher's coarse ``search_key`` when
    it has one (a path found is always replayed on the real matcher), else ``state_key``."""
    key = getattr(matcher, "search_key", None)
    if callable(key):
        return key()
    return state_key(matcher)


def state_key(matcher):
    """A hashable key equal for equal matcher states, or None when the matcher has none."""
    key = getattr(matcher, "state_key", None)
    if callable(key):
        return key()
    stack = getattr(matcher, "_stack", None)  # regex and CFG matchers keep a stack of states
    if isinstance(stack, list) and stack:
        return stack[-1]
    return None


class CompletionPlanner:
    """Finds a short token path from a matcher's state to a complete sentence."""

    def __init__(self, tokenizer: ByteTokenizer, *, bfs_nodes: int = 16,
                 max_nodes: int = 4000, max_bytes: int = 1024,
                 max_walk_bytes: int = 65536) -> None:
        self.tokenizer = tokenizer
        self.bfs_nodes = bfs_nodes
        self.max_nodes = max_nodes
        self.max_bytes = max_bytes
        self.max_walk_bytes = max_walk_bytes

    def greedy_bytes(self, matcher, max_bytes: int | None = None,
                     order: tuple = _BYTE_ORDER, key=None) -> bytes | None:
        """Bytes completing the sentence by a greedy depth-first search no deeper than
        ``max_bytes`` (default: the planner's) trying bytes in ``order`` and deduplicating
        states by ``key`` (default ``state_key``), or None."""
        key_of = state_key if key is None else key
        limit = self.max_bytes if max_bytes is None else max_bytes
        if matcher.is_terminated() or matcher.is_accepting():
            return b""
        root = key_of(matcher)
        seen = {root} if root is not None else set()
        chunks: list[bytes] = []
        next_index = [0]          # per depth: the next byte of _BYTE_ORDER to try
        size = 0
        nodes = 0
        n_order = len(order)
        try:
            while nodes < self.max_nodes:
                if chunks and matcher.is_accepting():
                    return b"".join(chunks)
                i = next_index[-1]
                taken = None
                if size < limit:
                    if i == 0:
                        forced = matcher.forced_bytes()
                        if forced:
                            next_index[-1] = i = n_order  # no alternative at this depth
                            if matcher.accept_bytes(forced):
                                taken = forced
                    while taken is None and i < n_order:
                        b = order[i]
                        i += 1
                        if matcher.accept_bytes(bytes((b,))):
                            key = key_of(matcher)
                            if key is not None:
                                if key in seen:
                                    matcher.rollback(1)
                                    continue
                                seen.add(key)
                            taken = bytes((b,))
                    if taken is None or len(taken) == 1:
                        next_index[-1] = i
                if taken is not None:
                    chunks.append(taken)
                    size += len(taken)
                    next_index.append(0)
                    nodes += 1
                    continue
                if not chunks:
                    return None
                matcher.rollback(1)
                size -= len(chunks.pop())
                next_index.pop()
            return None
        finally:
            if chunks:
                matcher.rollback(len(chunks))

    def shortest_bytes(self, matcher) -> bytes | None:
        """The shortest bytes completing the sentence (bounded search), or None if not found."""
        if matcher.is_terminated() or matcher.is_accepting():
            return b""
        root = state_key(matcher)
        use_keys = root is not None
        seen = {root} if use_keys else set()
        queue: deque[bytes] = deque([b""])
        nodes = 0
        while queue and nodes < self.bfs_nodes:
            path = queue.popleft()
            nodes += 1
            if path and not matcher.accept_bytes(path):
                continue
            forced = matcher.forced_bytes()
            if forced:
                if path:
                    matcher.rollback(1)
                path += forced
                if not matcher.accept_bytes(path):  # pragma: no cover - forced bytes are viable
                    continue
                if matcher.is_accepting():
                    matcher.rollback(1)
                    return path
            try:
                if len(path) < self.max_bytes:
                    for b in _BYTE_ORDER:
                        if self._extend(matcher, b, path, queue, seen, use_keys):
                            return path + bytes((b,))
            finally:
                if path:
                    matcher.rollback(1)
        return None

    @staticmethod
    def _extend(matcher, b: int, path: bytes, queue, seen: set, use_keys: bool) -> bool:
        """Try byte ``b`` after the current state; True when it completes the sentence."""
        if not matcher.accept_bytes(bytes((b,))):
            return False
        try:
            if matcher.is_accepting():
                return True
            if use_keys:
                key = state_key(matcher)
                if key in seen:
                    return False
                seen.add(key)
            queue.append(path + bytes((b,)))
            return False
        finally:
            matcher.rollback(1)

    def distance_walk(self, matcher) -> bytes | None:
        """Bytes to a complete sentence along the grammar's byte distances (stepped on the
        parser and lexer state, then checked with the matcher), or None when the matcher is
        not a context-free one or the walk gets stuck."""
        parts = cfg_parts(matcher)
        if parts is None:
            return None
        runtime, state, dist = parts
        out = bytearray()
        while not runtime.is_accepting(state):
            here = dist.distance(state)
            if here >= _INF or len(out) >= self.max_walk_bytes:
                return None
            col, q = state
            lexer = runtime.lexer(col.candidates)
            row = lexer.rows[q]
            ends = q != 0 and lexer.acc_list[q]
            nxt = None
            for b in _BYTE_ORDER:
                if row[b] < 0 and not ends and q != 0:
                    continue
                cand = runtime.step(state, bytes((b,)))
                if cand is not None and dist.distance(cand) == here - 1:
                    nxt = cand
                    out.append(b)
                    break
            if nxt is None:
                return None
            state = nxt
        data = bytes(out)
        if data and not matcher.accept_bytes(data):   # keys already written, infill's end
            return None
        if data:
            ok = matcher.is_accepting()
            matcher.rollback(1)
            if not ok:
                return None
        return data

    def plan(self, matcher) -> list[int] | None:
        """Tokens from the current state to a complete sentence, or None when none was found."""
        data = self.distance_walk(matcher)
        if data is not None:
            tokens = self.tokenizer.fewest(matcher, data)
            spaced = self.tokenizer.fewest_spaced(matcher, data)
            if spaced is not None and (tokens is None or len(spaced) < len(tokens)):
                return spaced
            if tokens is not None:
                return tokens
        parts = cfg_parts(matcher)
        if parts is not None and parts[2].distance(parts[1]) > self.max_bytes:
            return None     # the searches below stop at max_bytes: none can succeed
        data = self.shortest_bytes(matcher)
        if data is None:   # the usual case: closers first, full depth, exact states
            data = self.greedy_bytes(matcher)
        # fallbacks, when that search runs down an endless branch (a string after a string,
        # an optional member after another) while a short completion waits elsewhere: states
        # merged by their coarse search key with a deepening limit and both byte orders, then
        # exact keys
        for key in (search_key, state_key):
            for limit in (8, 32, 128, self.max_bytes):
                for order in (_BYTE_ORDER, _CLOSERS_FIRST):
                    tried = (key, limit, order) == (state_key, self.max_bytes, _BYTE_ORDER)
                    if data is None and not tried:
                        data = self.greedy_bytes(matcher, min(limit, self.max_bytes), order,
                                                 key)
        if data is None:
            return None
        if not data:
            return []
        tokens, used = self.tokenizer.accept(matcher, data)
        complete = used == len(data) and matcher.is_accepting()
        matcher.rollback(len(tokens))
        return tokens if complete else None


_INF = 1 << 60
_distances: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def cfg_parts(matcher):
    """(runtime, current state, ByteDistance) of a context-free matcher (an infill matcher's
    quotient grammar for infill), or None for other matchers and finished ones."""
    inner = getattr(matcher, "_guide", None)
    if inner is not None:
        matcher = inner
    runtime = getattr(matcher, "_runtime", None)
    stack = getattr(matcher, "_stack", None)
    if runtime is None or not isinstance(stack, list) or stack[-1] is None:
        return None
    from ..cfg.distance import ByteDistance
    dist = _distances.get(runtime)
    if dist is None:
        dist = _distances.setdefault(runtime, ByteDistance(runtime))
    return runtime, stack[-1], dist
