"""llama.cpp's sampler test vectors (tests/test-sampling.cpp) and more, derived by hand."""
import math
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np
import pytest
import torch

from samplers import SamplerChain, SamplingParams

P4 = [0.1, 0.2, 0.3, 0.4]


def kept_probs(probs, order, history=None, **kw):
    """Apply one sampler order to ln(probs); return the probabilities of the kept tokens (array
    over the vocabulary, 0 for removed tokens)."""
    lg = torch.tensor([probs], dtype=torch.float32).log()
    ch = SamplerChain(SamplingParams(samplers=order, **kw), vocab_size=len(probs))
    out = ch.filter(lg, None if history is None else [history])
    return torch.softmax(out, dim=1)[0].numpy()


def assert_set(got, expected, tol=1e-5):
    """Compare the multiset of non-zero probabilities (llama.cpp lists kept candidates only)."""
    g = np.sort(got[got > 0])
    e = np.sort(np.asarray([x for x in expected if x > 0], dtype=np.float64))
    assert g.shape == e.shape, (got, expected)
    np.testing.assert_allclose(g, e, atol=tol)


# ---------------------------------------------------------------- temperature
def test_temperature_one_is_identity():
    np.testing.assert_allclose(kept_probs(P4, ["temperature"], temperature=1.0), P4, atol=1e-6)


def test_temperature_zero_keeps_max():
    np.testing.assert_allclose(kept_probs(P4, ["temperature"], temperature=0.0), [0, 0, 0, 1])


def test_dynatemp_range_zero_is_plain_temperature():
    np.testing.assert_allclose(kept_probs(P4, ["temperature"], temperature=1.0, dynatemp_range=0.0,
                                          dynatemp_exponent=1.0), P4, atol=1e-6)
    np.testing.assert_allclose(kept_probs(P4, ["temperature"], temperature=0.0, dynatemp_range=0.0),
                               [0, 0, 0, 1])


def test_temperature_scales():
    t = 0.5
    exp = np.array(P4) ** (1 / t)
    np.testing.assert_allclose(kept_probs(P4, ["temperature"], temperature=t), exp / exp.sum(), atol=1e-6)


@pytest.mark.parametrize("temp,rng,expo", [(1.0, 0.5, 1.0), (0.8, 1.0, 2.0), (0.3, 0.5, 0.5)])
def test_dynatemp_by_hand(temp, rng, expo):
    p = np.array(P4)
    h = -(p * np.log(p)).sum()
    norm = h / math.log(4)
    t = max(0.0, temp - rng) + (temp + rng - max(0.0, temp - rng)) * norm ** expo
    exp = p ** (1 / t)
    got = kept_probs(P4, ["temperature"], temperature=temp, dynatemp_range=rng, dynatemp_exponent=expo)
    np.testing.assert_allclose(got, exp / exp.sum(), atol=1e-5)


# ---------------------------------------------------------------- top-k / top-p / min-p
@pytest.mark.parametrize("k,expected", [
    (1, [1.0]), (3, [0.44444, 0.33333, 0.22222]), (4, [0.4, 0.3, 0.2, 0.1]), (0, P4)])
def test_top_k(k, expected):
    assert_set(kept_probs(P4, "k", top_k=k), expected)


@pytest.mark.parametrize("p,expected", [
    (0.0, [1.0]), (0.7, [0.571429, 0.428571]), (0.8, [0.44444, 0.33333, 0.22222]), (1.0, P4)])
def test_top_p(p, expected):
    assert_set(kept_probs(P4, "p", top_p=p), expected)


@pytest.mark.parametrize("p,expected", [
    (0.0, P4), (0.24, P4),
    (0.26, [0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9]), (0.49, [0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9]),
    (0.51, [0.3 / 0.7, 0.4 / 0.7]), (0.74, [0.3 / 0.7, 0.4 / 0.7]),
    (0.76, [1.0]), (1.0, [1.0]), (1.05, [1.0])])
def test_min_p(p, expected):
    assert_set(kept_probs(P4, "m", min_p=p), expected)


# ---------------------------------------------------------------- XTC
@pytest.mark.parametrize("thr,expected", [
    (0.09, [0.1]), (0.19, [0.2, 0.1]), (0.29, [0.3, 0.2, 0.1]), (0.39, [0.4, 0.3, 0.2, 0.1])])
def test_xtc(thr, expected):
    got = kept_probs([0.4, 0.3, 0.2, 0.1], "x", xtc_probability=1.0, xtc_threshold=thr)
    e = np.array(expected)
    assert_set(got, e / e.sum())


def test_xtc_disabled_by_threshold_and_probability():
    assert_set(kept_probs([0.4, 0.3, 0.2, 0.1], "x", xtc_probability=1.0, xtc_threshold=0.51),
               [0.4, 0.3, 0.2, 0.1])
    assert_set(kept_probs([0.4, 0.3, 0.2, 0.1], "x", xtc_probability=0.0, xtc_threshold=0.05),
               [0.4, 0.3, 0.2, 0.1])


def test_xtc_min_keep():
    # 4 tokens above 0.09: pos = 3, size - pos = 1 < min_keep 2 -> nothing removed
    assert_set(kept_probs([0.4, 0.3, 0.2, 0.1], "x", xtc_probability=1.0, xtc_threshold=0.09, min_keep=2),
               [0.4, 0.3, 0.2, 0.1])


# ---------------------------------------------------------------- typical
def test_typical():
    assert_set(kept_probs([0.97, 0.01, 0.01, 0.01], "y", typical_p=0.5), [1.0])
    assert_set(kept_probs([0.4, 0.2, 0.2, 0.2], "y", typical_p=0.5), [1 / 3, 1 / 3, 1 / 3])


def test_typical_strict_inequality_and_noop():
    # scores of the 0.2 tokens are smallest; cum 0.2, 0.4, 0.6: > 0.4 is reached at the third
    assert_set(kept_probs([0.4, 0.2, 0.2, 0.2], "y", typical_p=0.4), [1 / 3, 1 / 3, 1 / 3])
    assert_set(kept_probs([0.4, 0.2, 0.2, 0.2], "y", typical_p=1.0), [0.4, 0.2, 0.2, 0.2])


# ---------------------------------------------------------------- penalties
@pytest.mark.parametrize("hist,expected,rep,freq,pres", [
    ([0], [0, 0.25, 0.25, 0.25, 0.25], 50.0, 0.0, 0.0),
    ([0, 1, 2], [0, 0, 0, 0.5, 0.5], 50.0, 0.0, 0.0),
    ([0, 1, 2, 0, 0], [0, 0, 0, 0.5, 0.5], 50.0, 0.0, 0.0),
    ([0], [0.000011, 0.249997, 0.249997, 0.249997, 0.249997], 1.0, 5.0, 5.0),
    ([0, 1, 2], [0.000023, 0.000023, 0.000023, 0.499966, 0.499966], 1.0, 5.0, 5.0),
    ([0, 1, 2, 0, 0], [0.000000, 0.000023, 0.000023, 0.499977, 0.499977], 1.0, 5.0, 5.0),
])
def test_penalties(hist, expected, rep, freq, pres):
    got = kept_probs([0.2] * 5, "e", history=hist, repeat_penalty=rep, frequency_penalty=freq,
                     presence_penalty=pres, repeat_last_n=len(hist))
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_penalties_last_n_window_and_noop():
    # only the last 2 tokens count: token 0 (oldest) is not penalised
    got = kept_probs([0.2] * 5, "e", history=[0, 1, 2], repeat_penalty=50.0, repeat_last_n=2)
    assert got[0] > 0.2 and got[1] < 1e-3 and got[2] < 1e-3
    for kw in (dict(repeat_last_n=0, repeat_penalty=50.0), dict(repeat_penalty=1.0)):
        np.testing.assert_allclose(kept_probs([0.2] * 5, "e", history=[0, 1], **kw), [0.2] * 5, atol=1e-6)


def test_penalty_positive_and_negative_logits():
    lg = torch.tensor([[2.0, -2.0, 0.0, 1.0]])
    ch = SamplerChain(SamplingParams(samplers="e", repeat_penalty=2.0, repeat_last_n=-1), vocab_size=4)
    out = ch.filter(lg.clone(), [[0, 1, 2]])
    np.testing.assert_allclose(out[0].numpy(), [1.0, -4.0, 0.0, 1.0])


def test_penalize_nl_and_ignore_eos():
    texts = ["a", "\n", "b", "</s>"]
    ch = SamplerChain(SamplingParams(samplers="e", repeat_penalty=2.0, repeat_last_n=-1, penalize_nl=False,
                                     ignore_eos=True), vocab_size=4, token_texts=texts, eos_token_ids=[3])
    out = ch.filter(torch.tensor([[1.0, 1.0, 1.0, 5.0]]), [[0, 1]])
    np.testing.assert_allclose(out[0, :3].numpy(), [0.5, 1.0, 1.0])
    assert out[0, 3] == -math.inf


# ---------------------------------------------------------------- DRY
@pytest.mark.parametrize("probs,hist,expected,mult,base,allowed,last_n,breakers", [
    ([0.25] * 4, [0, 1], [0.25] * 4, 1.0, 1.1, 2, 4, []),
    ([0.25] * 4, [0, 1, 2, 0, 1], [0.296923, 0.296923, 0.109232, 0.296923], 1.0, 1.1, 2, 5, []),
    ([0.2] * 5, [0, 1, 3, 4, 0, 1], [0.2] * 5, 1.0, 1.1, 2, 6, [[3]]),
    ([0.2] * 5, [0, 1, 2, 0, 1], [0.241818, 0.241818, 0.032727, 0.241818, 0.241818], 2.0, 1.1, 2, 5, []),
    ([0.2] * 5, [0, 1, 2, 3, 4, 0, 1], [0.2] * 5, 1.0, 1.1, 4, 7, []),
])
def test_dry(probs, hist, expected, mult, base, allowed, last_n, breakers):
    got = kept_probs(probs, "d", history=hist, dry_multiplier=mult, dry_base=base, dry_allowed_length=allowed,
                     dry_penalty_last_n=last_n, dry_sequence_breakers=breakers)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_dry_longer_match_grows_exponentially():
    # history a b c a b c a b : suffix "a b" also ends earlier followed by c; the match "c a b"
    # (length 5 = "a b c a b" before the final "c a b"?) -> longest suffix that repeats with a
    # follower: shift 3 gives length 5 (a b c a b), follower c. Penalty = 1 * 2^(5-2) = 8.
    hist = [0, 1, 2, 0, 1, 2, 0, 1]
    lg = torch.zeros(1, 4)
    ch = SamplerChain(SamplingParams(samplers="d", dry_multiplier=1.0, dry_base=2.0, dry_allowed_length=2,
                                     dry_penalty_last_n=-1, dry_sequence_breakers=[]), vocab_size=4)
    out = ch.filter(lg, [hist])[0].numpy()
    np.testing.assert_allclose(out, [0.0, 0.0, -8.0, 0.0])


def test_dry_string_breakers_through_token_texts():
    texts = ["a", "b", "x\ny", "c", ":"]
    hist = [0, 1, 3, 0, 1]  # "a b c a b" -> follower of "a b" is c (3)
    base = dict(samplers="d", dry_multiplier=1.0, dry_base=1.1, dry_allowed_length=2, dry_penalty_last_n=-1)
    ch = SamplerChain(SamplingParams(**base), vocab_size=5, token_texts=texts)
    out = ch.filter(torch.zeros(1, 5), [hist])[0].numpy()
    np.testing.assert_allclose(out, [0, 0, 0, -1.0, 0])
    # a breaker token between the repeats cuts the match: "a b \n a b" -> no penalty
    out = ch.filter(torch.zeros(1, 5), [[0, 1, 2, 0, 1]])[0].numpy()
    np.testing.assert_allclose(out, [0] * 5)
    # a single-token breaker is never penalised itself: "a b : a b" with ':' a breaker
    out = ch.filter(torch.zeros(1, 5), [[0, 1, 4, 3, 0, 1]])[0].numpy()
    np.testing.assert_allclose(out, [0] * 5)


def test_dry_multi_token_breaker_by_text():
    # breaker "<|x|>" spelt by tokens "<|" + "x|>"; between the repeats it limits matching
    texts = ["a", "b", "<|", "x|>", "c"]
    base = dict(samplers="d", dry_multiplier=1.0, dry_base=1.1, dry_allowed_length=2, dry_penalty_last_n=-1,
                dry_sequence_breakers=["<|x|>"])
    ch = SamplerChain(SamplingParams(**base), vocab_size=5, token_texts=texts)
    # a b c a b : penalised c
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 5), [[0, 1, 4, 0, 1]])[0].numpy(), [0, 0, 0, 0, -1.0])
    # a b c <| x|> a b : head "<|" 3 tokens back with a 1-token tail -> rep_limit = 3 - 1 = 2,
    # so the 2-token match "a b" still counts and c is penalised
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 5), [[0, 1, 4, 2, 3, 0, 1]])[0].numpy(), [0, 0, 0, 0, -1.0])
    # the breaker as the last two tokens: rep_limit = 1 - 1 = 0 < 2 -> no penalty at all
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 5), [[0, 1, 4, 0, 1, 2, 3]])[0].numpy(), [0] * 5)
    # "<|" without its tail is no breaker: a b <| a b <| -> match of length 3, follower a: 1.1^(3-2)
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 5), [[0, 1, 2, 0, 1, 2]])[0].numpy(),
                               [-1.1, 0, 0, 0, 0], rtol=1e-6)


def test_dry_multi_token_breaker_by_tokenize():
    texts = ["a", "b", "<|", "x|>", "c"]
    calls = []

    def tokenize(s):
        calls.append(s)
        return {"x|>": [3]}[s]

    ch = SamplerChain(SamplingParams(samplers="d", dry_multiplier=1.0, dry_base=1.1, dry_allowed_length=2,
                                     dry_penalty_last_n=-1, dry_sequence_breakers=["<|x|>"]),
                      vocab_size=5, token_texts=texts, tokenize=tokenize)
    np.testing.assert_allclose(ch.filter(torch.zeros(1, 5), [[0, 1, 4, 0, 1, 2, 3]])[0].numpy(), [0] * 5)
    assert calls == ["x|>"]


def test_dry_long_window_uses_linear_z():
    rng = np.random.default_rng(0)
    body = rng.integers(5, 50, size=700).tolist()
    hist = body + [1, 2, 3] + body[:5] + [1, 2]
    lg = torch.zeros(1, 60)
    p = dict(samplers="d", dry_multiplier=1.0, dry_base=1.5, dry_allowed_length=2, dry_sequence_breakers=[])
    long_ = SamplerChain(SamplingParams(dry_penalty_last_n=-1, **p), vocab_size=60).filter(lg.clone(), [hist])
    short = SamplerChain(SamplingParams(dry_penalty_last_n=20, **p), vocab_size=60).filter(lg.clone(), [hist])
    # the suffix [1, 2] follows with 3 earlier: penalty 1.5^0 = 1 at least
    assert long_[0, 3] <= -1.0 and short[0, 3] <= -1.0


# ---------------------------------------------------------------- top-n-sigma
@pytest.mark.parametrize("n,expected", [(1.0, [0, 0, 0.428571, 0.571429]), (0.0, P4), (3.0, P4), (-1.0, P4)])
def test_top_n_sigma(n, expected):
    np.testing.assert_allclose(kept_probs(P4, "s", top_n_sigma=n), expected, atol=1e-5)


# ---------------------------------------------------------------- KoboldAI family
TFS5 = [0.4, 0.3, 0.15, 0.1, 0.05]


def test_tail_free_variants_differ_by_one():
    assert_set(kept_probs(TFS5, ["tfs"], tfs_z=0.5), [1.0])
    assert_set(kept_probs(TFS5, ["tfs_kai"], tfs_z=0.5), [0.4 / 0.7, 0.3 / 0.7])


def test_tail_free_by_hand():
    p = [0.5, 0.25, 0.125, 0.0625, 0.0625]   # d2 = .125, .0625, .0625 -> cdf .5, .75, 1
    assert_set(kept_probs(p, ["tfs"], tfs_z=0.8), [0.5 / 0.75, 0.25 / 0.75])       # first cum > .8 at i=2
    assert_set(kept_probs(p, ["tfs_kai"], tfs_z=0.8), [0.5 / 0.875, 0.25 / 0.875, 0.125 / 0.875])
    assert_set(kept_probs(p, ["tfs"], tfs_z=1.0), p)      # z >= 1: no-op
    assert_set(kept_probs([0.6, 0.4], ["tfs"], tfs_z=0.1), [0.6, 0.4])  # size <= 2: no-op


def test_tail_free_kai_with_masked_tail_keeps_last_finite():
    # V = 7 with two masked tokens: the always-dropped last sorted token is a masked one
    p = np.array([0.4, 0.3, 0.15, 0.1, 0.05, 0.0, 0.0])
    lg = torch.from_numpy(np.log(np.where(p > 0, p, 1.0))[None].astype(np.float32))
    lg[0, 5:] = -math.inf
    ch = SamplerChain(SamplingParams(samplers=["tfs_kai"], tfs_z=0.99), vocab_size=7)
    out = torch.softmax(ch.filter(lg), 1)[0].numpy()
    # padded sorted p: .4 .3 .15 .1 .05 0 0 -> |d2| = .05 .1 0 .05 .05 -> /.25 -> cdf .2 .6 .6 .8 1
    # keep index i (1..5) while cdf[i-1] <= .99: indices 0..4 kept, 5 (a zero) dropped
    assert (out[:5] > 0).all()


@pytest.mark.parametrize("a,expected", [(1.0, [0.5 / 0.8, 0.3 / 0.8]), (0.5, [0.5, 0.3, 0.2]), (0.0, [0.5, 0.3, 0.2])])
def test_top_a(a, expected):
    assert_set(kept_probs([0.5, 0.3, 0.2], ["top_a"], top_a=a), expected)


def test_rep_pen_koboldai_slope_by_hand():
    # range 4: x = [-1, -1/3, 1/3, 1]; slope .7 -> x' = [-1, -0.259259, 0.259259, 1]
    # pen = 1 + (x'+1)/2 * (2 - 1) = [1, 1.370370, 1.629630, 2]
    ch = SamplerChain(SamplingParams(samplers=["rep_pen"], repeat_penalty=2.0, rep_pen_range=4, rep_pen_slope=0.7),
                      vocab_size=10)
    out = ch.filter(torch.ones(1, 10), [[9, 5, 6, 7, 8]])[0].numpy()
    np.testing.assert_allclose(out[[5, 6, 7, 8, 9]], [1 / 1.0, 1 / 1.370370, 1 / 1.629630, 1 / 2.0, 1.0], rtol=1e-5)
    # most recent occurrence decides: token 5 at the newest-but-one position
    out = ch.filter(torch.ones(1, 10), [[5, 6, 5, 8]])[0].numpy()
    np.testing.assert_allclose(out[[5, 6, 8]], [1 / 1.629630, 1 / 1.370370, 0.5], rtol=1e-5)
    # slope 0: flat penalty over the range; negative logits are multiplied
    ch0 = SamplerChain(SamplingParams(samplers=["rep_pen"], repeat_penalty=2.0, rep_pen_range=4, rep_pen_slope=0.0),
                       vocab_size=10)
    out = ch0.filter(-torch.ones(1, 10), [[1, 2, 3, 4, 5]])[0].numpy()
    np.testing.assert_allclose(out[[1, 2, 3, 4, 5]], [-1, -2, -2, -2, -2])


def test_rep_pen_koboldcpp_halves():
    ch = SamplerChain(SamplingParams(samplers=["rep_pen_kcpp"], repeat_penalty=2.0, rep_pen_range=4,
                                     rep_pen_slope=0.5, presence_penalty=0.25), vocab_size=10)
    out = ch.filter(torch.ones(1, 10), [[9, 5, 6, 7, 8]])[0].numpy()
    # window [5 6 7 8]: near {7, 8} -> /2, far {5, 6} -> /1.5; all minus presence .25
    np.testing.assert_allclose(out[[5, 6, 7, 8, 9]], [1 / 1.5 - .25, 1 / 1.5 - .25, 0.25, 0.25, 1.0], rtol=1e-5)


# ---------------------------------------------------------------- mirostat
def test_mirostat_v2_truncates_by_surprise_and_updates_mu():
    lg = torch.tensor([P4]).log()
    ch = SamplerChain(SamplingParams(mirostat=2, mirostat_tau=1.0, mirostat_eta=0.5, temperature=1.0, seed=4),
                      vocab_size=4)
    # mu = 2 tau = 2: keep -log2 p <= 2, i.e. p >= .25
    assert_set(torch.softmax(ch.filter(lg.clone()), 1)[0].numpy(), [0.3 / 0.7, 0.4 / 0.7])
    tok, p = ch.sample(lg.clone(), return_probs=True)
    exp_p = {2: 0.3 / 0.7, 3: 0.4 / 0.7}[int(tok)]
    assert abs(float(p) - exp_p) < 1e-6
    assert abs(float(ch.mu[0]) - (2.0 - 0.5 * (-math.log2(exp_p) - 1.0))) < 1e-6


def test_mirostat_v1_k_by_hand():
    V = 1000
    ranks = np.arange(1, V + 1)
    p = 1.0 / ranks ** 1.2
    p /= p.sum()
    tau = 3.0
    mu = 2 * tau
    i = np.arange(99)
    t = np.log((i + 2) / (i + 1))
    b = np.log(p[:99] / p[1:100])
    s = (t * b).sum() / (t * t).sum()
    eps = s - 1
    k = int(((eps * 2 ** mu) / (1 - V ** (-eps))) ** (1 / s))
    ch = SamplerChain(SamplingParams(mirostat=1, mirostat_tau=tau, temperature=1.0, seed=1), vocab_size=V)
    out = ch.filter(torch.from_numpy(np.log(p)[None].astype(np.float32)))
    assert int(torch.isfinite(out).sum()) == k
    assert torch.isfinite(out[0, :k]).all()


# ---------------------------------------------------------------- llama.cpp sampler queue
def _queue_expected(n_vocab, seq, top_k, top_p, min_p):
    """Kept token ids after each step for logits ln(i) (token 0 is -inf), derived with integers."""
    alive = list(range(1, n_vocab))  # token 0 has p = 0 and is masked
    for s in seq:
        if s == "k":
            alive = alive[-top_k:] if top_k > 0 else alive
        elif s == "p":
            if top_p < 1:
                total = sum(alive)
                acc, kept = 0, []
                for t in reversed(alive):
                    kept.append(t)
                    acc += t
                    if acc >= top_p * total:
                        break
                alive = sorted(kept)
        elif s == "m":
            if min_p > 0:
                mx = max(alive)
                alive = [t for t in alive if t >= min_p * mx] or [mx]
    return alive


@pytest.mark.parametrize("seq,top_k,top_p,min_p", [
    ("k", 10000, 1.0, 1.0), ("k", 1, 1.0, 1.0), ("p", 0, 0.1, 0.0), ("p", 0, 0.8, 0.0),
    ("m", 0, 1.0, 0.5), ("m", 0, 1.0, 0.99), ("kp", 100, 0.8, 0.0), ("kpm", 100, 0.8, 0.3),
    ("mpk", 50, 0.5, 0.4), ("pmk", 20, 0.9, 0.6)])
def test_sampler_queue(seq, top_k, top_p, min_p):
    n_vocab = 10000
    lg = torch.log(torch.arange(n_vocab, dtype=torch.float64)).to(torch.float32)[None]
    ch = SamplerChain(SamplingParams(samplers=seq, top_k=top_k, top_p=top_p, min_p=min_p, min_keep=1),
                      vocab_size=n_vocab)
    got = torch.isfinite(ch.filter(lg)).nonzero()[:, 1].tolist()
    exp = _queue_expected(n_vocab, seq, top_k, top_p, min_p)
    assert got == exp
