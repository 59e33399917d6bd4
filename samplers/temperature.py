"""Temperature and dynamic (entropy-scaled) temperature, as llama.cpp's temp / temp-ext."""
from __future__ import annotations

import torch
from torch import Tensor

from ._candidates import Candidates
from .selection import first_max_mask


def apply_temperature(c: Candidates, t: Tensor, active: Tensor) -> None:
    """logits / t for active rows; t <= 0 keeps only the first (lowest id) maximum."""
    greedy = active & (t <= 0)
    scale = active & (t > 0) & (t != 1)
    if bool(greedy.any()):
        c.remove(greedy[:, None] & ~first_max_mask(c))
    if bool(scale.any()):
        tt = torch.where(scale, t, torch.ones_like(t)).to(c.logits.dtype)
        out = c.logits / tt[:, None]
        if bool(torch.isposinf(out).any()):
            # tiny temperatures overflow: shift by the row maximum first (same distribution)
            mx = c.logits.max(dim=1, keepdim=True).values
            out = torch.where(torch.isposinf(out).any(dim=1, keepdim=True),
                              (c.logits - mx) / tt[:, None], out)
        c.logits = out


def temperature(c: Candidates, temp: Tensor, dyn_range: Tensor, dyn_exp: Tensor, active: Tensor) -> None:
    """Plain temperature, or dynamic temperature for rows with dynatemp_range > 0.

    Dynamic: min_t = max(0, t - range), max_t = t + range; with size <= 1 nothing happens;
    otherwise t' = min_t + (max_t - min_t) * (H / ln(size)) ** exponent, H the softmax entropy.
    """
    t = temp
    dyn = active & (dyn_range > 0)
    if bool(dyn.any()):
        n = c.n_finite()
        probs = torch.softmax(c.logits, dim=1)
        logp = torch.log_softmax(c.logits, dim=1)
        h = -torch.where(probs > 0, probs * logp, torch.zeros_like(probs)).sum(dim=1)
        max_h = torch.log(n.clamp(min=2).to(h.dtype))
        norm = (h / max_h).to(temp.dtype)
        min_t = (temp - dyn_range).clamp(min=0)
        max_t = temp + dyn_range
        dt = min_t + (max_t - min_t) * norm.pow(dyn_exp)
        t = torch.where(dyn & (n > 1), dt, t)
        t = torch.where(dyn & (n <= 1), torch.ones_like(t), t)
    apply_temperature(c, t, active)
