"""Oracles over a known distribution: a stand-in for a top-k logprobs API, for tests and demos."""
from __future__ import annotations

from typing import Mapping

import numpy as np


class LogitsOracle:
    """A top-k logprobs API over fixed logits, optionally rounded and noisy.

    Calling it with a logit bias returns ``{token_id: logprob}`` for the k most likely tokens of
    the biased distribution (float64, rounded to ``decimals`` when given, with Gaussian ``noise``
    of that standard deviation added to every returned logprob); :meth:`argmax` is the
    argmax-only variant. ``calls`` counts both.
    """

    def __init__(self, logits, k: int = 5, *, decimals: int | None = None, noise: float = 0.0,
                 seed: int = 0) -> None:
        self.logits = np.asarray(logits, dtype=np.float64).reshape(-1)
        self.k = int(k)
        self.decimals = decimals
        self.noise = float(noise)
        self._rng = np.random.default_rng(seed)
        self.calls = 0

    @property
    def logprobs(self) -> np.ndarray:
        """The true log-probabilities (float64)."""
        x = self.logits
        return x - (x.max() + np.log(np.exp(x - x.max()).sum()))

    def _biased(self, logit_bias: Mapping[int, float]) -> np.ndarray:
        x = self.logits.copy()
        for tid, b in logit_bias.items():
            x[int(tid)] += float(b)
        top = x.max()
        return x - (top + np.log(np.exp(x - top).sum()))

    def __call__(self, logit_bias: Mapping[int, float]) -> dict[int, float]:
        self.calls += 1
        lp = self._biased(logit_bias)
        k = min(self.k, lp.size)
        ids = np.argpartition(-lp, k - 1)[:k]
        vals = lp[ids]
        if self.noise:
            vals = vals + self._rng.normal(0.0, self.noise, size=vals.shape)
        if self.decimals is not None:
            vals = np.round(vals, self.decimals)
        vals = np.minimum(vals, 0.0)
        return {int(i): float(v) for i, v in zip(ids, vals)}

    def argmax(self, logit_bias: Mapping[int, float]) -> int:
        """Id of the most likely biased token (first one on ties)."""
        self.calls += 1
        return int(np.argmax(self._biased(logit_bias)))
