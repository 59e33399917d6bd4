"""No-op conditions, min_keep, ties, masked (-inf) entries, single candidates, all-masked rows."""
import math
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from samplers import AllMaskedError, SamplerChain, SamplingParams
from samplers.operator import sample_from_probs

NEG = -math.inf
ALL = ["penalties", "dry", "top_n_sigma", "top_k", "typical", "top_p", "min_p", "xtc", "temperature",
       "top_a", "tfs", "tfs_kai", "rep_pen", "rep_pen_kcpp"]


def filt(logits, order, history=None, vocab=None, **kw):
    lg = torch.tensor(logits, dtype=torch.float32)
    if lg.dim() == 1:
        lg = lg[None]
    ch = SamplerChain(SamplingParams(samplers=order, **kw), vocab_size=lg.shape[1])
    return ch.filter(lg.clone(), history)


# every sampler with its disabling values
NOOPS = [
    ("top_k", dict(top_k=0)), ("top_k", dict(top_k=-1)),
    ("top_p", dict(top_p=1.0)), ("min_p", dict(min_p=0.0)), ("typical", dict(typical_p=1.0)),
    ("tfs", dict(tfs_z=1.0)), ("tfs_kai", dict(tfs_z=1.0)), ("top_a", dict(top_a=0.0)),
    ("top_n_sigma", dict(top_n_sigma=0.0)), ("top_n_sigma", dict(top_n_sigma=-1.0)),
    ("xtc", dict(xtc_probability=0.0, xtc_threshold=0.1)), ("xtc", dict(xtc_probability=1.0, xtc_threshold=0.6)),
    ("temperature", dict(temperature=1.0, dynatemp_range=0.0)),
    ("penalties", dict(repeat_penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0)),
    ("penalties", dict(repeat_penalty=3.0, repeat_last_n=0)),
    ("dry", dict(dry_multiplier=0.0)), ("dry", dict(dry_multiplier=1.0, dry_base=0.9)),
    ("dry", dict(dry_multiplier=1.0, dry_penalty_last_n=0)),
    ("rep_pen", dict(repeat_penalty=1.0)), ("rep_pen_kcpp", dict(repeat_penalty=1.0, presence_penalty=0.0)),
    ("rep_pen_kcpp", dict(repeat_penalty=2.0, rep_pen_range=0)),
]


@pytest.mark.parametrize("name,kw", NOOPS)
def test_noop_conditions(name, kw):
    rng = np.random.default_rng(1)
    lg = rng.normal(size=(2, 50)).astype(np.float32)
    hist = [[1, 2, 3, 1, 2, 3, 1, 2], [4, 4, 4]]
    out = filt(lg, [name], hist, dry_sequence_breakers=[], **kw)
    np.testing.assert_array_equal(out.numpy(), lg)


def test_default_params_chain_matches_hand_computation():
    rng = np.random.default_rng(2)
    lg = rng.normal(size=200).astype(np.float64) * 2
    out = SamplerChain(SamplingParams(), vocab_size=200).filter(torch.tensor(lg[None], dtype=torch.float32))
    # by hand: top-k 40 -> top-p .95 -> min-p .05 -> temperature .8
    order = np.argsort(-lg)[:40]
    p = np.exp(lg[order] - lg[order].max())
    p /= p.sum()
    n = int(np.argmax(np.cumsum(p) >= 0.95)) + 1
    keep = order[:n]
    keep = keep[lg[keep] >= lg[keep].max() + math.log(0.05)]
    got = torch.isfinite(out[0]).nonzero().flatten().numpy()
    assert sorted(got.tolist()) == sorted(keep.tolist())
    np.testing.assert_allclose(out[0, got].numpy(), lg[got] / 0.8, rtol=1e-5)


# ---------------------------------------------------------------- min_keep
def test_min_keep_top_p_min_p_typical_xtc():
    lg = np.log([0.7, 0.2, 0.05, 0.05])
    assert int(torch.isfinite(filt(lg, "p", top_p=0.5, min_keep=3)).sum()) == 3
    assert int(torch.isfinite(filt(lg, "m", min_p=0.9, min_keep=2)).sum()) == 2
    assert int(torch.isfinite(filt(lg, "y", typical_p=0.01, min_keep=3)).sum()) == 3
    # min_p > 1 still keeps the top token; min_keep larger than the set keeps everything
    assert torch.isfinite(filt(lg, "m", min_p=5.0)).nonzero()[:, 1].tolist() == [0]
    assert int(torch.isfinite(filt(lg, "p", top_p=0.1, min_keep=10)).sum()) == 4


# ---------------------------------------------------------------- ties
def test_ties_go_to_lower_token_id():
    lg = [1.0, 2.0, 2.0, 2.0, 0.0]
    assert torch.isfinite(filt(lg, "k", top_k=2))[0].nonzero().flatten().tolist() == [1, 2]
    assert torch.isfinite(filt(lg, "t", temperature=0.0))[0].nonzero().flatten().tolist() == [1]
    ch = SamplerChain(SamplingParams(samplers="", selection="greedy"), vocab_size=5)
    assert int(ch.sample(torch.tensor([lg]))) == 1
    # top-p over equal probabilities cuts inside the tie, lower ids first
    assert torch.isfinite(filt([0.0] * 6, "p", top_p=0.4))[0].nonzero().flatten().tolist() == [0, 1, 2]
    # XTC keeps the least likely token above the threshold; among equals, the highest id
    out = filt(np.log([0.3, 0.3, 0.3, 0.1]), "x", xtc_probability=1.0, xtc_threshold=0.2)
    assert torch.isfinite(out)[0].nonzero().flatten().tolist() == [2, 3]
    # threshold 0: the least likely by logit stays, even where float32 probabilities underflow
    out = filt([-10.0, 0.0, 200.0], "x", xtc_probability=1.0, xtc_threshold=0.0)
    assert torch.isfinite(out)[0].nonzero().flatten().tolist() == [0]


def test_top_k_tie_crossing_window_edge_is_exact():
    # 100 tokens with the same logit: top-k 3 must pick ids 0, 1, 2 whatever topk returns
    lg = torch.zeros(1, 100)
    lg[0, 50] = 1.0
    out = SamplerChain(SamplingParams(samplers="k", top_k=3), vocab_size=100).filter(lg)
    assert torch.isfinite(out)[0].nonzero().flatten().tolist() == [0, 1, 50]


# ---------------------------------------------------------------- masked entries
def test_single_candidate_every_sampler():
    lg = [NEG] * 6 + [0.3] + [NEG] * 3
    for name in ALL:
        kw = dict(top_k=3, top_p=0.1, min_p=0.9, typical_p=0.1, tfs_z=0.1, top_a=0.9, top_n_sigma=0.1,
                  xtc_probability=1.0, xtc_threshold=0.0, temperature=0.5, dynatemp_range=0.4,
                  repeat_penalty=1.5, frequency_penalty=1.0, dry_multiplier=2.0, dry_sequence_breakers=[])
        out = filt(lg, [name], [[6, 6, 1, 6, 6]], **kw)
        assert torch.isfinite(out)[0].nonzero().flatten().tolist() == [6], name


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_allowed=st.integers(1, 30), order_seed=st.integers(0, 1000))
def test_masked_tokens_never_come_back(seed, n_allowed, order_seed):
    rng = np.random.default_rng(seed)
    V = 64
    lg = rng.normal(size=(3, V)).astype(np.float32) * 3
    allowed = [rng.choice(V, size=n_allowed, replace=False) for _ in range(3)]
    mask = np.full((3, V), True)
    for r, a in enumerate(allowed):
        mask[r, a] = False
    lg[mask] = NEG
    orng = np.random.default_rng(order_seed)
    order = list(orng.permutation(ALL)[: orng.integers(1, len(ALL))])
    params = SamplingParams(samplers=order, top_k=int(orng.integers(0, 10)), top_p=float(orng.random()),
                            min_p=float(orng.random()) * 0.5, typical_p=float(orng.random()),
                            tfs_z=float(orng.random()), top_a=float(orng.random()),
                            top_n_sigma=float(orng.random()) * 2, xtc_probability=1.0,
                            xtc_threshold=float(orng.random()) * 0.5, temperature=float(orng.random()) * 2,
                            dynatemp_range=float(orng.random()), repeat_penalty=1.3, frequency_penalty=0.5,
                            presence_penalty=0.5, dry_multiplier=0.8, dry_sequence_breakers=[], seed=seed,
                            min_keep=int(orng.integers(0, 3)))
    hist = [rng.integers(0, V, size=20).tolist() for _ in range(3)]
    ch = SamplerChain(params, vocab_size=V)
    out = ch.filter(torch.from_numpy(lg.copy()), hist)
    fin = torch.isfinite(out).numpy()
    assert not (fin & mask).any()
    assert fin.any(axis=1).all()
    toks = ch.sample(torch.from_numpy(lg.copy()), hist)
    assert all(not mask[r, t] for r, t in enumerate(toks.tolist()))
    if n_allowed == 1:
        assert [int(a[0]) for a in allowed] == toks.tolist()


def test_all_masked_row_raises():
    lg = torch.zeros(3, 5)
    lg[1] = NEG
    ch = SamplerChain(SamplingParams(), vocab_size=5)
    with pytest.raises(AllMaskedError) as ei:
        ch.sample(lg)
    assert ei.value.rows == [1] and isinstance(ei.value, ValueError)
    with pytest.raises(AllMaskedError):
        ch.filter(lg)


def test_logit_bias_banning_everything_raises():
    ch = SamplerChain(SamplingParams(logit_bias={0: NEG, 1: NEG}), vocab_size=3)
    lg = torch.tensor([[0.0, 1.0, NEG]])
    with pytest.raises(AllMaskedError) as ei:
        ch.sample(lg)
    assert ei.value.stage == "logit_bias"


def test_logit_bias_adds_and_bans():
    ch = SamplerChain(SamplingParams(samplers="", logit_bias={0: 2.5, 2: NEG}), vocab_size=4)
    out = ch.filter(torch.zeros(1, 4))[0].numpy()
    np.testing.assert_array_equal(out, [2.5, 0, NEG, 0])


def test_operator_all_zero_row_raises():
    pr = torch.ones(2, 4)
    pr[0] = 0
    with pytest.raises(AllMaskedError):
        sample_from_probs(pr, 2, 0.9, [1, 2])


def test_nan_and_posinf_logits_rejected():
    from samplers import InvalidLogitsError
    ch = SamplerChain(SamplingParams(), vocab_size=3)
    with pytest.raises(InvalidLogitsError):
        ch.sample(torch.tensor([[0.0, float("nan"), 1.0]]))
    with pytest.raises(InvalidLogitsError):
        ch.sample(torch.tensor([[0.0, math.inf, 1.0]]))
    with pytest.raises(InvalidLogitsError):
        ch.sample(torch.zeros(1, 4))


@pytest.mark.parametrize("selection", ["dist", "race", "greedy"])
def test_single_allowed_token_is_returned_by_every_selection(selection):
    lg = torch.full((3, 20), NEG)
    lg[0, 7] = -50.0
    lg[1, 0] = 3.0
    lg[2, 19] = 0.0
    for params in (SamplingParams(selection=selection, seed=1),
                   SamplingParams(selection=selection, seed=1, mirostat=1),
                   SamplingParams(selection=selection, seed=1, mirostat=2),
                   SamplingParams(selection=selection, seed=1, samplers="", top_k=0)):
        ch = SamplerChain(params, vocab_size=20)
        for _ in range(3):
            tok, p = ch.sample(lg.clone(), return_probs=True)
            assert tok.tolist() == [7, 0, 19]
            np.testing.assert_allclose(p.numpy(), [1, 1, 1])


@pytest.mark.parametrize("mode", ["shared", "multinomial", "race"])
def test_operator_single_nonzero_token(mode):
    pr = torch.zeros(3, 300, dtype=torch.float16)
    pr[0, 5] = 1e-3
    pr[1, 299] = 1.0
    pr[2, 0] = 0.5
    for k, p in ((0, 1.0), (1, 0.0), (50, 0.9), (0, 0.3)):
        ids, q = sample_from_probs(pr, k, p, 3 if mode == "shared" else [1, 2, 3], mode=mode)
        assert ids.tolist() == [5, 299, 0]
        np.testing.assert_allclose(q.numpy(), [1, 1, 1])


def test_dist_extreme_uniforms_never_pick_removed_tokens():
    from samplers._candidates import Candidates
    from samplers.selection import select_dist
    lg = torch.tensor([[NEG, 1.0, NEG, 2.0, NEG]] * 3)
    c = Candidates(lg, 5)
    tok, p = select_dist(c, torch.tensor([0.0, 0.5, 1.0 - 2 ** -53], dtype=torch.float64))
    assert tok.tolist() == [1, 3, 3]
    # compact sets walk in token-id order too
    c = Candidates(torch.tensor([[2.0, 1.0, NEG]]), 9, ids=torch.tensor([[8, 2, 4]]), sorted=True)
    assert select_dist(c, torch.tensor([0.0], dtype=torch.float64))[0].tolist() == [2]


def test_dry_with_detokenize_callable():
    texts = ["a", "b", "c", "\n"]
    ch = SamplerChain(SamplingParams(samplers="d", dry_multiplier=1.0, dry_base=1.1, dry_allowed_length=2,
                                     dry_penalty_last_n=-1), vocab_size=4, token_texts=lambda i: texts[i])
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 4), [[0, 1, 2, 0, 1]])[0].numpy(), [0, 0, -1.0, 0])
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 4), [[0, 1, 3, 0, 1]])[0].numpy(), [0, 0, 0, 0])


@pytest.mark.parametrize("seed", range(6))
def test_top_p_partial_windows_equal_full_sort(seed):
    g = torch.Generator().manual_seed(seed)
    V = 20000
    scale = [0.5, 2.0, 6.0][seed % 3]
    lg = torch.randn(3, V, generator=g) * scale
    if seed % 2:
        lg[torch.rand(3, V, generator=g) < 0.5] = NEG
    lg[2, :300] = 9.0  # a tie group reaching past the first window
    for p in (0.3, 0.9, 0.999):
        windowed = SamplerChain(SamplingParams(samplers="p", top_p=p, min_keep=2), vocab_size=V).filter(lg.clone())
        full = SamplerChain(SamplingParams(samplers="kp", top_k=V, top_p=p, min_keep=2), vocab_size=V).filter(lg.clone())
        a, b = torch.isfinite(windowed), torch.isfinite(full)
        for r in range(3):
            if not torch.equal(a[r], b[r]):
                # only the float32 rounding of the running sum may move the cut: one set holds
                # the other, and both hold a mass within rounding of p (the order in which a
                # CPU's vector units add the probabilities up differs between machines)
                small, big = (a[r], b[r]) if a[r].sum() < b[r].sum() else (b[r], a[r])
                assert not bool((small & ~big).any()), (seed, p, r)
                probs = torch.softmax(lg[r].double(), 0)
                for kept in (small, big):
                    mass = float(probs[kept].sum())
                    assert abs(mass - p) < 1e-4, (seed, p, r, mass)
