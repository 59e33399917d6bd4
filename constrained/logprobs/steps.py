"""Per-step logprobs for a decode loop: the chosen token's logprob and the top-n alternatives."""
from __future__ import annotations

import numpy as np


def step_logprobs(logits, token_id: int, top_n: int = 0) -> tuple[float, dict[int, float]]:
    """(log p of ``token_id``, {id: log p} of the ``top_n`` most likely) under softmax(logits).

    ``logits`` is one row (torch tensor or numpy array; -inf entries are impossible tokens), so
    the caller decides which distribution is reported: the raw model logits, the logits after
    the grammar mask and logit_bias, or the chain's filtered logits. Computed in float64.
    """
    x = logits.detach().to("cpu").double().numpy() if hasattr(logits, "detach") \
        else np.asarray(logits, dtype=np.float64)
    x = x.reshape(-1)
    top = x.max()
    lp = x - (top + np.log(np.exp(x - top).sum()))
    alts: dict[int, float] = {}
    if top_n > 0:
        k = min(top_n, lp.size)
        idx = np.argpartition(-lp, k - 1)[:k]
        idx = idx[np.lexsort((idx, -lp[idx]))]
        alts = {int(i): float(lp[i]) for i in idx if np.isfinite(lp[i])}
    return float(lp[int(token_id)]), alts
