"""The llama.cpp runtime (llama-cpp-python) under the decode loop, with the embedded SmolLM2
GGUF file loaded directly: JSON Schema and Lark outputs valid for their judges, batches of
prompts in one context, forced tokens, budgets and healing."""
import json
from pathlib import Path

import pytest

from constrained import Grammar, generate

jsonschema = pytest.importorskip("jsonschema")
lark = pytest.importorskip("lark")
pytest.importorskip("llama_cpp")

GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"
SCHEMA = json.loads((GRAMMARS / "person.schema.json").read_text())
ASK = [{"role": "user", "content": "Invent a person as JSON."}]


@pytest.fixture(scope="module")
def llamacpp():
    from constrained.model import load_model
    model, tokenizer = load_model("smollm2", runtime="llama.cpp", n_ctx=4096, max_rows=8)
    return model, tokenizer


def test_json_schema_outputs_validate(llamacpp):
    model, tokenizer = llamacpp
    for seed in range(3):
        r = generate(model, tokenizer, ASK, grammar=Grammar.from_json_schema(SCHEMA), seed=seed,
                     max_new_tokens=200, complete_within_budget=True,
                     sampling={"temperature": 0.8})
        assert r.finish_reason == "stop", r.text
        jsonschema.validate(json.loads(r.text), SCHEMA)
        assert r.forced_tokens > 0       # key names fed to llama.cpp without sampling


def test_lark_outputs_parse_in_a_batch(llamacpp):
    model, tokenizer = llamacpp
    text = (GRAMMARS / "c_subset.lark").read_text()
    parser = lark.Lark(text, parser="earley")
    prompts = ["int add(int a, int b) {", "Write a C function:", "int main(void) {"]
    results = generate(model, tokenizer, prompts, grammar=Grammar.from_lark(text), seed=3,
                       max_new_tokens=60, complete_within_budget=True,
                       sampling={"temperature": 0.7})
    for r in results:
        assert r.finish_reason == "stop", r.text
        parser.parse(r.text)


def test_batch_rows_decode_what_they_decode_alone(llamacpp):
    """Sequences in one llama.cpp context do not see each other (greedy, same tokens)."""
    model, tokenizer = llamacpp
    prompts = ["Once upon a time", "The capital of France is", "def fib(n):"]
    together = generate(model, tokenizer, prompts, max_new_tokens=10,
                        sampling={"temperature": 0.0})
    for prompt, got in zip(prompts, together):
        alone = generate(model, tokenizer, prompt, max_new_tokens=10,
                         sampling={"temperature": 0.0})
        assert got.token_ids == alone.token_ids


def test_healing_and_regex(llamacpp):
    model, tokenizer = llamacpp
    pattern = r" (19|20)[0-9]{2}\."
    r = generate(model, tokenizer, "The war ended in the year", grammar=Grammar.from_regex(
        pattern), seed=0, max_new_tokens=8, token_healing=True)
    import re
    assert re.fullmatch(pattern, r.text) and r.finish_reason == "stop"
