"""Selection: turn the filtered candidates into one token per row.

- ``dist``: p_i = exp(l_i - max), summed in float64; u ~ U[0, 1) from the row's generator; walk the
  candidates in ascending token id and take the first whose running sum reaches u * total.
  (llama.cpp walks its current array order; the distribution is the same, and a fixed id order
  makes a row's draw independent of the rest of the batch.)
- ``race``: token = argmax_i p_i / E_i with E_i ~ Exp(1) (equivalently argmax l_i - ln E_i);
  P(i) = p_i, and a removed token (p = 0) never wins.
- ``greedy``: the first (lowest id) token with the largest logit.
Each returns (token ids [B], probability of the token under the filtered distribution [B]).
"""
from __future__ import annotations

import torch
from torch import Tensor

from ._candidates import Candidates
from ._rng import hashed_exponential

_TINY = 5e-324
_BLOCK = 1024


def first_max_mask(c: Candidates) -> Tensor:
    """Mask of the single lowest-id entry holding the row maximum."""
    mx = c.logits.max(dim=1, keepdim=True).values
    eq = c.logits == mx
    ids = c.token_ids()
    big = torch.iinfo(torch.int64).max
    first = torch.where(eq, ids, torch.full_like(ids, big)).min(dim=1, keepdim=True).values
    return eq & (ids == first)


def _probs64(logits: Tensor) -> Tensor:
    x = logits.to(torch.float64)
    mx = x.max(dim=1, keepdim=True).values
    e = torch.exp(x - mx)
    return e / e.sum(dim=1, keepdim=True)


def select_dist(c: Candidates, u: Tensor) -> tuple[Tensor, Tensor]:
    """Inverse-CDF draw with uniforms ``u`` [B] (float64 in [0, 1))."""
    logits, ids = c.logits, c.ids
    if ids is not None:
        by_id = torch.argsort(ids, dim=1)
        logits, ids = logits.gather(1, by_id), ids.gather(1, by_id)
    e = torch.exp(logits - logits.max(dim=1, keepdim=True).values)
    B, n = e.shape
    u64 = u.to(torch.float64)
    if n <= 2 * _BLOCK:
        cum = e.cumsum(dim=1, dtype=torch.float64)  # the running sum in float64, as llama.cpp
        total = cum[:, -1]
        target = (u64 * total).clamp(min=_TINY)
        idx = torch.searchsorted(cum, target[:, None]).clamp(max=n - 1)
    else:
        # two-level walk: block sums locate the block, one block is walked element by element
        nb = -(-n // _BLOCK)
        ep = torch.nn.functional.pad(e, (0, nb * _BLOCK - n)).view(B, nb, _BLOCK)
        bcum = ep.sum(dim=2, dtype=torch.float64).cumsum(dim=1)
        total = bcum[:, -1]
        target = (u64 * total).clamp(min=_TINY)
        blk = torch.searchsorted(bcum, target[:, None]).clamp(max=nb - 1)
        before = torch.where(blk > 0, bcum.gather(1, (blk - 1).clamp(min=0)), torch.zeros_like(target[:, None]))
        inner = ep.gather(1, blk[:, :, None].expand(B, 1, _BLOCK)).squeeze(1).cumsum(dim=1, dtype=torch.float64)
        j = torch.searchsorted(inner + before, target[:, None]).clamp(max=_BLOCK - 1)
        idx = (blk * _BLOCK + j).clamp(max=n - 1)
        # rounding can land on a zero-probability slot at a block edge: step back to a kept one
        bad = e.gather(1, idx) <= 0
        if bool(bad.any()):
            pos = torch.arange(n, device=e.device).expand(B, -1)
            prev = torch.where((e > 0) & (pos <= idx), pos, torch.full_like(pos, -1)).max(dim=1, keepdim=True).values
            nxt = torch.where(e > 0, pos, torch.full_like(pos, n)).min(dim=1, keepdim=True).values
            idx = torch.where(bad, torch.where(prev >= 0, prev, nxt), idx)
    p = (e.gather(1, idx).to(torch.float64) / total[:, None]).squeeze(1)
    tok = idx.squeeze(1) if ids is None else ids.gather(1, idx).squeeze(1)
    return tok, p


def select_race(c: Candidates, keys: Tensor) -> tuple[Tensor, Tensor]:
    """Exponential race with per-row 64-bit ``keys`` [B] (int64)."""
    ids = c.token_ids()
    e = hashed_exponential(keys, ids)
    score = c.logits.to(torch.float64) - torch.log(e)
    idx = score.argmax(dim=1, keepdim=True)
    p = _probs64(c.logits).gather(1, idx).squeeze(1)
    return ids.gather(1, idx).squeeze(1), p


def select_greedy(c: Candidates) -> tuple[Tensor, Tensor]:
    """The lowest-id maximum of each row."""
    m = first_max_mask(c)
    idx = m.to(torch.int8).argmax(dim=1, keepdim=True)
    p = _probs64(c.logits).gather(1, idx).squeeze(1)
    return c.token_ids().gather(1, idx).squeeze(1), p
