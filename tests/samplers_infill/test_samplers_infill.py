"""The infill sampler on vectors derived by hand from the five rules of llama.cpp's sampler."""
import math

import numpy as np
import pytest
import torch

from samplers.infill import LETTER, NAME, InfillSampler, infill, infill_candidates

EOG = 9
TEXTS = [b"he", b"hello", b"x", b"y", b"a", b"ab", b"abc", b"z", b"", b"<eot>"]


def _cands(probs: dict[int, float]):
    return [(t, math.log(p)) for t, p in probs.items()]


def _as_dict(pairs):
    return {t: p for t, p in pairs}


def _check(got, want):
    assert set(got) == set(want), (got, want)
    for t, p in want.items():
        assert got[t] == pytest.approx(p, abs=1e-9)


def test_name_and_letter():
    assert (NAME, LETTER) == ("infill", "i")


def test_eog_mass_rule_keeps_only_eog():
    # n = 3: 3 * 0.2 * 3 = 1.8 > p_txt = 0.8
    got = _as_dict(infill_candidates(_cands({0: 0.5, 2: 0.3, EOG: 0.2}), [EOG], TEXTS))
    _check(got, {EOG: 1.0})


def test_eog_rule_not_triggered_small_eog():
    # n = 4: 3 * 0.04 * 4 = 0.48 <= 0.96; 3 ("y", 0.16) < 0.2 dropped; EOG kept though < 0.2;
    # renormalise by 0.84; second threshold 1/3 keeps 2 ("x", 0.357)
    got = _as_dict(infill_candidates(_cands({0: 0.5, 2: 0.3, EOG: 0.04, 3: 0.16}), [EOG], TEXTS))
    _check(got, {0: 0.5 / 0.84, 2: 0.3 / 0.84, EOG: 0.04 / 0.84})


def test_prefix_merge_into_the_more_likely_shorter_token():
    # "he" 0.4 absorbs "hello" 0.3 -> 0.7; "x" 0.2 survives 0.2, "y" 0.1 dropped;
    # renormalised {0: 0.7/0.9, 2: 0.2/0.9}; threshold 1/3 drops "x"
    got = _as_dict(infill_candidates(_cands({0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1}), [EOG], TEXTS))
    _check(got, {0: 1.0})


def test_prefix_merge_into_the_more_likely_longer_token():
    # "hello" 0.4 absorbs "he" 0.15 -> 0.55; "x" 0.35; "y" 0.1 dropped; /0.9; both >= 1/3
    got = _as_dict(infill_candidates(_cands({1: 0.4, 0: 0.15, 2: 0.35, 3: 0.1}), [EOG], TEXTS))
    _check(got, {1: 0.55 / 0.9, 2: 0.35 / 0.9})


def test_merge_chain_follows_candidate_order():
    # order: a .3, ab .25 (id 5), z .25 (id 7), abc .2; "a" absorbs "ab" then "abc" -> .75;
    # z .25 survives the 0.2 threshold, not 1/3
    got = _as_dict(infill_candidates(_cands({4: 0.3, 5: 0.25, 7: 0.25, 6: 0.2}), [EOG], TEXTS))
    _check(got, {4: 1.0})


def test_equal_texts_merge_and_empty_texts_do_not():
    texts = [b"q", b"q", b"", b"", b"r", b"<eot>"]
    # ids 0, 1 share "q": .25 absorbs .2 -> .45; ids 2, 3 are empty (control): never merge;
    # .45, .25, .25 kept, "r" .05 dropped; / .95; threshold 1/4 keeps all three
    got = _as_dict(infill_candidates(_cands({0: 0.25, 1: 0.2, 2: 0.25, 3: 0.25, 4: 0.05}), [5],
                                     texts))
    _check(got, {0: 0.45 / 0.95, 2: 0.25 / 0.95, 3: 0.25 / 0.95})


def test_no_text_token_left_returns_eot():
    texts = [bytes([97 + i]) for i in range(6)] + [b"<eot>"]
    probs = {i: 0.16 for i in range(6)}
    probs[6] = 0.04  # n = 7: 3 * .04 * 7 = .84 <= .96
    got = _as_dict(infill_candidates(_cands(probs), [6], texts))
    _check(got, {6: 1.0})


def test_eot_that_is_not_a_candidate_is_never_revived():
    texts = [bytes([97 + i]) for i in range(6)] + [b"<eot>", b"<eos>"]
    probs = {i: 1 / 6 for i in range(6)}  # no EOG candidate; EOT (6) masked
    got = _as_dict(infill_candidates(_cands(probs), [6, 7], texts, eot_id=6))
    # the 0.2 step is skipped; all six survive (n_non_eog = 6, threshold 1/7 < 1/6)
    _check(got, {i: 1 / 6 for i in range(6)})


def test_dense_torch_batch_matches_candidates():
    V = len(TEXTS)
    rows = [{0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1}, {0: 0.5, 2: 0.3, EOG: 0.04, 3: 0.16}]
    logits = torch.full((2, V), float("-inf"))
    for r, probs in enumerate(rows):
        for t, p in probs.items():
            logits[r, t] = math.log(p) + 3.0  # a shift must not matter
    out = infill(logits, [EOG], TEXTS)
    assert out.shape == logits.shape and out.dtype == logits.dtype
    for r, probs in enumerate(rows):
        want = _as_dict(infill_candidates(_cands(probs), [EOG], TEXTS))
        got = {t: math.exp(float(out[r, t])) for t in range(V) if out[r, t] > float("-inf")}
        assert set(got) == set(want)
        for t in want:
            assert got[t] == pytest.approx(want[t], abs=1e-6)


def test_masked_tokens_do_not_count_as_candidates():
    # with 6 extra -inf columns, n stays 3 -> the EOG rule gives the same answer as 3 candidates
    V = 16
    texts = TEXTS + [b"m%d" % i for i in range(V - len(TEXTS))]
    logits = np.full(V, -np.inf)
    logits[[0, 2, EOG]] = np.log([0.57, 0.36, 0.07])  # 3 * .07 * 3 = .63 < .93
    out = infill(logits, [EOG], texts)
    kept = np.nonzero(np.isfinite(out))[0].tolist()
    assert kept == [0, 2, EOG]
    assert np.exp(out[kept]).sum() == pytest.approx(1.0)


def test_compact_block_with_ids():
    logits = torch.log(torch.tensor([[0.4, 0.3, 0.2, 0.1]]))
    ids = torch.tensor([[1, 0, 2, 3]])  # "hello" .4, "he" .3, "x" .2, "y" .1
    out = infill(logits, [EOG], TEXTS, ids=ids)
    # "hello" absorbs "he" -> .7; "x" .2; /.9 -> .778, .222; 1/3 drops "x"
    assert torch.isfinite(out).tolist() == [[True, False, False, False]]
    assert float(out[0, 0]) == pytest.approx(0.0, abs=1e-6)


def test_sampler_object_and_errors():
    s = InfillSampler([EOG], TEXTS)
    assert s.name == "infill" and s.eot_id == EOG
    out = s(torch.log(torch.tensor([0.5, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2])))
    assert torch.isfinite(out).tolist() == [False] * 9 + [True]
    with pytest.raises(ValueError):
        InfillSampler([], TEXTS)
    with pytest.raises(ValueError):
        infill(torch.full((10,), float("-inf")), [EOG], TEXTS)


def _reference_pairs(ids, p, texts, eog):
    """The reference double loop over every ordered pair, for comparison."""
    p = list(p)
    dead = [False] * len(ids)
    for i0 in range(len(ids)):
        for i1 in range(len(ids)):
            if dead[i0]:
                break
            if i0 == i1 or dead[i1]:
                continue
            t0, t1 = texts[ids[i0]], texts[ids[i1]]
            if t0 and len(t0) <= len(t1) and t1.startswith(t0):
                dst, src = (i1, i0) if p[i1] > p[i0] else (i0, i1)
                p[dst] += p[src]
                p[src] = 0.0
                dead[src] = True
    return p


def test_merge_matches_the_reference_pair_loop_on_random_sets():
    from samplers.infill import _merge_prefixes
    rng = np.random.default_rng(0)
    alphabet = [b"a", b"b", b"c"]
    for trial in range(200):
        n = int(rng.integers(2, 14))
        texts = [b"".join(rng.choice(alphabet, size=int(rng.integers(0, 4))).tolist())
                 for _ in range(n)]
        ids = np.arange(n)
        p = rng.dirichlet(np.ones(n))
        if trial % 3 == 0:
            p = np.round(p, 1) + 1e-3  # ties
        order = np.argsort(-p, kind="stable")
        got = _merge_prefixes(ids[order], p[order].copy(), texts)
        want = _reference_pairs(ids[order].tolist(), p[order].tolist(), texts, set())
        assert np.allclose(got, want), (texts, p)


def test_end_tokens_never_merge_even_with_text():
    texts = [b"<", b"x", b"<|endoftext|>"]
    # "<" would absorb the EOG token if its name counted as text; it must stay separate
    got = _as_dict(infill_candidates(_cands({0: 0.6, 1: 0.36, 2: 0.04}), [2], texts))
    _check(got, {0: 0.6, 1: 0.36, 2: 0.04})


def test_chain_stage_keeps_the_survivors_logits():
    """llama.cpp's dist step after infill recomputes the softmax from the unchanged logits of
    the survivors; the chain stage hands on exactly those logits."""
    from samplers.infill import InfillSampler, infill
    texts = [b"a", b"ab", b"abc", b"x", b""]
    logits = np.array([1.0, 0.8, 0.2, 0.5, -1.0])
    merged = infill(logits, [4], texts)
    staged = InfillSampler([4], texts)(logits)
    kept = np.isfinite(merged)
    assert np.array_equal(kept, np.isfinite(staged)) and kept.sum() >= 1
    assert np.array_equal(staged[kept], logits[kept])
    # the merged probabilities (what the infill step writes) differ from that softmax
    drawn = np.exp(staged[kept]) / np.exp(staged[kept]).sum()
    assert not np.allclose(np.exp(merged[kept]), drawn)
