"""The sampler chain against llama.cpp's own samplers (llama-cpp-python's sampler API): for random
logits and parameters, every sampler alone and llama.cpp's default chain keep the same tokens
with the same logits as samplers.SamplerChain.filter."""
import ctypes
import random

import numpy as np
import pytest
import torch

llama_cpp = pytest.importorskip("llama_cpp")

from samplers import SamplerChain, SamplingParams  # noqa: E402

V = 400
OFF = dict(top_k=0, top_p=1.0, min_p=0.0, temperature=1.0, typical_p=1.0, xtc_probability=0.0,
           top_n_sigma=-1.0, repeat_penalty=1.0, seed=1)


def _llama_filter(logits: np.ndarray, stages) -> dict[int, float]:
    data = (llama_cpp.llama_token_data * len(logits))()
    for i, value in enumerate(logits):
        data[i].id, data[i].logit, data[i].p = i, float(value), 0.0
    cur = llama_cpp.llama_token_data_array(data=data, size=len(logits), selected=-1,
                                          sorted=False)
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    for stage in stages:
        llama_cpp.llama_sampler_chain_add(chain, stage)
    llama_cpp.llama_sampler_apply(chain, ctypes.byref(cur))
    # samplers may move the data pointer (XTC) or set logits to -inf (top-n-sigma)
    kept = {int(cur.data[j].id): float(cur.data[j].logit) for j in range(cur.size)
            if np.isfinite(cur.data[j].logit)}
    llama_cpp.llama_sampler_free(chain)
    return kept


def _ours(logits: np.ndarray, **params) -> dict[int, float]:
    chain = SamplerChain(SamplingParams(**{**OFF, **params}), vocab_size=len(logits))
    out = chain.filter(torch.tensor(logits[None, :], dtype=torch.float32))[0]
    keep = torch.isfinite(out).nonzero().flatten().tolist()
    return {int(i): float(out[i]) for i in keep}


def _cases(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        scale = rng.choice([0.5, 1.0, 2.0, 4.0])
        logits = np.asarray(np.random.default_rng(rng.randrange(10**9)).normal(0, scale, V),
                            dtype=np.float32)
        yield rng, logits


SINGLE = {
    "top_k": (lambda r: {"top_k": r.randint(1, 60)},
              lambda p: [llama_cpp.llama_sampler_init_top_k(p["top_k"])]),
    "top_p": (lambda r: {"top_p": r.uniform(0.05, 0.99)},
              lambda p: [llama_cpp.llama_sampler_init_top_p(p["top_p"], 1)]),
    "min_p": (lambda r: {"min_p": r.uniform(0.01, 0.5)},
              lambda p: [llama_cpp.llama_sampler_init_min_p(p["min_p"], 1)]),
    "typical": (lambda r: {"typical_p": r.uniform(0.1, 0.99)},
                lambda p: [llama_cpp.llama_sampler_init_typical(p["typical_p"], 1)]),
    "temperature": (lambda r: {"temperature": r.uniform(0.2, 2.5)},
                    lambda p: [llama_cpp.llama_sampler_init_temp(p["temperature"])]),
    "top_n_sigma": (lambda r: {"top_n_sigma": r.uniform(0.3, 3.0)},
                    lambda p: [llama_cpp.llama_sampler_init_top_n_sigma(p["top_n_sigma"])]),
    "xtc": (lambda r: {"xtc_probability": 1.0, "xtc_threshold": r.uniform(0.01, 0.4)},
            lambda p: [llama_cpp.llama_sampler_init_xtc(1.0, p["xtc_threshold"], 1, 7)]),
}


def _same(ours: dict, theirs: dict) -> None:
    assert set(ours) == set(theirs)
    for t, value in theirs.items():
        assert ours[t] == pytest.approx(value, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_each_sampler_alone_keeps_what_llama_cpp_keeps(name):
    make_params, make_stages = SINGLE[name]
    for rng, logits in _cases(60, hash(name) % 1000):
        params = make_params(rng)
        _same(_ours(logits, **params), _llama_filter(logits, make_stages(params)))


def test_the_default_chain_keeps_what_llama_cpp_keeps():
    """top_n_sigma, top_k, typical, top_p, min_p, xtc, temperature: llama.cpp's order."""
    for rng, logits in _cases(80, 5):
        p = {"top_k": rng.randint(5, 120), "typical_p": rng.choice([1.0, rng.uniform(0.5, 1)]),
             "top_p": rng.uniform(0.5, 1.0), "min_p": rng.uniform(0.0, 0.2),
             "temperature": rng.uniform(0.3, 1.8)}
        stages = [llama_cpp.llama_sampler_init_top_k(p["top_k"]),
                  llama_cpp.llama_sampler_init_typical(p["typical_p"], 1),
                  llama_cpp.llama_sampler_init_top_p(p["top_p"], 1),
                  llama_cpp.llama_sampler_init_min_p(p["min_p"], 1),
                  llama_cpp.llama_sampler_init_temp(p["temperature"])]
        _same(_ours(logits, **p), _llama_filter(logits, stages))
