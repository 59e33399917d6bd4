"""XTC (exclude top choices), as llama.cpp's xtc sampler.

The coin is drawn by the caller from the row's own XTC generator (only for rows where XTC is
enabled and the set has >= 2 candidates); ``fire`` says which rows won the coin (chance <= p).
"""
from __future__ import annotations

import torch
from torch import Tensor

from ._candidates import Candidates


def xtc(c: Candidates, threshold: Tensor, min_keep: Tensor, fire: Tensor) -> None:
    """Remove every token with p >= threshold except the least likely of them.

    Only when at least two tokens reach the threshold and size - (count - 1) >= min_keep. The
    least likely is the one with the lowest logit (probabilities may underflow and tie); among
    equal logits, the one last in (logit desc, id asc) order (the highest id) stays.
    """
    if not bool(fire.any()):
        return
    fin = c.finite()
    probs = c.probs()
    above = (probs >= threshold[:, None].to(probs.dtype)) & fin
    cnt = above.sum(dim=1)
    n = fin.sum(dim=1)
    pos_last = (cnt - 1).clamp(min=0)
    ok = fire & (n - pos_last >= min_keep) & (pos_last > 0)
    if not bool(ok.any()):
        return
    # the least likely by logit: probabilities that underflow to 0 would all tie
    key = torch.where(above, c.logits, torch.full_like(c.logits, float("inf")))
    lmin = key.min(dim=1, keepdim=True).values
    ids = c.token_ids()
    survivor = torch.where(above & (c.logits == lmin), ids,
                           torch.full_like(ids, -1)).max(dim=1, keepdim=True).values
    c.remove(ok[:, None] & above & (ids != survivor))
