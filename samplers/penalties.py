"""Logit bias and repetition penalties (llama.cpp, KoboldAI and koboldcpp variants).

Penalties read each row's token history (oldest first) and touch only the tokens in it, so the
cost is in the history length, not the vocabulary.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from ._candidates import Candidates
from .errors import InvalidParameterError

History = Sequence[int]


def _window(h: History, n: int) -> np.ndarray:
    """The last n tokens of a history (n < 0: all of it; n == 0: none)."""
    a = np.asarray(h, dtype=np.int64).reshape(-1)
    if n == 0:
        return a[:0]
    if n > 0:
        return a[-n:]
    return a


def _check_tokens(toks: np.ndarray, vocab: int) -> None:
    if toks.size and (toks.min() < 0 or toks.max() >= vocab):
        bad = int(toks[(toks < 0) | (toks >= vocab)][0])
        raise InvalidParameterError("histories", f"token id {bad} is outside the vocabulary [0, {vocab})")


def _apply_pairs(c: Candidates, rows: Tensor, toks: Tensor, fn) -> None:
    r, col, present = c.locate(rows, toks)
    if r.numel() == 0:
        return
    x = c.logits[r, col]
    c.logits[r, col] = fn(x, present)
    if c.ids is not None:
        c.sorted = False


def logit_bias(c: Candidates, rows: Tensor, toks: Tensor, bias: Tensor) -> None:
    """logit[tok] += bias for each (row, tok, bias) triple; a -inf bias bans the token."""
    if rows.numel() == 0:
        return
    _apply_pairs(c, rows, toks, lambda x, keep: x + bias[keep].to(x.dtype))


def penalties(c: Candidates, histories: Sequence[History], rows_active: Sequence[int],
              last_n: Sequence[int], repeat: Tensor, freq: Tensor, presence: Tensor,
              skip_tokens: Sequence[Sequence[int] | None] | None = None) -> None:
    """llama.cpp penalties over the last ``last_n`` tokens (-1: the whole history).

    For a token seen c > 0 times: logit <= 0 ? logit * repeat : logit / repeat; then
    logit -= c * frequency + presence. ``skip_tokens[row]`` lists tokens left unpenalised
    (the newline token when penalize_nl is off).
    """
    rr, tt = [], []
    for b in rows_active:
        w = _window(histories[b], last_n[b])
        if skip_tokens is not None and skip_tokens[b]:
            w = w[~np.isin(w, np.asarray(skip_tokens[b], dtype=np.int64))]
        if w.size:
            rr.append(np.full(w.size, b, dtype=np.int64))
            tt.append(w)
    if not rr:
        return
    toks_np = np.concatenate(tt)
    _check_tokens(toks_np, c.vocab_size)
    keys = torch.from_numpy(np.concatenate(rr) * c.vocab_size + toks_np)
    uniq, counts = torch.unique(keys, return_counts=True)
    rows = uniq // c.vocab_size
    toks = uniq % c.vocab_size

    def fn(x: Tensor, keep: Tensor) -> Tensor:
        r = rows[keep]
        cnt = counts[keep].to(x.dtype)
        rp = repeat[r].to(x.dtype)
        x = torch.where(x <= 0, x * rp, x / rp)
        return x - cnt * freq[r].to(x.dtype) - presence[r].to(x.dtype)

    _apply_pairs(c, rows, toks, fn)


def koboldai_slope_curve(penalty: float, rng: int, slope: float) -> np.ndarray:
    """Per-position penalty over a window of ``rng`` tokens, oldest first (newest gets ``penalty``)."""
    if rng <= 1:
        return np.full(max(rng, 1), penalty, dtype=np.float64)
    x = np.arange(rng, dtype=np.float64) / (rng - 1) * 2.0 - 1.0
    x = slope * x / (1.0 + np.abs(x) * (slope - 1.0))
    return 1.0 + (x + 1.0) / 2.0 * (penalty - 1.0)


def _apply_scaled(c: Candidates, rows: np.ndarray, toks: np.ndarray, pens: np.ndarray,
                  presence: np.ndarray | None = None) -> None:
    if rows.size == 0:
        return
    _check_tokens(toks, c.vocab_size)
    r_t = torch.from_numpy(rows)
    t_t = torch.from_numpy(toks)
    p_t = torch.from_numpy(pens)
    pr_t = torch.from_numpy(presence) if presence is not None else None

    def fn(x: Tensor, keep: Tensor) -> Tensor:
        pen = p_t[keep].to(x.dtype)
        x = torch.where(x <= 0, x * pen, x / pen)
        if pr_t is not None:
            x = x - pr_t[keep].to(x.dtype)
        return x

    _apply_pairs(c, r_t, t_t, fn)


def rep_pen_koboldai(c: Candidates, histories: Sequence[History], rows_active: Sequence[int],
                     penalty: Sequence[float], rng: Sequence[int], slope: Sequence[float]) -> None:
    """KoboldAI's repetition penalty with range and slope.

    Over the last min(len, range) tokens (range 0: the whole history, flat penalty). With
    slope != 0 the penalty ramps from 1 (oldest of ``range`` positions) to P (newest) along
    x = linspace(-1, 1, range), x = s*x / (1 + |x|*(s-1)), pen = 1 + (x+1)/2 * (P-1); a token takes
    the penalty of its most recent occurrence. Then logit <= 0 ? logit * pen : logit / pen.
    """
    rr, tt, pp = [], [], []
    for b in rows_active:
        h = np.asarray(histories[b], dtype=np.int64).reshape(-1)
        rg = int(rng[b])
        if rg > 0:
            w = h[-rg:] if h.size > rg else h
            if slope[b] != 0:
                pen = koboldai_slope_curve(float(penalty[b]), rg, float(slope[b]))[rg - w.size:]
            else:
                pen = np.full(w.size, float(penalty[b]))
        else:
            w = h
            pen = np.full(w.size, float(penalty[b]))
        if w.size == 0:
            continue
        u, first = np.unique(w[::-1], return_index=True)  # first index in reversed = most recent
        rr.append(np.full(u.size, b, dtype=np.int64))
        tt.append(u)
        pp.append(pen[::-1][first])
    if rr:
        _apply_scaled(c, np.concatenate(rr), np.concatenate(tt), np.concatenate(pp))


def rep_pen_koboldcpp(c: Candidates, histories: Sequence[History], rows_active: Sequence[int],
                      penalty: Sequence[float], rng: Sequence[int], slope: Sequence[float],
                      presence: Sequence[float]) -> None:
    """koboldcpp's repetition penalty: over the last min(len, range) tokens, tokens in the newer
    half get P, tokens only in the older half get 1 + (P-1)*slope (when P > 1); every token in
    the window also loses ``presence``. No-op when the window is empty or P == 1 and presence == 0.
    """
    rr, tt, pp, qq = [], [], [], []
    for b in rows_active:
        h = np.asarray(histories[b], dtype=np.int64).reshape(-1)
        w_n = min(h.size, int(rng[b]))
        if w_n <= 0:
            continue
        w = h[h.size - w_n:]
        near = np.unique(w[w_n // 2:])
        far = np.setdiff1d(np.unique(w[:w_n // 2]), near)
        p = float(penalty[b])
        reduced = 1.0 + (p - 1.0) * float(slope[b]) if p > 1.0 else p
        toks = np.concatenate([near, far])
        rr.append(np.full(toks.size, b, dtype=np.int64))
        tt.append(toks)
        pp.append(np.concatenate([np.full(near.size, p), np.full(far.size, reduced)]))
        qq.append(np.full(toks.size, float(presence[b])))
    if rr:
        _apply_scaled(c, np.concatenate(rr), np.concatenate(tt), np.concatenate(pp), np.concatenate(qq))
