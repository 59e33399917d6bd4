"""A token budget for the region that opens the output (a reasoning block), enforced exactly.

``RegionBudgetMatcher`` wraps a grammar's matcher. Beside it runs a matcher of the region's own
grammar (the output's start up to the region's end, then anything: constrained.grammar.
structural_tag.region_grammar), complete exactly when the region is closed. While it is open
and the budget is tight, a token is allowed iff the grammar allows it and the region can still
be closed within the tokens left after it (the exact token-level search of
``ShortestCompletion.budget_mask``); once closed, the grammar alone decides.

"Tight": closing the region from any state needs at most the end's length in bytes plus a
partial character's 3 bytes, one token each, when the vocabulary has a token per byte (byte-level
BPE, SentencePiece byte fallback); below that many tokens left (plus one) the exact search runs.
Where the search gives up (free text leads to too many distinct token remainders: text ends on
large vocabularies), the region closes on its shortest token path instead: sound (the budget
holds) but not maximal in those last tokens. A special-token end (Qwen3's ``</think>``) costs
one token, so only the last five tokens are ever restricted.
"""
from __future__ import annotations

import numpy as np

from ..bitmask import bitmask_row, pack_bool, unpack_bitmask
from ..errors import DeadEndError
from .byte_tokens import ByteTokenizer
from .shortest import ShortestCompletion

# the rest of a partial UTF-8 character: nothing, or continuation bytes every lead byte takes
_CONTINUATIONS = (b"", b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\xa0", b"\xa0\x80", b"\x90\x80\x80",
                  b"\x90", b"\x90\x80")


class RegionBudgetMatcher:
    """``inner`` (the grammar's matcher) with at most ``max_tokens`` tokens after the region's
    begin (the first token that ends past it is the first counted) until ``region`` (a matcher
    of the region grammar) is complete, the end's tokens included."""

    def __init__(self, inner, region, max_tokens: int, begin: bytes, end: bytes,
                 end_id: int | None, shortest: ShortestCompletion) -> None:
        self._inner = inner
        self._region = region
        self.max_tokens = max_tokens
        self._end, self._end_id = end, end_id
        self._window = (1 if end_id is not None else len(end)) + 4
        self._bytes = ByteTokenizer.of(shortest.vocab)
        self._shortest = shortest
        self._vocab = shortest.vocab
        self._begin = len(begin)
        self._counts: list[int] = []     # per accepted step: bytes so far, tokens counted
        self._steps = 0          # tokens that end past the region's begin (what it counts)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    # masks -----------------------------------------------------------------------------------
    def _limit(self) -> np.ndarray | None:
        """Bool per token id of the tokens the budget allows, or None (no limit now)."""
        if self._region.is_accepting() or (self._counts[-1][0] if self._counts else 0) \
                < self._begin:
            return None
        left = self.max_tokens - self._steps
        if left >= self._window:     # every state closes within window - 1 single-byte tokens
            return None
        allowed = self._shortest.budget_mask(self._region, left + 1)
        if allowed is None:      # the search gave up (free text has too many token groups):
            allowed = np.zeros(self._vocab.size, dtype=bool)     # close on the shortest path
            plan = self._closing_plan()
            if plan:
                allowed[plan[0]] = True
            return allowed
        for t in self._vocab.eos_token_ids:
            allowed[t] = False
        return allowed

    def _closing_plan(self) -> list[int] | None:
        """The fewest tokens of the shortest text that closes the region (the rest of a
        partial character, then the end or what of it is still missing)."""
        region, tok, end = self._region, self._bytes, self._end
        for cont in _CONTINUATIONS:
            if cont and not region.accept_bytes(cont):
                continue
            found = None
            if self._end_id is not None:
                if region.accept_token(self._end_id):
                    region.rollback(1)
                    found = b""
            else:
                for j in range(1, len(end) + 1):
                    if region.accept_bytes(end[len(end) - j:]):
                        done = region.is_accepting()
                        region.rollback(1)
                        if done:
                            found = end[len(end) - j:]
                            break
            if cont:
                region.rollback(1)
            if found is not None:
                text = cont + found
                head = tok.fewest(region, text) if text else []
                if head is not None:
                    return head + ([self._end_id] if self._end_id is not None else [])
        return None

    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        self._inner.fill_next_token_bitmask(bitmask, index)
        limit = self._limit()
        if limit is not None:
            row = bitmask_row(bitmask, index, (self._vocab.size + 31) // 32)
            keep = unpack_bitmask(row, self._vocab.size) & limit
            if not keep.any():
                raise DeadEndError(f"the reasoning budget of {self.max_tokens} tokens leaves no "
                                   "token that closes the block in time")
            row[:] = pack_bool(keep, self._vocab.size)[:len(row)]
        return True

    def allowed_token_ids(self) -> np.ndarray:
        ids = self._inner.allowed_token_ids()
        limit = self._limit()
        return ids if limit is None else ids[limit[ids]]

    # steps -----------------------------------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        limit = self._limit()
        if limit is not None and not (0 <= int(token_id) < len(limit) and limit[int(token_id)]):
            return False
        if not self._inner.accept_token(token_id):
            return False
        if not self._region.accept_token(token_id):   # the region's language is the output's
            self._inner.rollback(1)                    # start: only an inconsistent pair fails
            return False
        tid = int(token_id)
        self._count(len(self._vocab.token_bytes[tid]) if tid < self._vocab.n_tokens else 0)
        return True

    def _count(self, n_bytes: int) -> None:
        seen = (self._counts[-1][0] if self._counts else 0) + n_bytes
        self._counts.append((seen, self._steps))
        if seen > self._begin:
            self._steps += 1

    def accept_bytes(self, data: bytes) -> bool:
        if not self._inner.accept_bytes(data):
            return False
        if not self._region.accept_bytes(data):
            self._inner.rollback(1)
            return False
        self._count(len(data))
        return True

    def rollback(self, n_tokens: int = 1) -> None:
        self._inner.rollback(n_tokens)
        self._region.rollback(n_tokens)
        if n_tokens:
            self._steps = self._counts[-n_tokens][1]
            del self._counts[-n_tokens:]

    def reset(self) -> None:
        self._inner.reset()
        self._region.reset()
        self._steps = 0
        self._counts = []


def budgeted_matcher(compiled, inner, budget) -> RegionBudgetMatcher:
    """``inner`` under ``budget`` (a grammar.RegionBudget); the region's compiled grammar and
    its completion search are built once per compiled grammar."""
    parts = compiled.__dict__.get("_region_budget")
    if parts is None:
        from ..compiler import compile_grammar
        from ..grammar.structural_tag import region_grammar
        vocab = compiled.vocab
        region = compile_grammar(region_grammar(budget, vocab), vocab)
        end = budget.end.encode("utf-8")
        end_id = vocab.special_ids_by_text.get(end)
        parts = compiled.__dict__.setdefault("_region_budget",
                                             (region, ShortestCompletion(vocab), end, end_id))
    region, shortest, end, end_id = parts
    return RegionBudgetMatcher(inner, region.matcher(), budget.max_tokens,
                               budget.begin.encode("utf-8"), end, end_id, shortest)
