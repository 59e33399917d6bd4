"""Mirostat v1 and v2 truncation (the state mu lives in the chain, one value per row).

Both truncate here; the chain then draws from what is left and updates
mu <- mu - eta * (-log2 p_selected - tau), p_selected taken after renormalisation.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from ._candidates import Candidates
from .selection import first_max_mask


def mirostat_v2(c: Candidates, mu: Tensor, active: Tensor) -> None:
    """Keep tokens with surprise -log2 p <= mu (at least the most likely one)."""
    if not bool(active.any()):
        return
    # -log2 p <= mu  <=>  logit >= logsumexp - mu * ln 2
    lse = torch.logsumexp(c.logits, dim=1).to(torch.float64)
    thr = (lse - mu * math.log(2.0)).to(c.logits.dtype)
    keep = c.logits >= thr[:, None]
    none = ~keep.any(dim=1)
    if bool(none.any()):
        keep = keep | (first_max_mask(c) & none[:, None])
    c.remove(active[:, None] & ~keep)


def mirostat_v1_k(c: Candidates, mu: Tensor, n_vocab: int, m: int = 100) -> Tensor:
    """The top-k size mirostat v1 derives from the first m sorted probabilities and mu."""
    n = c.n_finite()
    w = min(m, c.width)
    vals = torch.topk(c.logits, w, dim=1).values.to(torch.float64)
    lse = torch.logsumexp(c.logits, dim=1, keepdim=True).to(torch.float64)
    logp = vals - lse
    i = torch.arange(w - 1, device=mu.device, dtype=torch.float64)
    t = torch.log((i + 2) / (i + 1))
    b = logp[:, :-1] - logp[:, 1:]
    valid = (i[None, :] < (n - 1)[:, None]) & torch.isfinite(b)
    tb = torch.where(valid, t[None, :] * b, torch.zeros_like(b)).sum(dim=1)
    tt = torch.where(valid, (t * t)[None, :].expand_as(b), torch.zeros_like(b)).sum(dim=1)
    s_hat = tb / tt
    eps = s_hat - 1
    k = ((eps * torch.pow(2.0, mu.to(torch.float64))) / (1 - torch.pow(float(n_vocab), -eps))) ** (1 / s_hat)
    k = torch.where(torch.isfinite(k), k, torch.full_like(k, float(n_vocab)))
    k = k.clamp(min=1, max=float(n_vocab)).floor().to(torch.int64)
    return torch.minimum(k, n.clamp(min=1))


def mirostat_v1(c: Candidates, mu: Tensor, n_vocab: int, active: Tensor, m: int = 100) -> None:
    """Top-k with k from Zipf's exponent estimated on the first m probabilities."""
    if not bool(active.any()):
        return
    k = mirostat_v1_k(c, mu, n_vocab, m)
    c.top_k_compact(k, active)
