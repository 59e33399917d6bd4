"""Token healing through the existing decode loop (generate_healed / HealingGrammar)."""
import re

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from constrained import Grammar, Vocabulary  # noqa: E402
from constrained.decoding import generate_healed  # noqa: E402
from constrained.healing import HealingGrammar  # noqa: E402

EXTRA = [b"ab", b"abc", b"://", b":/", b" {", b' {"', b" [", b" 1"]


@pytest.fixture(scope="module")
def tiny_model():
    tokens = [bytes((b,)) for b in range(256)] + [b"</s>"] + EXTRA
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], name="tiny-heal-loop")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=256,
                                   bos_token_id=256, eos_token_id=256, pad_token_id=256)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield transformers.LlamaForCausalLM(cfg).eval(), vocab
    torch.set_num_threads(threads)


@pytest.mark.parametrize("seed", range(4))
def test_grammar_healing_through_generate(tiny_model, seed):
    model, vocab = tiny_model
    pattern = r"//[a-c]{1,5}"
    prompt = [ord(c) for c in "go http:"]
    r = generate_healed(model, vocab, prompt, grammar=Grammar.from_regex(pattern),
                        max_new_tokens=8, seed=seed, sampling={"temperature": 1.0},
                        complete_within_budget=True)
    generated = b"".join(vocab.token_bytes[t] for t in r.token_ids)
    assert generated == b":" + r.text.encode()  # ":" is regenerated, not returned
    assert r.complete and re.fullmatch(pattern, r.text)


def test_unconstrained_batch_healing(tiny_model):
    model, vocab = tiny_model
    prompts = [[ord(c) for c in "x http:"], [ord(c) for c in "say a"], [ord(c) for c in "q"]]
    results = generate_healed(model, vocab, prompts, max_new_tokens=4, seed=0)
    assert len(results) == 3
    heads = [b":", b"a", b""]
    for r, head in zip(results, heads):
        generated = b"".join(vocab.token_bytes[t] for t in r.token_ids if t != 256)
        assert generated.startswith(head)
        assert generated[len(head):].decode("utf-8", "replace") == r.text


def test_healing_grammar_wrapper(tiny_model):
    _, vocab = tiny_model
    g = HealingGrammar(vocab, b":", None)
    m = g.matcher()
    assert m.remaining == b":" and not m.is_accepting()
    assert m.accept_token(vocab.token_bytes.index(b"://")) and m.is_accepting()


@pytest.mark.slow
def test_smollm2_url_through_generate():
    from constrained.logprobs.completion import default_completer
    completer = default_completer()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        r = generate_healed(completer.model, completer.tokenizer, 'The link is <a href="http:',
                            max_new_tokens=3, sampling={"temperature": 0.0})
    finally:
        torch.set_num_threads(threads)
    assert completer.vocab.token_bytes[r.token_ids[0]] == b"://"
    assert r.text.startswith("//")


@pytest.mark.parametrize("seed", range(3))
def test_json_grammar_healing_through_generate(tiny_model, seed):
    """The continuation after "Output: " is JSON, healed or not (the space is re-chosen)."""
    import json
    from pathlib import Path
    from constrained.decoding.loop import generate
    model, vocab = tiny_model
    path = Path(__file__).resolve().parents[2] / "grammars" / "json.lark"
    grammar = Grammar.from_file(path)
    prompt = [ord(c) for c in "Output: "]
    from constrained import compile_grammar
    from constrained.healing import TokenHealer
    plan = TokenHealer(vocab).prepare(prompt, compile_grammar(grammar, vocab).matcher())
    assert plan.prefix_bytes == b" "  # " {", " [", " 1" may now start the value
    for gen in (generate_healed, generate):
        r = gen(model, vocab, prompt, grammar=grammar, max_new_tokens=16, seed=seed,
                sampling={"temperature": 1.0}, complete_within_budget=True)
        assert r.complete
        json.loads(r.text)
