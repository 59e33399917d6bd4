"""Grammar-constrained infill through the decode loop (generate) on a tiny random Llama."""
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from constrained import Grammar, Vocabulary, compile_grammar  # noqa: E402
from constrained.infill import InfillGrammar, build_fim_prompt, detect_fim_tokens  # noqa: E402

try:
    from constrained.decoding.loop import generate
except ImportError:  # pragma: no cover - the decode loop is not installed
    generate = None
pytestmark = pytest.mark.skipif(generate is None, reason="no decode loop")

SPECIALS = [b"<|endoftext|>", b"<fim_prefix>", b"<fim_middle>", b"<fim_suffix>", b"<fim_pad>"]
EXTRA = [b'{"', b'": ', b", ", b"12", b"]}", b"true"]
GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"


@pytest.fixture(scope="module")
def tiny_fim():
    tokens = [bytes((b,)) for b in range(256)] + EXTRA + SPECIALS
    eos = 256 + len(EXTRA)
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[eos],
                                        special_token_ids=range(eos, len(tokens)),
                                        name="tiny-fim")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=512,
                                   bos_token_id=eos, eos_token_id=eos, pad_token_id=eos)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield transformers.LlamaForCausalLM(cfg).eval(), vocab
    torch.set_num_threads(threads)


@pytest.mark.parametrize("prefix,suffix", [('{"a": [1', '], "b": true}'), ('{"k": ', '}'),
                                           ('[', ', 3]')])
def test_json_infill_through_generate(tiny_fim, prefix, suffix):
    model, vocab = tiny_fim
    fim = detect_fim_tokens(vocab)
    compiled = compile_grammar(Grammar.from_file(GRAMMARS / "json.lark"), vocab)
    grammar = InfillGrammar(compiled, prefix, suffix)
    prompt = build_fim_prompt(list(prefix.encode()), list(suffix.encode()), fim).ids
    for seed in range(3):
        r = generate(model, vocab, prompt, grammar=grammar, max_new_tokens=12, seed=seed,
                     sampling={"temperature": 1.0}, complete_within_budget=True)
        assert r.complete and r.finish_reason == "stop", r
        json.loads(prefix + r.text + suffix)
