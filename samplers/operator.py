"""Batched top-k / top-p sampling from probabilities (the accelerator-operator form).

``sample_from_probs(probs [B, V], top_k, top_p, seeds, mode)`` returns (ids [B] int64,
probabilities [B] float32). Per row: keep the top_k most likely tokens (top_k <= 0 or >= V:
all), renormalise, keep the shortest most-likely-first prefix whose mass reaches top_p
(top_p >= 1: all; top_p == 0: the top token), renormalise again and draw. The returned
probability is the chosen token's probability in that final renormalised distribution.

No full sort of V is made where it can be avoided: top-k and top-p use ``torch.topk`` on a
window (k itself, or a window growing 4x from 256 until the top-p mass is reached, switching to
one full sort once it passes V/8); rows without any filtering draw directly over V. Ties at a cut are broken by ``torch.topk``.

Modes:
- ``"shared"``: one top_k and one seed for the whole batch; draws with ``torch.multinomial``
  from a ``torch.Generator`` seeded once (rows are consumed in order).
- ``"multinomial"``: per-row top_k and seed; inverse-CDF draw with a uniform hashed from the
  row's seed, so a row's result does not depend on the rest of the batch.
- ``"race"``: per-row top_k and seed; exponential race argmax_i p_i / E_i with E_i ~ Exp(1)
  hashed from (seed, token id); P(i) = p_i and a token with p = 0 never wins.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor

from ._rng import hashed_exponential, hashed_uniform, seed_key
from .errors import AllMaskedError, InvalidLogitsError, InvalidParameterError

MODES = ("shared", "multinomial", "race")
_WINDOW0 = 256


def _per_row(name: str, value, batch: int, dtype) -> Tensor:
    t = torch.as_tensor(value)
    if t.dim() == 0:
        t = t.expand(batch)
    if t.dim() != 1 or t.shape[0] != batch:
        raise InvalidParameterError(name, f"must be a scalar or have shape [{batch}], got {tuple(t.shape)}")
    if dtype.is_floating_point:
        t = t.to(torch.float64)
    else:
        if t.dtype.is_floating_point or t.dtype == torch.bool:
            raise InvalidParameterError(name, f"must be integers, got dtype {t.dtype}")
        t = t.to(torch.int64)
    return t


def _validate(probs: Tensor, top_k, top_p, seeds) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if not isinstance(probs, Tensor) or probs.dim() != 2:
        raise InvalidLogitsError("probs must be a [B, V] tensor")
    if probs.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise InvalidLogitsError(f"probs must be floating point, got {probs.dtype}")
    B, V = probs.shape
    p32 = probs.to(torch.float32)
    row_sum = p32.sum(dim=1)  # NaN / inf anywhere in a row shows in its sum
    bad = ~torch.isfinite(row_sum)
    if bool(bad.any()) or float(p32.amin()) < 0:
        rows = bad.nonzero().flatten().tolist() or (p32 < 0).any(1).nonzero().flatten().tolist()
        raise InvalidLogitsError(f"probs must be finite and >= 0 (row(s) {rows})")
    k = _per_row("top_k", top_k, B, torch.int64)
    if bool((k < -1).any()):
        raise InvalidParameterError("top_k", f"must be >= -1 (-1 or 0 disable it), got {k[k < -1][0].item()}")
    p = _per_row("top_p", top_p, B, torch.float64)
    if bool(torch.isnan(p).any()) or bool(((p < 0) | (p > 1)).any()):
        bad_p = p[torch.isnan(p) | (p < 0) | (p > 1)][0].item()
        raise InvalidParameterError("top_p", f"must be in [0, 1], got {bad_p}")
    s = _per_row("seeds", seeds, B, torch.int64)
    return p32, k, p, s


def _window_filter(probs: Tensor, k: Tensor, p: Tensor) -> tuple[Tensor, Tensor]:
    """Top-k then top-p on rows that need it; returns (renormalised kept probs [b, W], ids [b, W])."""
    b, V = probs.shape
    k_on = (k > 0) & (k < V)
    k_eff = torch.where(k_on, k, torch.full_like(k, V))
    total = probs.sum(dim=1, dtype=torch.float64)
    w = int(k_eff[k_on].max()) if bool(k_on.any()) else 0
    p_only = ~k_on & (p < 1)
    if bool(p_only.any()):
        w = max(w, min(V, _WINDOW0))
    while True:
        vals, ids = torch.topk(probs, w, dim=1)
        v64 = vals.to(torch.float64)
        col = torch.arange(w)
        in_k = col[None, :] < k_eff[:, None]
        v64 = torch.where(in_k, v64, torch.zeros_like(v64))
        mass_k = torch.where(k_on, v64.sum(dim=1), total)
        cum = v64.cumsum(dim=1) / mass_k[:, None]
        reach = (cum >= p[:, None]) & in_k
        done = reach.any(dim=1) | (p >= 1) | k_on
        if bool(done.all()) or w >= V:
            break
        w = 4 * w
        if w >= V // 8:  # a large nucleus: one full sort is cheaper than more partial ones
            w = V
    has = reach.any(dim=1)
    cut = torch.where(has, reach.to(torch.int8).argmax(dim=1), torch.full_like(k, w - 1))
    cut = torch.where(p >= 1, torch.full_like(cut, w - 1), cut)
    keep = in_k & (col[None, :] <= cut[:, None])
    kept = torch.where(keep, v64, torch.zeros_like(v64))
    s = kept.sum(dim=1, keepdim=True)
    return kept / s, ids


def sample_from_probs(probs: Tensor, top_k: int | Sequence[int] | Tensor = 0,
                      top_p: float | Sequence[float] | Tensor = 1.0,
                      seeds: int | Sequence[int] | Tensor = 0,
                      mode: str = "multinomial") -> tuple[Tensor, Tensor]:
    """Sample one token per row of ``probs`` [B, V] (float16 or float32, need not sum to 1)."""
    if mode not in MODES:
        raise InvalidParameterError("mode", f"must be one of {MODES}, got {mode!r}")
    if mode == "shared":
        for name, v in (("top_k", top_k), ("seeds", seeds)):
            t = torch.as_tensor(v)
            if t.dim() > 0 and t.numel() > 0 and not bool((t == t.reshape(-1)[0]).all()):
                raise InvalidParameterError(name, "mode 'shared' takes one value for the whole batch")
    with torch.no_grad():
        probs32, k, p, s = _validate(probs, top_k, top_p, seeds)
        B, V = probs32.shape
        empty = probs32.sum(dim=1) <= 0
        if bool(empty.any()):
            raise AllMaskedError(empty.nonzero().flatten().tolist(), "probs")
        ids_out = torch.empty(B, dtype=torch.int64)
        p_out = torch.empty(B, dtype=torch.float64)
        need = ((k > 0) & (k < V)) | (p < 1)
        gen = None
        if mode == "shared":
            gen = torch.Generator().manual_seed(int(s[0]) & ((1 << 63) - 1))
        keys = seed_key(s)
        groups = []
        if bool(need.any()):
            rows = need.nonzero().flatten()
            kept, ids = _window_filter(probs32[rows], k[rows], p[rows])
            groups.append((rows, kept, ids))
        if bool((~need).any()):
            rows = (~need).nonzero().flatten()
            full = probs32[rows].to(torch.float64)
            full = full / full.sum(dim=1, keepdim=True)
            groups.append((rows, full, None))
        for rows, dist, ids in groups:
            if mode == "shared":
                idx = torch.multinomial(dist, 1, generator=gen)
            elif mode == "multinomial":
                u = hashed_uniform(keys[rows], torch.full((rows.numel(), 1), -7, dtype=torch.int64))
                cum = dist.cumsum(dim=1)
                target = (u * cum[:, -1:]).clamp(min=5e-324)
                idx = torch.searchsorted(cum, target).clamp(max=dist.shape[1] - 1)
            else:
                tok = ids if ids is not None else torch.arange(V).expand(rows.numel(), -1)
                e = hashed_exponential(keys[rows], tok)
                score = torch.where(dist > 0, dist.log() - e.log(), torch.full_like(dist, -math.inf))
                idx = score.argmax(dim=1, keepdim=True)
            chosen = idx if ids is None else ids.gather(1, idx)
            ids_out[rows] = chosen.squeeze(1)
            p_out[rows] = dist.gather(1, idx).squeeze(1)
        return ids_out, p_out.to(torch.float32)
