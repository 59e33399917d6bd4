"""Budget-aware completion: keep a short way to finish the sentence within the token budget.

A *plan* is a list of tokens that takes the matcher from its current state to a complete
sentence. Plans come from a breadth-first search over bytes (shortest completion in bytes,
states deduplicated by the matcher's exact state when it exposes one), tokenized longest-match
and checked token by token, so every plan is a real path. The loop keeps the invariant
``len(plan) + 1 <= remaining`` (the +1 is the end-of-sequence token): it follows the plan once
the budget is that tight, and rejects sampled tokens whose own plan would no longer fit.
"""
from __future__ import annotations

from collections import deque

from .byte_tokens import ByteTokenizer

# bytes tried first (then every other byte): closers and short atoms finish sentences sooner
_PREFERRED = b'"}])\'0123456789 ,:\nabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
_BYTE_ORDER = tuple(dict.fromkeys(list(_PREFERRED) + list(range(256))))


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

    def __init__(self, tokenizer: ByteTokenizer, *, max_nodes: int = 400,
                 max_bytes: int = 256) -> None:
        self.tokenizer = tokenizer
        self.max_nodes = max_nodes
        self.max_bytes = max_bytes

    def shortest_bytes(self, matcher) -> bytes | None:
        """The shortest bytes completing the sentence (bounded search), or None if not found."""
        if matcher.is_terminated() or matcher.is_accepting():
            return b""
        root = state_key(matcher)
        use_keys = root is not None
        seen = {root} if use_keys else set()
        queue: deque[bytes] = deque([b""])
        nodes = 0
        while queue and nodes < self.max_nodes:
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

    def plan(self, matcher) -> list[int] | None:
        """Tokens from the current state to a complete sentence, or None when none was found."""
        data = self.shortest_bytes(matcher)
        if data is None:
            return None
        if not data:
            return []
        tokens, used = self.tokenizer.accept(matcher, data)
        complete = used == len(data) and matcher.is_accepting()
        matcher.rollback(len(tokens))
        return tokens if complete else None
