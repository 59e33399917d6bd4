"""Logprob recovery against synthetic top-k oracles: exact, rounded and noisy."""
import math

import numpy as np
import pytest

from constrained.logprobs import (LogitsOracle, MedianOracle, recover_by_bisection,
                                  recover_k_per_call, recover_one_per_call, recover_top_n)
from constrained.logprobs.recovery import log1mexp, unbias_one, unbias_set, unpenalise

V = 300


def _logits(seed=0, scale=3.0, size=V):
    return np.random.default_rng(seed).normal(0.0, scale, size)


def _err(result, true):
    ids = result.known_ids()
    return float(np.abs(result.logprobs[ids] - true[ids]).max())


def test_log1mexp_is_accurate_near_zero_and_far_below():
    assert log1mexp(-1e-20) == pytest.approx(math.log(1e-20), rel=1e-12)
    assert log1mexp(-50.0) == pytest.approx(-math.exp(-50.0), rel=1e-12)
    assert log1mexp(0.0) == -math.inf
    with pytest.raises(ValueError):
        log1mexp(0.1)


def test_unbias_formulas_invert_the_bias_exactly():
    p = np.array([0.02, 0.03, 0.5, 0.45])
    b = 7.0
    biased = np.log(p) + np.array([b, b, 0, 0])
    biased -= np.log(np.exp(biased).sum())
    assert unbias_one(float(np.log(p[0] * math.exp(b) / (1 - p[0] + p[0] * math.exp(b)))), b) \
        == pytest.approx(math.log(0.02), abs=1e-12)
    got = unbias_set({0: biased[0], 1: biased[1]}, b)
    assert got[0] == pytest.approx(math.log(0.02), abs=1e-12)
    assert got[1] == pytest.approx(math.log(0.03), abs=1e-12)
    # penalise tokens 2, 3 (known mass 0.95) by -b and read token 0
    pen = np.log(p) - np.array([0, 0, b, b])
    pen -= np.log(np.exp(pen).sum())
    assert unpenalise(pen[0], b, math.log(0.95)) == pytest.approx(math.log(0.02), abs=1e-12)


def test_one_per_call_exact_and_about_one_call_per_token():
    oracle = LogitsOracle(_logits(), k=1)
    r = recover_one_per_call(oracle, V)
    assert _err(r, oracle.logprobs) < 1e-9 and not r.unresolved
    assert r.calls == oracle.calls
    assert V <= r.calls <= 2.5 * V


@pytest.mark.parametrize("k", [2, 5, 20])
def test_k_per_call_reference_exact_with_v_over_k_calls(k):
    oracle = LogitsOracle(_logits(1), k=k)
    r = recover_k_per_call(oracle, V, k)
    assert _err(r, oracle.logprobs) < 1e-10 and len(r.known_ids()) == V
    assert r.calls == 1 + math.ceil((V - k) / (k - 1))


def test_k_per_call_mass_formula_exact():
    oracle = LogitsOracle(_logits(2), k=5)
    r = recover_k_per_call(oracle, V, 5, method="mass")
    assert _err(r, oracle.logprobs) < 1e-8 and len(r.known_ids()) == V
    assert r.calls <= 2.2 * V / 5


@pytest.mark.parametrize("reference,calls", [(True, 6), (False, 5)])
def test_top_n_by_penalty_returns_the_n_most_likely(reference, calls):
    oracle = LogitsOracle(_logits(3), k=8)
    r = recover_top_n(oracle, V, 40, reference=reference)
    true = oracle.logprobs
    ids = r.known_ids()
    assert set(ids) == set(np.argsort(-true)[:40])
    assert _err(r, true) < 1e-10
    assert r.calls == calls  # 40 / 8 penalising everything; 1 + ceil(32 / 7) with a reference


def test_bisection_with_argmax_only():
    logits = _logits(4, size=40)
    oracle = LogitsOracle(logits)
    r = recover_by_bisection(oracle.argmax, 40, tol=1e-9)
    assert _err(r, oracle.logprobs) < 1e-7
    # about log2(max_bias / tol) calls per token
    assert r.calls <= 1 + 39 * (2 + math.ceil(math.log2(100 / 1e-9)))


def test_bisection_subset_gives_log_odds_against_the_top():
    oracle = LogitsOracle(_logits(5, size=50))
    top = int(np.argmax(oracle.logprobs))
    r = recover_by_bisection(oracle.argmax, 50, token_ids=[3, 7], tol=1e-9)
    for t in (3, 7):
        assert r.logprobs[t] == pytest.approx(oracle.logprobs[t] - oracle.logprobs[top], abs=1e-7)


def test_peaked_distribution_is_stable():
    """Top token holds all but 1e-12 of the mass: no cancellation in any method."""
    logits = np.full(50, -30.0)
    logits[0] = 0.0
    logits[1:] += _logits(6, scale=1.0, size=49)
    oracle = LogitsOracle(logits, k=4)
    true = oracle.logprobs
    assert _err(recover_k_per_call(oracle, 50, 4), true) < 1e-9
    assert _err(recover_one_per_call(oracle, 50), true) < 1e-6
    assert _err(recover_top_n(oracle, 50, 12), true) < 1e-9


def test_hidden_tokens_are_reported_with_bounds():
    logits = np.zeros(10)
    logits[9] = -500.0
    oracle = LogitsOracle(logits, k=3)
    r = recover_k_per_call(oracle, 10, 3, max_bias=60.0)
    assert r.unresolved == [9] and np.isnan(r.logprobs[9])
    assert r.upper_bounds[9] > oracle.logprobs[9]
    assert _err(r, oracle.logprobs) < 1e-10


def test_restricted_candidate_set():
    oracle = LogitsOracle(_logits(7), k=5)
    r = recover_k_per_call(oracle, V, 5, token_ids=range(100, 140))
    assert _err(r, oracle.logprobs) < 1e-10
    assert r.calls == 1 + math.ceil(40 / 4)


def test_rounded_logprobs():
    oracle = LogitsOracle(_logits(8), k=5, decimals=5)
    r = recover_k_per_call(oracle, V, 5)
    assert _err(r, oracle.logprobs) < 2.5e-5
    r1 = recover_one_per_call(LogitsOracle(_logits(8), k=5, decimals=5), V)
    assert np.median(np.abs(r1.logprobs - oracle.logprobs)) < 1e-3


def test_noisy_logprobs_median_of_repeats():
    noisy = LogitsOracle(_logits(9), k=6, noise=0.02, seed=1)
    single = recover_k_per_call(noisy, V, 6)
    median = recover_k_per_call(MedianOracle(noisy, repeats=15), V, 6)
    true = noisy.logprobs
    err_single = np.abs(single.logprobs - true).mean()
    err_median = np.abs(median.logprobs - true).mean()
    assert err_median < err_single / 2 and err_median < 0.02


def test_argument_checks():
    oracle = LogitsOracle(_logits(), k=1)
    with pytest.raises(ValueError):
        recover_k_per_call(oracle, V, 1)
    with pytest.raises(ValueError):
        recover_k_per_call(oracle, V, 3, method="other")
    with pytest.raises(ValueError):
        recover_one_per_call(oracle, V, token_ids=[V])
    with pytest.raises(ValueError):
        MedianOracle(oracle, repeats=0)


def test_one_per_call_bounds_hidden_tokens():
    logits = np.zeros(8)
    logits[7] = -400.0
    oracle = LogitsOracle(logits, k=2)
    r = recover_one_per_call(oracle, 8, max_bias=50.0)
    assert r.unresolved == [7] and r.upper_bounds[7] > oracle.logprobs[7]
    assert _err(r, oracle.logprobs) < 1e-9
