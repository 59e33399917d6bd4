"""The completion function over generate(logprobs=n), and recovery through it (runs once the
decode loop records logprobs)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from constrained import Vocabulary  # noqa: E402
from constrained.logprobs import recover_k_per_call  # noqa: E402
from constrained.logprobs.over_generate import (complete_with_generate,  # noqa: E402
                                                generate_has_logprobs, generate_oracle)

pytestmark = pytest.mark.skipif(not generate_has_logprobs(),
                                reason="generate() does not record logprobs yet")


@pytest.fixture(scope="module")
def tiny():
    tokens = [bytes((b,)) for b in range(256)] + [b"</s>"]
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], name="tiny-logprobs")
    torch.manual_seed(1)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=128,
                                   bos_token_id=256, eos_token_id=256, pad_token_id=256)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield transformers.LlamaForCausalLM(cfg).eval(), vocab
    torch.set_num_threads(threads)


def _truth(model, ids):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, -1].double()
    return torch.log_softmax(logits, -1).numpy()


def test_completion_over_generate_reports_biased_logprobs(tiny):
    model, vocab = tiny
    prompt = [104, 105]
    truth = _truth(model, prompt)
    c = complete_with_generate(model, vocab, prompt, max_tokens=1, top_logprobs=4)
    assert c.token_ids[0] == int(np.argmax(truth))
    assert c.token_logprobs[0] == pytest.approx(truth[c.token_ids[0]], abs=1e-4)
    biased = complete_with_generate(model, vocab, prompt, max_tokens=1, top_logprobs=2,
                                    logit_bias={"7": 50.0})
    assert biased.token_ids[0] == 7 and biased.token_logprobs[0] > -1e-3
    assert c.to_openai()["choices"][0]["logprobs"]["top_logprobs_ids"][0] == c.top_logprobs[0]


def test_recovery_through_generate_on_a_subset(tiny):
    model, vocab = tiny
    prompt = [104, 105]
    truth = _truth(model, prompt)
    subset = list(range(40, 70))
    k = 6
    rec = recover_k_per_call(generate_oracle(model, vocab, prompt, k), vocab.size, k,
                             token_ids=subset)
    assert np.abs(rec.logprobs[subset] - truth[subset]).max() < 1e-4
    assert rec.calls <= 1 + math.ceil(len(subset) / (k - 1)) + 2
