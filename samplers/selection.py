"""Selection: turn the filtered candidates into one token per row.

- ``dist``: p_i = exp(l_i - max) in float64; u ~ U[0, 1) from the row's generator; walk the
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
    x = logits.to(torch.float64)
    e = torch.exp(x - x.max(dim=1, keepdim=True).values)
    cum = e.cumsum(dim=1)
    total = cum[:, -1]
    target = (u.to(torch.float64) * total).clamp(min=_TINY)
    idx = torch.searchsorted(cum, target[:, None]).clamp(max=cum.shape[1] - 1)
    p = (e.gather(1, idx) / total[:, None]).squeeze(1)
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
