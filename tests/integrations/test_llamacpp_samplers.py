"""The sampler chain against llama.cpp's own samplers (llama-cpp-python's sampler API): for random
logits and parameters, every sampler alone and llama.cpp's default chain keep the same tokens
with the same logits as samplers.SamplerChain.filter."""
import ctypes
import random
import zlib

import numpy as np
import pytest
import torch

llama_cpp = pytest.importorskip("llama_cpp")

from samplers import SamplerChain, SamplingParams  # noqa: E402

V = 400
OFF = dict(top_k=0, top_p=1.0, min_p=0.0, temperature=1.0, typical_p=1.0, xtc_probability=0.0,
           top_n_sigma=-1.0, repeat_penalty=1.0, seed=1)


def _llama_run(logits: np.ndarray, stages, history=()):
    """llama.cpp's token array after a chain of ``stages`` that accepted ``history``."""
    data = (llama_cpp.llama_token_data * len(logits))()
    for i, value in enumerate(logits):
        data[i].id, data[i].logit, data[i].p = i, float(value), 0.0
    cur = llama_cpp.llama_token_data_array(data=data, size=len(logits), selected=-1,
                                          sorted=False)
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    for stage in stages:
        llama_cpp.llama_sampler_chain_add(chain, stage)
    for t in history:
        llama_cpp.llama_sampler_accept(chain, t)
    llama_cpp.llama_sampler_apply(chain, ctypes.byref(cur))
    # samplers may move the data pointer (XTC) or set logits to -inf (top-n-sigma)
    out = [(int(cur.data[j].id), float(cur.data[j].logit)) for j in range(cur.size)]
    llama_cpp.llama_sampler_free(chain)
    return out


def _llama_filter(logits: np.ndarray, stages) -> dict[int, float]:
    return {t: v for t, v in _llama_run(logits, stages) if np.isfinite(v)}


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
    for rng, logits in _cases(60, zlib.crc32(name.encode()) % 1000):
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


def _llama_apply(logits: np.ndarray, stage, history) -> np.ndarray:
    """Logits after one llama.cpp sampler that has accepted ``history`` (penalties, DRY)."""
    out = np.full(len(logits), -np.inf, dtype=np.float64)
    for t, v in _llama_run(logits, [stage], history):
        out[t] = v
    return out


def _ours_with_history(logits: np.ndarray, history, token_texts=None, **params) -> np.ndarray:
    chain = SamplerChain(SamplingParams(**{**OFF, **params}), vocab_size=len(logits),
                         token_texts=token_texts)
    return chain.filter(torch.tensor(logits[None, :], dtype=torch.float32),
                        histories=[history])[0].double().numpy()


def test_repetition_penalties_equal_llama_cpp():
    """repeat (divide positive logits, multiply negative), frequency and presence penalties
    over the last n tokens: 60 random histories and parameter sets."""
    rng = random.Random(11)
    for k in range(60):
        logits = np.random.default_rng(k).normal(0, 2, V).astype(np.float32)
        history = [rng.randrange(40) for _ in range(rng.randint(0, 90))]
        p = dict(repeat_penalty=rng.uniform(1.0, 2.0), frequency_penalty=rng.uniform(0, 1),
                 presence_penalty=rng.uniform(0, 1), repeat_last_n=rng.randint(1, 64))
        # this llama-cpp-python's binding takes the vocabulary size first
        stage = llama_cpp.llama_sampler_init_penalties(
            V, p["repeat_last_n"], p["repeat_penalty"], p["frequency_penalty"],
            p["presence_penalty"])
        np.testing.assert_allclose(_ours_with_history(logits, history, **p),
                                   _llama_apply(logits, stage, history), rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def smollm2_vocab():
    """llama.cpp's vocabulary of the embedded SmolLM2 GGUF (loaded without weights) and every
    token's text as llama.cpp renders it."""
    from constrained.model.loading import default_gguf_path
    from constrained.runtimes.llamacpp import _lib
    lib = _lib()
    params = lib.llama_model_default_params()
    params.vocab_only = True
    model = lib.llama_model_load_from_file(str(default_gguf_path()).encode(), params)
    if not model:
        pytest.skip("the SmolLM2 GGUF could not be loaded")
    vocab = lib.llama_model_get_vocab(model)
    n = int(lib.llama_vocab_n_tokens(vocab))
    buf = ctypes.create_string_buffer(512)
    texts = []
    for t in range(n):
        size = lib.llama_token_to_piece(vocab, t, buf, 512, 0, True)
        texts.append(buf.raw[:max(size, 0)])
    yield vocab, texts
    lib.llama_model_free(model)


def test_dry_equals_llama_cpp(smollm2_vocab):
    """DRY on SmolLM2's real vocabulary: histories that repeat a phrase (with sequence breakers
    between), 60 random parameter sets. (llama.cpp's sampler takes a window of n >= 0 tokens;
    its front-ends turn -1 into the context size, which is what -1 means here.)"""
    vocab, texts = smollm2_vocab
    n = len(texts)
    breakers = ["\n", ":", "\"", "*"]
    c_breakers = (ctypes.c_char_p * len(breakers))(*[b.encode() for b in breakers])
    words = [t for t in range(300, 4000) if texts[t].strip()
             and not any(b.encode() in texts[t] for b in breakers)][:60]
    stops = [t for t in range(n) if texts[t] in (b"\n", b":")]
    rng = random.Random(5)
    penalized = 0
    for k in range(60):
        logits = np.random.default_rng(100 + k).normal(0, 2, n).astype(np.float32)
        phrase = [rng.choice(words) for _ in range(rng.randint(2, 6))]
        history = []
        for _ in range(rng.randint(2, 5)):
            history += phrase + [rng.choice(words + stops) for _ in range(rng.randint(0, 3))]
        history += phrase[:rng.randint(1, len(phrase))]
        p = dict(dry_multiplier=rng.uniform(0.2, 2.0), dry_base=rng.uniform(1.1, 2.5),
                 dry_allowed_length=rng.randint(1, 3),
                 dry_penalty_last_n=rng.choice([8, 20, 64, 200]), dry_sequence_breakers=breakers)
        stage = llama_cpp.llama_sampler_init_dry(vocab, p["dry_multiplier"], p["dry_base"],
                                                 p["dry_allowed_length"],
                                                 p["dry_penalty_last_n"], c_breakers,
                                                 len(breakers))
        theirs = _llama_apply(logits, stage, history)
        np.testing.assert_allclose(_ours_with_history(logits, history, texts, **p), theirs,
                                   rtol=1e-4, atol=1e-4)
        penalized += int((theirs < logits - 1e-6).any())
    assert penalized >= 30      # the histories do trigger DRY
