"""Differential test: the batched chain against a plain list-based port of the reference
semantics (llama.cpp's candidate-array algorithms, one row at a time), on random logits, random
masks and random sampler orders. Masked tokens are dropped from the array first (the chain
treats them as absent); ties are avoided by random float logits."""
import math
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np
import pytest
import torch

from samplers import SamplerChain, SamplingParams


def softmax_sorted(c):
    c.sort(key=lambda t: -t[1])
    mx = c[0][1]
    e = [math.exp(l - mx) for _, l in c]
    s = sum(e)
    return [x / s for x in e]


def ref_top_k(c, k):
    if k <= 0:
        return c
    c.sort(key=lambda t: -t[1])
    return c[:min(k, len(c))]


def ref_top_p(c, p, min_keep):
    if p >= 1:
        return c
    probs = softmax_sorted(c)
    cum = 0.0
    for i, q in enumerate(probs):
        cum += q
        if cum >= p and i + 1 >= min_keep:
            return c[:i + 1]
    return c


def ref_min_p(c, p, min_keep):
    if p <= 0:
        return c
    mx = max(l for _, l in c)
    keep = [t for t in c if t[1] >= mx + math.log(p)]
    if keep and len(keep) >= min_keep:
        return keep
    c.sort(key=lambda t: -t[1])
    i = 1
    while i < len(c) and not (c[i][1] < mx + math.log(p) and i >= min_keep):
        i += 1
    return c[:i]


def ref_typical(c, p, min_keep):
    if p >= 1:
        return c
    probs = softmax_sorted(c)
    h = -sum(q * math.log(q) for q in probs if q > 0)
    scores = [abs(-math.log(q) - h) if q > 0 else math.inf for q in probs]
    idx = sorted(range(len(c)), key=lambda i: scores[i])
    cum = 0.0
    last = len(idx)
    for i, j in enumerate(idx):
        cum += probs[j]
        if cum > p and (min_keep == 0 or i >= min_keep - 1):
            last = i + 1
            break
    return [c[j] for j in idx[:last]]


def ref_temp(c, t, rng=0.0, expo=1.0):
    if rng > 0:
        if len(c) <= 1:
            return c
        probs = softmax_sorted(c)
        h = -sum(q * math.log(q) for q in probs if q > 0)
        lo, hi = max(0.0, t - rng), t + rng
        t = lo + (hi - lo) * (h / math.log(len(c))) ** expo
    if t <= 0:
        c.sort(key=lambda x: -x[1])
        return c[:1]
    return [(i, l / t) for i, l in c]


def ref_top_n_sigma(c, n):
    if n <= 0 or len(c) <= 1:
        return c
    ls = [l for _, l in c]
    mx, mean = max(ls), sum(ls) / len(ls)
    std = math.sqrt(sum((l - mean) ** 2 for l in ls) / len(ls))
    return [t for t in c if t[1] >= mx - n * std]


def ref_xtc(c, thr, min_keep):  # probability 1: the coin always fires
    if thr > 0.5 or len(c) < 2:
        return c
    probs = softmax_sorted(c)
    pos = 0
    for i, q in enumerate(probs):
        if q >= thr:
            pos = i
        else:
            break
    if len(c) - pos >= min_keep and pos > 0:
        return c[pos:]
    return c


def ref_top_a(c, a, min_keep):
    # koboldcpp's loop; it passes min_keep 1, the chain passes its min_keep (at least 1)
    if a <= 0 or len(c) <= 1:
        return c
    probs = softmax_sorted(c)
    thr = a * probs[0] ** 2
    for i, q in enumerate(probs):
        if q < thr and i >= max(min_keep, 1):
            return c[:i]
    return c


def ref_tfs(c, z, min_keep):
    if z >= 1 or len(c) <= 2:
        return c
    p = softmax_sorted(c)
    d2 = [abs((p[i] - p[i + 1]) - (p[i + 1] - p[i + 2])) for i in range(len(p) - 2)]
    s = sum(d2)
    d2 = [x / s for x in d2] if s > 1e-6 else [1 / len(d2)] * len(d2)
    cum = 0.0
    for i, x in enumerate(d2):
        cum += x
        if cum > z and i >= max(min_keep, 1):
            return c[:i]
    return c


def ref_penalties(c, hist, rep, freq, pres, last_n):
    w = hist if last_n < 0 else hist[len(hist) - last_n:] if last_n > 0 else []
    if last_n == 0 or (rep == 1 and freq == 0 and pres == 0):
        return c
    cnt = {}
    for t in w:
        cnt[t] = cnt.get(t, 0) + 1
    out = []
    for i, l in c:
        if i in cnt:
            l = l * rep if l <= 0 else l / rep
            l -= cnt[i] * freq + pres
        out.append((i, l))
    return out


def reference(logits, order, hist, p):
    c = [(i, float(l)) for i, l in enumerate(logits) if l > -math.inf]
    for name in order:
        if name == "top_k":
            c = ref_top_k(c, p.top_k)
        elif name == "top_p":
            c = ref_top_p(c, p.top_p, p.min_keep)
        elif name == "min_p":
            c = ref_min_p(c, p.min_p, p.min_keep)
        elif name == "typical":
            c = ref_typical(c, p.typical_p, p.min_keep)
        elif name == "temperature":
            c = ref_temp(c, p.temperature, p.dynatemp_range, p.dynatemp_exponent)
        elif name == "top_n_sigma":
            c = ref_top_n_sigma(c, p.top_n_sigma)
        elif name == "xtc":
            c = ref_xtc(c, p.xtc_threshold, p.min_keep)
        elif name == "top_a":
            c = ref_top_a(c, p.top_a, p.min_keep)
        elif name == "tfs":
            c = ref_tfs(c, p.tfs_z, p.min_keep)
        elif name == "penalties":
            c = ref_penalties(c, hist, p.repeat_penalty, p.frequency_penalty, p.presence_penalty, p.repeat_last_n)
    return dict(c)


NAMES = ["top_k", "top_p", "min_p", "typical", "temperature", "top_n_sigma", "xtc", "top_a", "tfs", "penalties"]


@pytest.mark.parametrize("seed", range(40))
def test_chain_matches_reference_port(seed):
    rng = np.random.default_rng(seed)
    V, B = 120, 4
    params, refs, lgs, hists = [], [], [], []
    lg = (rng.normal(size=(B, V)) * rng.uniform(0.5, 4)).astype(np.float32)
    for b in range(B):
        mask = rng.random(V) < rng.uniform(0, 0.9)
        mask[rng.integers(V)] = False
        lg[b, mask] = -np.inf
        order = list(rng.permutation(NAMES)[: rng.integers(1, 7)])
        p = SamplingParams(
            samplers=order, top_k=int(rng.choice([0, 1, 5, 30, 200])), top_p=float(rng.choice([1.0, rng.random()])),
            min_p=float(rng.choice([0.0, rng.random() * 0.3])), typical_p=float(rng.choice([1.0, rng.random()])),
            temperature=float(rng.choice([1.0, 0.0, rng.uniform(0.2, 2)])),
            dynatemp_range=float(rng.choice([0.0, rng.random()])), dynatemp_exponent=float(rng.uniform(0.5, 2)),
            top_n_sigma=float(rng.choice([-1.0, rng.uniform(0.5, 3)])), xtc_probability=1.0,
            xtc_threshold=float(rng.uniform(0.0, 0.6)), top_a=float(rng.choice([0.0, rng.random()])),
            tfs_z=float(rng.choice([1.0, rng.random()])), repeat_penalty=float(rng.uniform(0.8, 1.5)),
            frequency_penalty=float(rng.uniform(0, 0.5)), presence_penalty=float(rng.uniform(0, 0.5)),
            repeat_last_n=int(rng.choice([-1, 0, 8])), min_keep=int(rng.choice([0, 1, 3])), seed=seed)
        hist = rng.integers(0, V, size=20).tolist()
        params.append(p)
        hists.append(hist)
    out = SamplerChain(params, vocab_size=V).filter(torch.from_numpy(lg.copy()), hists)
    for b in range(B):
        exp = reference(lg[b].tolist(), params[b].samplers, hists[b], params[b])
        got = {i: float(out[b, i]) for i in torch.isfinite(out[b]).nonzero().flatten().tolist()}
        assert set(got) == set(exp), (params[b].samplers, sorted(got), sorted(exp))
        for i in got:
            assert abs(got[i] - exp[i]) <= 1e-4 * max(1.0, abs(exp[i])), (i, got[i], exp[i])


def ref_dry(hist, V, mult, base, allowed, last_n, breakers=()):
    """DRY by definition: for every earlier end position j, the longest common suffix of
    window[:j+1] and the whole window (capped at the distance to the newest breaker) penalises
    the token that followed position j."""
    w = hist if last_n < 0 else hist[-last_n:]
    n = len(w)
    pen = np.zeros(V)
    if n <= allowed:
        return pen
    limit = n
    for i in range(n):  # i tokens from the end
        if w[n - 1 - i] in breakers:
            limit = i
            break
    if limit < allowed:
        return pen
    best = {}
    for j in range(n - 1):
        L = 0
        while L <= j and w[j - L] == w[n - 1 - L]:
            L += 1
        L = min(L, limit)
        if L >= allowed:
            t = w[j + 1]
            best[t] = max(best.get(t, 0), L)
    for t, L in best.items():
        if t not in breakers:
            pen[t] = mult * base ** (L - allowed)
    return pen


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("length", [30, 200, 700])
def test_dry_matches_definition(seed, length):
    rng = np.random.default_rng(seed)
    V = 6
    alphabet = int(rng.integers(2, 5))
    hist = rng.integers(0, alphabet, size=length).tolist()
    if rng.random() < 0.5:  # plant a long repeat
        k = int(rng.integers(3, 12))
        hist = hist + hist[-k - 5:-5]
    breakers = [(5,)] if rng.random() < 0.5 else []
    if breakers and rng.random() < 0.7:
        pos = int(rng.integers(0, len(hist)))
        hist[pos] = 5
    allowed = int(rng.integers(1, 4))
    last_n = int(rng.choice([-1, 50, 600]))
    p = SamplingParams(samplers="d", dry_multiplier=0.7, dry_base=1.3, dry_allowed_length=allowed,
                       dry_penalty_last_n=last_n, dry_sequence_breakers=breakers)
    got = -SamplerChain(p, vocab_size=V).filter(torch.zeros(1, V), [hist])[0].numpy()
    exp = ref_dry(hist, V, 0.7, 1.3, allowed, last_n, {5} if breakers else set())
    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)
