"""Test helper: a random walk over a matcher's masks, ended by the completion planner."""
from __future__ import annotations

import random

import numpy as np

from constrained.bitmask import allowed_token_ids


def random_walk(matcher, vocab, planner, rng: random.Random, steps: int) -> bytes | None:
    """Up to ``steps`` uniform choices among the allowed tokens, then the planner's shortest
    completion and the end-of-sequence token; the text, or None when the planner (a bounded
    search) finds no completion."""
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    out = b""
    for _ in range(steps):
        matcher.fill_next_token_bitmask(words)
        tid = int(rng.choice(allowed_token_ids(words, vocab.size)))
        assert matcher.accept_token(tid)
        if matcher.is_terminated():
            return out
        out += vocab.token_bytes[tid]
    plan = planner.plan(matcher)
    if plan is None:
        return None
    for tid in plan:
        assert matcher.accept_token(tid)
        out += vocab.token_bytes[tid]
    assert matcher.is_accepting()
    assert matcher.accept_token(min(vocab.eos_token_ids))
    return out
