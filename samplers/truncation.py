"""Truncating samplers: top-k, top-p, min-p, typical, tail-free (two variants), top-a, top-n-sigma.

Every function works on a batch of candidate sets in place, takes per-row parameter tensors [B]
and an ``active`` mask [B] (rows whose parameter disables the sampler are left untouched), and
never keeps fewer than one candidate. "size" in the references is the number of finite
candidates here: masked (-inf) tokens count as absent.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from ._candidates import NEG_INF, Candidates
from .selection import first_max_mask


def _first_true(ok: Tensor, default: Tensor) -> Tensor:
    has = ok.any(dim=1)
    first = ok.to(torch.int8).argmax(dim=1)
    return torch.where(has, first, default)


def _keep_threshold(c: Candidates, keep_fn, min_keep: Tensor, active: Tensor) -> None:
    """Keep entries passing a layout-free threshold, topped up to max(min_keep, 1) best ones."""
    mk = min_keep.clamp(min=1)
    fin = c.finite()
    keep = keep_fn() & fin
    short = active & (keep.sum(dim=1) < mk)
    if bool(short.any()):
        if bool((mk[short] <= 1).all()):
            keep = keep | (first_max_mask(c) & short[:, None])
        else:
            rank = c.rank()  # sorts; recompute the threshold on the new layout
            keep = (keep_fn() & c.finite()) | (short[:, None] & (rank < mk[:, None]))
    c.remove(active[:, None] & ~keep)


def top_k(c: Candidates, k: Tensor, active: Tensor) -> None:
    """Keep the k best candidates (k clipped to the set size; ties go to the lower token id)."""
    c.top_k_compact(k, active)


_WINDOW0 = 256


def _top_p_windowed(c: Candidates, p: Tensor, min_keep: Tensor) -> bool:
    """Top-p on a large dense set from growing top-k windows (no full sort when the nucleus is
    small). Returns False when a full sort is needed (big nucleus, or a tie at the window edge)."""
    mx = c.logits.max(dim=1, keepdim=True).values
    total = torch.exp(c.logits - mx).sum(dim=1, keepdim=True)  # as softmax normalises
    n_fin = c.n_finite()
    w = _WINDOW0
    while w * 8 <= c.width:
        vals, idx = torch.topk(c.logits, w + 1, dim=1)
        edge_vals = vals[:, w]
        win = Candidates(vals[:, :w], c.vocab_size)
        win._order_compact(vals[:, :w], idx[:, :w])
        fin = win.finite()
        cum = (torch.exp(win.logits - mx) / total).cumsum(dim=1)
        cnt = fin.cumsum(dim=1)
        ok = (cum >= p[:, None]) & (cnt >= min_keep[:, None]) & fin
        if bool((ok.any(dim=1) | (n_fin <= w)).all()):
            cut = _first_true(ok, torch.full_like(min_keep, w - 1))
            cut_val = win.logits.gather(1, cut[:, None]).squeeze(1)
            if bool(((edge_vals == cut_val) & (cut_val > NEG_INF)).any()):
                return False  # a tie group runs past the window: its order is unknown
            col = torch.arange(w, device=p.device)
            c.logits = win.logits.masked_fill(col[None, :] > cut[:, None], NEG_INF)
            c.ids = win.ids
            c.sorted = True
            c.shrink()
            return True
        w *= 4
    return False


def top_p(c: Candidates, p: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Keep the shortest best-first prefix with cumulative probability >= p and >= min_keep entries."""
    if c.ids is None and c.width >= 8 * _WINDOW0 and bool(active.all()) and _top_p_windowed(c, p, min_keep):
        return
    c.ensure_sorted()
    fin = c.finite()
    cum = c.probs().cumsum(dim=1)
    cnt = fin.cumsum(dim=1)
    ok = (cum >= p[:, None]) & (cnt >= min_keep[:, None]) & fin
    w = c.width
    cut = _first_true(ok, torch.full_like(p, w - 1, dtype=torch.int64))
    col = torch.arange(w, device=p.device)
    c.remove(active[:, None] & (col[None, :] > cut[:, None]))
    c.shrink()


def min_p(c: Candidates, p: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Keep tokens with logit >= max_logit + ln(min_p) (p >= min_p * p_max), at least min_keep."""
    lnp = torch.log(p.clamp(min=1e-30)).to(c.logits.dtype)

    def keep_fn() -> Tensor:
        mx = c.logits.max(dim=1, keepdim=True).values
        return c.logits >= mx + lnp[:, None]

    _keep_threshold(c, keep_fn, min_keep, active)
    c.shrink()


def _entropy(logits: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    probs = torch.softmax(logits, dim=1)
    logp = torch.log_softmax(logits, dim=1)
    plogp = torch.where(probs > 0, probs * logp, torch.zeros_like(probs))
    return probs, logp, -plogp.sum(dim=1)


def typical(c: Candidates, p: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Locally typical sampling: order by |-ln p - H|, keep the shortest prefix with mass > p."""
    c.ensure_sorted()
    fin = c.finite()
    probs, logp, h = _entropy(c.logits)
    score = (-logp - h[:, None]).abs()
    score = torch.where(fin, score, torch.full_like(score, math.inf))
    order = torch.sort(score, dim=1, stable=True).indices
    sp = probs.gather(1, order)
    sfin = fin.gather(1, order)
    cum = sp.cumsum(dim=1)
    cnt = sfin.cumsum(dim=1)
    ok = (cum > p[:, None]) & (cnt >= min_keep.clamp(min=1)[:, None]) & sfin
    w = c.width
    cut = _first_true(ok, torch.full_like(min_keep, w - 1))
    col = torch.arange(w, device=p.device)
    drop_sorted = col[None, :] > cut[:, None]
    drop = torch.zeros_like(drop_sorted).scatter(1, order, drop_sorted)
    c.remove(active[:, None] & drop)
    c.shrink()


def _packed(c: Candidates) -> tuple[Tensor, Tensor]:
    """Finite entries first (keeping their sorted order): (permutation, packed logits)."""
    c.ensure_sorted()
    fin = c.finite()
    perm = torch.sort((~fin).to(torch.int8), dim=1, stable=True).indices
    return perm, c.logits.gather(1, perm)


def tail_free(c: Candidates, z: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Tail-free sampling as in llama.cpp (before its removal) and koboldcpp.

    No-op for z >= 1 or size <= 2. Second differences of the sorted probabilities, normalised
    (uniform if their sum <= 1e-6), cumulated; keep the tokens before the first index i with
    cum > z and i >= max(min_keep, 1) (both references pass at least 1).
    """
    n = c.n_finite()
    act = active & (n > 2)
    if not bool(act.any()):
        return
    perm, lg = _packed(c)
    w = lg.shape[1]
    pr = torch.softmax(lg, dim=1)
    d1 = pr[:, :-1] - pr[:, 1:]
    d2 = (d1[:, :-1] - d1[:, 1:]).abs()
    j = torch.arange(w - 2, device=z.device)
    valid = j[None, :] < (n - 2)[:, None]
    d2 = torch.where(valid, d2, torch.zeros_like(d2))
    s = d2.sum(dim=1, keepdim=True)
    uniform = valid.to(d2.dtype) / (n - 2).clamp(min=1)[:, None].to(d2.dtype)
    norm = torch.where(s > 1e-6, d2 / s.clamp(min=1e-30), uniform)
    cum = norm.cumsum(dim=1)
    ok = (cum > z[:, None]) & (j[None, :] >= min_keep.clamp(min=1)[:, None]) & valid
    last = _first_true(ok, n)
    col = torch.arange(w, device=z.device)
    drop_packed = col[None, :] >= last[:, None]
    drop = torch.zeros_like(drop_packed).scatter(1, perm, drop_packed)
    c.remove(act[:, None] & drop)
    c.shrink()


def tail_free_kai(c: Candidates, z: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Tail-free sampling as KoboldAI's warper computes it over the whole vocabulary.

    Sorted probabilities of all V tokens (masked ones are zeros at the end), absolute second
    differences normalised to sum 1 and cumulated; the first token is always kept, token i
    (1 <= i <= V-2) is kept while cdf[i-1] <= z, the last of the V sorted tokens is always
    dropped; at least min_keep tokens stay.
    """
    if not bool(active.any()):
        return
    perm, lg = _packed(c)
    w = lg.shape[1]
    pad = min(2, c.vocab_size - w)
    pr = torch.softmax(lg, dim=1)
    if pad > 0:
        pr = torch.cat([pr, pr.new_zeros(pr.shape[0], pad)], dim=1)
    m = pr.shape[1]
    if m < 3:
        return
    d2 = pr.diff(dim=1).diff(dim=1).abs()
    norm = d2 / d2.sum(dim=1, keepdim=True)
    cdf = norm.cumsum(dim=1)
    drop = torch.cat([torch.zeros_like(cdf[:, :1], dtype=torch.bool), cdf > z[:, None],
                      torch.ones_like(cdf[:, :1], dtype=torch.bool)], dim=1)
    col = torch.arange(m, device=z.device)
    drop = drop & (col[None, :] >= min_keep.clamp(min=1)[:, None])
    drop_packed = drop[:, :w]
    drop = torch.zeros_like(drop_packed).scatter(1, perm, drop_packed)
    c.remove(active[:, None] & drop)
    c.shrink()


def top_a(c: Candidates, a: Tensor, min_keep: Tensor, active: Tensor) -> None:
    """Remove tokens with p < a * p_max^2, keeping at least max(min_keep, 1) (koboldcpp passes
    min_keep 1); no-op for a <= 0 or size <= 1."""
    thr_log = torch.log((a.clamp(min=1e-30)).to(torch.float64))

    def keep_fn() -> Tensor:
        logp = torch.log_softmax(c.logits.to(torch.float64), dim=1)
        lmax = logp.max(dim=1, keepdim=True).values
        return logp >= thr_log[:, None] + 2 * lmax

    _keep_threshold(c, keep_fn, min_keep, active & (c.n_finite() > 1))
    c.shrink()


def top_n_sigma(c: Candidates, n: Tensor, active: Tensor) -> None:
    """Remove logits below max - n * std (population std over the finite logits)."""
    fin = c.finite()
    cnt = fin.sum(dim=1)
    act = active & (cnt > 1)
    if not bool(act.any()):
        return
    x = torch.where(fin, c.logits, torch.zeros_like(c.logits))
    mean = x.sum(dim=1) / cnt.clamp(min=1)
    var = torch.where(fin, (c.logits - mean[:, None]) ** 2, torch.zeros_like(x)).sum(dim=1) / cnt.clamp(min=1)
    std = var.sqrt()
    mx = c.logits.max(dim=1).values
    c.remove(act[:, None] & (c.logits < (mx - n * std)[:, None]))
