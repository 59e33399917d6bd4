"""generate(token_healing=True, logprobs=n): runs once the decode loop exposes both options."""
import inspect
import math
import re

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from constrained import Grammar, Vocabulary  # noqa: E402

try:
    from constrained.decoding.loop import generate
except ImportError:  # pragma: no cover - the decode loop is not installed
    generate = None

_PARAMS = inspect.signature(generate).parameters if generate is not None else {}
pytestmark = pytest.mark.skipif(
    not {"token_healing", "logprobs"} <= set(_PARAMS),
    reason="generate() has no token_healing/logprobs options yet")

EXTRA = [b"ab", b"abc", b"://", b":/"]


@pytest.fixture(scope="module")
def tiny_model():
    tokens = [bytes((b,)) for b in range(256)] + [b"</s>"] + EXTRA
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], name="tiny-heal")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=256,
                                   bos_token_id=256, eos_token_id=256, pad_token_id=256)
    return transformers.LlamaForCausalLM(cfg).eval(), vocab


def test_logprobs_align_with_tokens(tiny_model):
    model, vocab = tiny_model
    r = generate(model, vocab, [97, 98], max_new_tokens=5, sampling={"temperature": 0.0},
                 logprobs=3, force_tokens=False)
    assert len(r.token_logprobs) == len(r.token_ids) == len(r.top_logprobs)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([[97, 98]])).logits[0, -1].double()
    first = torch.log_softmax(logits, -1)
    assert r.token_logprobs[0] == pytest.approx(float(first[r.token_ids[0]]), abs=1e-4)
    assert list(r.top_logprobs[0])[0] == r.token_ids[0] and len(r.top_logprobs[0]) == 3


def test_logprobs_are_under_the_grammar_mask(tiny_model):
    model, vocab = tiny_model
    r = generate(model, vocab, [97], grammar=Grammar.from_regex(r"[xy]z"), max_new_tokens=4,
                 logprobs=5, force_tokens=False, seed=0)
    assert set(r.top_logprobs[0]) <= {ord("x"), ord("y")}
    assert math.fsum(math.exp(v) for v in r.top_logprobs[0].values()) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_healing_returns_the_continuation_inside_the_grammar(tiny_model, seed):
    model, vocab = tiny_model
    pattern = r"//[a-c]{1,5}"
    prompt = [ord(c) for c in "go http:"]
    r = generate(model, vocab, prompt, grammar=Grammar.from_regex(pattern), max_new_tokens=8,
                 seed=seed, token_healing=True, sampling={"temperature": 1.0})
    generated = b"".join(vocab.token_bytes[t] for t in r.token_ids)
    assert generated == b":" + r.text.encode()  # ":" was regenerated, and is not returned
    if r.finish_reason == "stop":
        assert re.fullmatch(pattern, r.text)


@pytest.mark.slow
def test_smollm2_generate_heals_the_url():
    from constrained.model.loading import load_model
    model, tokenizer = load_model()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: no spin-waiting when the machine is busy
    try:
        r = generate(model, tokenizer, 'The link is <a href="http:', max_new_tokens=2,
                     sampling={"temperature": 0.0}, token_healing=True, logprobs=2)
    finally:
        torch.set_num_threads(threads)
    assert tokenizer.convert_ids_to_tokens(r.token_ids[:1]) == ["://"]
    assert r.text.startswith("//") and len(r.token_logprobs) == len(r.token_ids)
