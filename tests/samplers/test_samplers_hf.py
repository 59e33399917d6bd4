"""Agreement with Hugging Face transformers' logits processors on the samplers both have.

Known boundary differences (see samplers/README.md): HF top-k keeps every token tied with the
k-th (llama.cpp keeps exactly k); HF top-p decides on an ascending cumulative sum (1 - p), so a
cumulative mass landing exactly on p can differ by one token; HF typical keeps through the first
index whose mass reaches the target (>=) where llama.cpp needs strictly more (>). Random float
logits never land on those boundaries, which is what these tests use.
"""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import numpy as np
import pytest
import torch

tf = pytest.importorskip("transformers")
from transformers import GenerationConfig
from transformers.generation.logits_process import (LogitsProcessorList, MinPLogitsWarper,
                                                    RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper,
                                                    TopKLogitsWarper, TopPLogitsWarper, TypicalLogitsWarper)

from samplers import SamplerChain, SamplingParams

V = 300
B = 6


def logits(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, V, generator=g) * 3


def ours(order, lg, hist=None, **kw):
    ch = SamplerChain(SamplingParams(samplers=order, min_keep=1, **kw), vocab_size=V)
    return ch.filter(lg.clone(), hist)


def same(a, b):
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    assert torch.equal(fa, fb), (fa.sum(1), fb.sum(1))
    np.testing.assert_allclose(torch.softmax(a, 1).numpy(), torch.softmax(b, 1).numpy(), atol=1e-6)


IDS = torch.zeros(B, 1, dtype=torch.long)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("t", [0.3, 0.8, 1.7])
def test_temperature(seed, t):
    lg = logits(seed)
    a = ours(["temperature"], lg, temperature=t)
    b = TemperatureLogitsWarper(t)(IDS, lg.clone())
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 7, 40, 299])
def test_top_k(seed, k):
    lg = logits(seed)
    same(ours("k", lg, top_k=k), TopKLogitsWarper(k)(IDS, lg.clone()))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [0.05, 0.5, 0.9, 0.99])
def test_top_p(seed, p):
    lg = logits(seed)
    same(ours("p", lg, top_p=p), TopPLogitsWarper(p)(IDS, lg.clone()))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [0.01, 0.1, 0.5])
def test_min_p(seed, p):
    lg = logits(seed)
    same(ours("m", lg, min_p=p), MinPLogitsWarper(p)(IDS, lg.clone()))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [0.2, 0.5, 0.95])
def test_typical(seed, p):
    lg = logits(seed)
    same(ours("y", lg, typical_p=p), TypicalLogitsWarper(p)(IDS, lg.clone()))


@pytest.mark.parametrize("seed", range(4))
def test_repetition_penalty(seed):
    lg = logits(seed)
    g = torch.Generator().manual_seed(100 + seed)
    hist = torch.randint(0, V, (B, 50), generator=g)
    a = ours("e", lg, hist.tolist(), repeat_penalty=1.3, repeat_last_n=-1)
    b = RepetitionPenaltyLogitsProcessor(1.3)(hist, lg.clone())
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_generation_config_chain(seed):
    cfg = GenerationConfig(do_sample=True, temperature=0.7, top_k=50, top_p=0.9, min_p=0.02, typical_p=0.95,
                           repetition_penalty=1.2)
    lg = logits(seed)
    hist = torch.randint(0, V, (B, 30), generator=torch.Generator().manual_seed(seed))
    hf = LogitsProcessorList([RepetitionPenaltyLogitsProcessor(1.2), TemperatureLogitsWarper(0.7),
                              TopKLogitsWarper(50), TopPLogitsWarper(0.9), MinPLogitsWarper(0.02),
                              TypicalLogitsWarper(0.95)])(hist, lg.clone())
    ch = SamplerChain(SamplingParams.from_generation_config(cfg), vocab_size=V)
    same(ch.filter(lg.clone(), hist.tolist()), hf)


def test_generation_config_greedy_and_unsupported():
    from samplers import InvalidParameterError
    p = SamplingParams.from_generation_config(GenerationConfig(do_sample=False))
    assert p.selection == "greedy"
    lg = logits(0)
    ch = SamplerChain(p, vocab_size=V)
    assert torch.equal(ch.sample(lg.clone()), lg.argmax(1))
    with pytest.raises(InvalidParameterError) as ei:
        SamplingParams.from_generation_config(GenerationConfig(do_sample=True, no_repeat_ngram_size=3))
    assert ei.value.param == "no_repeat_ngram_size"
    p = SamplingParams.from_generation_config({"do_sample": True, "top_k": 5, "temperature": 0.5}, seed=3)
    assert (p.top_k, p.temperature, p.seed) == (5, 0.5, 3)
