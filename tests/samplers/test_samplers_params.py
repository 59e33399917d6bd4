"""Parameter validation, sampler orders, per-row batches and chain state."""
import math
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np
import pytest
import torch

from samplers import (InvalidParameterError, SamplerChain, SamplerError, SamplingParams, UnknownSamplerError)
from samplers.operator import sample_from_probs


@pytest.mark.parametrize("kw,param", [
    (dict(top_k=-2), "top_k"), (dict(top_k=2.5), "top_k"), (dict(top_p=1.5), "top_p"), (dict(top_p=-0.1), "top_p"),
    (dict(top_p=float("nan")), "top_p"), (dict(temperature=float("nan")), "temperature"),
    (dict(temperature=math.inf), "temperature"), (dict(min_p=-0.5), "min_p"), (dict(typical_p=2.0), "typical_p"),
    (dict(tfs_z=-1.0), "tfs_z"), (dict(top_a=-1.0), "top_a"), (dict(xtc_probability=1.5), "xtc_probability"),
    (dict(xtc_threshold=-0.1), "xtc_threshold"), (dict(dynatemp_range=-1.0), "dynatemp_range"),
    (dict(repeat_penalty=0.0), "repeat_penalty"), (dict(repeat_last_n=-5), "repeat_last_n"),
    (dict(frequency_penalty=float("nan")), "frequency_penalty"), (dict(rep_pen_range=-1), "rep_pen_range"),
    (dict(dry_multiplier=-1.0), "dry_multiplier"), (dict(dry_allowed_length=-1), "dry_allowed_length"),
    (dict(mirostat=3), "mirostat"), (dict(mirostat_tau=-1.0), "mirostat_tau"), (dict(seed=-7), "seed"),
    (dict(logit_bias={-1: 1.0}), "logit_bias"), (dict(logit_bias={1: math.inf}), "logit_bias"),
    (dict(min_keep=-1), "min_keep"), (dict(selection="beam"), "selection"), (dict(top_k=True), "top_k"),
    (dict(samplers="kqp"), "samplers"), (dict(samplers=["top_k", "nope"]), "samplers"),
    (dict(samplers=[0, 9]), "samplers"), (dict(samplers="kz"), "samplers"),
    (dict(kobold_variant="x"), "kobold_variant"),
])
def test_bad_parameters_raise_typed_error(kw, param):
    with pytest.raises(InvalidParameterError) as ei:
        SamplingParams(**kw)
    assert ei.value.param == param
    assert param in str(ei.value)
    assert isinstance(ei.value, SamplerError) and isinstance(ei.value, ValueError)


def test_unknown_sampler_error_type():
    with pytest.raises(UnknownSamplerError):
        SamplingParams(samplers=["top_k", "mystery"])


def test_logit_bias_outside_vocab_and_bad_vocab():
    with pytest.raises(InvalidParameterError) as ei:
        SamplerChain(SamplingParams(logit_bias={10: 1.0}), vocab_size=5)
    assert ei.value.param == "logit_bias"
    with pytest.raises(InvalidParameterError):
        SamplerChain(SamplingParams(), vocab_size=0)
    with pytest.raises(InvalidParameterError) as ei:
        SamplerChain(SamplingParams(dry_multiplier=1.0, samplers="d"), vocab_size=5)  # string breakers, no texts
    assert ei.value.param == "dry_sequence_breakers"


def test_history_token_outside_vocab():
    ch = SamplerChain(SamplingParams(repeat_penalty=1.1, samplers="e"), vocab_size=5)
    with pytest.raises(InvalidParameterError) as ei:
        ch.sample(torch.zeros(1, 5), [[7]])
    assert ei.value.param == "histories"


def test_operator_bad_inputs():
    pr = torch.softmax(torch.randn(2, 10), 1)
    with pytest.raises(InvalidParameterError) as ei:
        sample_from_probs(pr, top_k=[-3, 2], top_p=0.5, seeds=[1, 2])
    assert ei.value.param == "top_k"
    with pytest.raises(InvalidParameterError) as ei:
        sample_from_probs(pr, top_k=2, top_p=[0.5, 1.2], seeds=[1, 2])
    assert ei.value.param == "top_p"
    with pytest.raises(InvalidParameterError) as ei:
        sample_from_probs(pr, top_k=2, top_p=0.5, seeds=[1, 2], mode="beam")
    assert ei.value.param == "mode"
    with pytest.raises(InvalidParameterError) as ei:
        sample_from_probs(pr, top_k=[1, 2], top_p=0.5, seeds=1, mode="shared")
    assert ei.value.param == "top_k"


# ---------------------------------------------------------------- orders
def test_default_order_is_llama_cpp():
    assert SamplingParams().resolved_order() == (
        "logit_bias", "penalties", "dry", "top_n_sigma", "top_k", "typical", "top_p", "min_p", "xtc",
        "temperature", "dist")


def test_letter_name_and_kobold_orders():
    assert SamplingParams(samplers="edskypmxt").resolved_order() == SamplingParams().resolved_order()
    assert SamplingParams(samplers="top_k;top_p;temp").resolved_order() == \
        ("logit_bias", "top_k", "top_p", "temperature", "dist")
    assert SamplingParams(samplers=[6, 0, 1, 3, 4, 2, 5], kobold_variant="koboldcpp").resolved_order()[1:-1] == \
        ("rep_pen_kcpp", "top_k", "top_a", "tfs", "typical", "top_p", "min_p", "temperature")
    assert SamplingParams(samplers=[6, 0, 1, 2, 3, 4, 5], kobold_variant="koboldai").resolved_order()[1:-1] == \
        ("rep_pen", "top_k", "top_a", "top_p", "tfs_kai", "typical", "temperature")
    assert SamplingParams(samplers=["Top-K", "typical_p", "race"]).resolved_order() == \
        ("logit_bias", "top_k", "typical", "race")
    assert SamplingParams(mirostat=2, samplers="kp").resolved_order() == \
        ("logit_bias", "temperature", "mirostat", "dist")


def test_order_matters():
    lg = torch.tensor([[3.0, 2.0, 1.0, 0.0, -1.0]])
    a = SamplerChain(SamplingParams(samplers="tp", temperature=3.0, top_p=0.6), vocab_size=5).filter(lg.clone())
    b = SamplerChain(SamplingParams(samplers="pt", temperature=3.0, top_p=0.6), vocab_size=5).filter(lg.clone())
    assert int(torch.isfinite(a).sum()) > int(torch.isfinite(b).sum())


# ---------------------------------------------------------------- batches
def test_per_row_parameters_equal_single_row_runs():
    rng = np.random.default_rng(0)
    lg = torch.from_numpy(rng.normal(size=(5, 400)).astype(np.float32) * 2)
    hist = [rng.integers(0, 400, size=40).tolist() for _ in range(5)]
    params = [
        SamplingParams(seed=1),
        SamplingParams(top_k=0, top_p=0.8, min_p=0.0, temperature=1.3, seed=2, repeat_penalty=1.2),
        SamplingParams(samplers="kyt", top_k=100, typical_p=0.7, seed=3, dynatemp_range=0.5),
        SamplingParams(samplers=[6, 0, 1, 3, 4, 2, 5], top_a=0.1, tfs_z=0.9, repeat_penalty=1.1, seed=4),
        SamplingParams(top_n_sigma=1.5, xtc_probability=1.0, xtc_threshold=0.05, seed=5, dry_multiplier=0.8,
                       dry_sequence_breakers=[], frequency_penalty=0.3, selection="race"),
    ]
    batch = SamplerChain(params, vocab_size=400)
    singles = [SamplerChain([p], vocab_size=400) for p in params]
    fb = batch.filter(lg.clone(), hist)
    for r, ch in enumerate(singles):
        fs = ch.filter(lg[r:r + 1].clone(), [hist[r]])
        assert torch.equal(torch.isfinite(fb[r]), torch.isfinite(fs[0])), r
        np.testing.assert_allclose(fb[r][torch.isfinite(fb[r])].numpy(), fs[0][torch.isfinite(fs[0])].numpy(),
                                   rtol=1e-5)
    batch = SamplerChain(params, vocab_size=400)
    singles = [SamplerChain([p], vocab_size=400) for p in params]
    for _ in range(5):
        tb = batch.sample(lg.clone(), hist)
        ts = [int(ch.sample(lg[r:r + 1].clone(), [hist[r]])) for r, ch in enumerate(singles)]
        assert tb.tolist() == ts


def test_broadcast_params_give_rows_distinct_seeds():
    ch = SamplerChain(SamplingParams(samplers="", seed=42), vocab_size=50)
    lg = torch.zeros(8, 50)
    toks = torch.stack([ch.sample(lg.clone()) for _ in range(5)])
    assert len({tuple(toks[:, r].tolist()) for r in range(8)}) > 1
    with pytest.raises(SamplerError):
        SamplerChain([SamplingParams()] * 2, vocab_size=50).sample(torch.zeros(3, 50))


def test_mirostat_state_per_row_and_reset():
    V = 200
    lg = torch.from_numpy(-np.log(np.arange(1, V + 1, dtype=np.float32)) * 1.1)[None].expand(2, -1)
    ch = SamplerChain([SamplingParams(mirostat=2, mirostat_tau=3.0, seed=1),
                       SamplingParams(mirostat=1, mirostat_tau=5.0, seed=2)], vocab_size=V)
    assert ch.mu.tolist() == [6.0, 10.0]
    mus = []
    for _ in range(50):
        tok, p = ch.sample(lg.clone(), return_probs=True)
        mus.append(ch.mu.clone())
    assert not torch.equal(mus[0], mus[-1])
    # mu hovers around the level where the observed surprise matches tau
    ch.reset()
    assert ch.mu.tolist() == [6.0, 10.0]


def test_return_probs_match_filter():
    lg = torch.randn(4, 100, generator=torch.Generator().manual_seed(0))
    ch = SamplerChain(SamplingParams(seed=9), vocab_size=100)
    probs = torch.softmax(SamplerChain(SamplingParams(seed=9), vocab_size=100).filter(lg.clone()), 1)
    tok, p = ch.sample(lg.clone(), return_probs=True)
    np.testing.assert_allclose(p.numpy(), probs[torch.arange(4), tok].numpy(), rtol=1e-5)


def test_float16_logits_and_1d_input():
    ch = SamplerChain(SamplingParams(seed=1), vocab_size=10)
    assert ch.sample(torch.randn(1, 10).half()).shape == (1,)
    assert ch.sample(torch.randn(10)).shape == (1,)


def test_token_texts_callable_and_newline_detection():
    texts = ["a", "\n", "b"]
    ch = SamplerChain(SamplingParams(), vocab_size=3, token_texts=lambda i: texts[i])
    assert ch.newline_token_ids == [1]


def test_samplers_package_never_imports_constrained():
    import ast
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2] / "samplers"
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "constrained" for a in node.names), path
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] != "constrained", path


def test_from_dict_aliases():
    p = SamplingParams.from_dict({"rep_pen": 1.1, "rep_pen_range": 320, "tfs": 0.9, "typical": 0.8,
                                  "sampler_order": [6, 0, 1, 3, 4, 2, 5], "sampler_seed": 5, "temp": 0.7,
                                  "penalty_last_n": 32, "typ_p": 0.8})
    assert (p.repeat_penalty, p.rep_pen_range, p.tfs_z, p.typical_p, p.seed, p.temperature, p.repeat_last_n) == \
        (1.1, 320, 0.9, 0.8, 5, 0.7, 32)
    assert p.samplers[0] == "rep_pen_kcpp"
    with pytest.raises(InvalidParameterError) as ei:
        SamplingParams.from_dict({"top_q": 0.5})
    assert ei.value.param == "top_q"
    assert SamplingParams.from_dict({"top_q": 0.5, "top_k": 3}, strict=False).top_k == 3


def test_infill_letter_in_the_chain():
    from samplers.infill import infill
    texts = ["a", "ab", "abc", "x", "y", "<eot>"]
    lg = torch.log(torch.tensor([[0.3, 0.25, 0.05, 0.2, 0.15, 0.05]]))
    ch = SamplerChain(SamplingParams(samplers="ki", top_k=5), vocab_size=6, token_texts=texts, eos_token_ids=[5])
    got = ch.filter(lg.clone())
    top5 = SamplerChain(SamplingParams(samplers="k", top_k=5), vocab_size=6).filter(lg.clone())
    exp = infill(top5, [5], texts)
    assert torch.equal(torch.isfinite(got), torch.isfinite(exp))
    np.testing.assert_allclose(torch.softmax(got, 1).numpy(), torch.softmax(exp, 1).numpy(), atol=1e-6)
    assert SamplingParams(samplers="kpi").resolved_order()[-2] == "infill"
    with pytest.raises(InvalidParameterError):
        SamplerChain(SamplingParams(samplers="ki"), vocab_size=6, token_texts=texts)
