"""The decode loop with the embedded SmolLM2-135M-Instruct: few, short generations."""
import json
import re
from pathlib import Path

import pytest
import torch

from constrained import Grammar, generate, stream
from constrained.compiler import compile_grammar
from constrained.decoding import GrammarLogitsProcessor

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "grammars" / "person.schema.json").read_text())
REGEX = r"(red|green|blue) [0-9]{1,3}"

pytestmark = pytest.mark.slow


def _grammars():
    out = {"regex": Grammar.from_regex(REGEX),
           "json": Grammar.from_file(ROOT / "grammars" / "json.lark"),
           "arithmetic": Grammar.from_file(ROOT / "grammars" / "arithmetic.lark"),
           "c": Grammar.from_file(ROOT / "grammars" / "c_subset.lark"),
           "schema": Grammar.from_json_schema(SCHEMA)}
    return out


def _check(name, text):
    if name == "regex":
        assert re.fullmatch(REGEX, text), text
    elif name == "json":
        json.loads(text)
    elif name in ("arithmetic", "c"):
        import lark
        file = "arithmetic.lark" if name == "arithmetic" else "c_subset.lark"
        lark.Lark((ROOT / "grammars" / file).read_text(), parser="earley").parse(text)
    else:
        doc = json.loads(text)
        import jsonschema
        jsonschema.validate(doc, SCHEMA)


@pytest.mark.parametrize("temperature", [1.0, 3.0])
def test_decoding_smollm2_sampled_outputs_parse(smollm2, temperature):
    model, tokenizer, vocab = smollm2
    grammars = _grammars()
    if temperature > 1:  # the JSON and schema runs are the long ones: once is enough
        grammars.pop("schema", None)
        grammars.pop("json", None)
    names = list(grammars)
    prompts = {"regex": "Name a colour and a number.", "json": "Give me a small JSON object.",
               "arithmetic": "Write an arithmetic expression.",
               "c": "Write a tiny C function that adds two ints.",
               "schema": "Describe a person as JSON."}
    results = generate(model, tokenizer, [prompts[n] for n in names], chat=True,
                       grammar=[grammars[n] for n in names],
                       sampling={"temperature": temperature, "top_k": 0, "top_p": 1.0,
                                 "min_p": 0.0},
                       seed=[7] * len(names), max_new_tokens=40 if "schema" in names else 12,
                       complete_within_budget=True)
    for name, r in zip(names, results):
        assert r.finish_reason == "stop" and r.complete, (name, r.text)
        _check(name, r.text)
        assert tokenizer.decode(r.token_ids) == r.text


def test_decoding_smollm2_tight_budget_completes(smollm2):
    model, tokenizer, vocab = smollm2
    g = Grammar.from_file(ROOT / "grammars" / "json.lark")
    r = generate(model, tokenizer, "Give me a JSON list of three fruits.", chat=True,
                 grammar=g, sampling={"temperature": 1.0}, seed=1, max_new_tokens=8,
                 complete_within_budget=True)
    assert r.finish_reason == "stop" and r.n_tokens + 1 <= 8
    json.loads(r.text)


TASK = {"type": "object", "properties": {
    "title": {"type": "string"}, "priority": {"type": "integer", "minimum": 1, "maximum": 5},
    "labels": {"type": "array", "items": {"type": "string"}}},
    "required": ["title", "priority", "labels"]}


def test_decoding_smollm2_budget_from_the_shortest_completion(smollm2):
    """Budgets from the shortest completion the planner finds (plus the end token) upwards:
    every run stops by itself within the budget with a valid document; one token less is
    refused before decoding."""
    jsonschema = pytest.importorskip("jsonschema")
    from constrained.decoding.budget import CompletionPlanner
    from constrained.decoding.byte_tokens import ByteTokenizer
    from constrained.errors import BudgetError
    model, tokenizer, vocab = smollm2
    compiled = compile_grammar(Grammar.from_json_schema(TASK), vocab)
    shortest = len(CompletionPlanner(ByteTokenizer.of(vocab)).plan(compiled.matcher())) + 1
    assert shortest <= 14
    for slack in (0, 1, 3, 8):
        r = generate(model, tokenizer, "Write a task as JSON.", chat=True, grammar=compiled,
                     seed=slack, max_new_tokens=shortest + slack, complete_within_budget=True)
        assert r.finish_reason == "stop" and r.n_tokens <= shortest + slack, r
        jsonschema.validate(json.loads(r.text), TASK)
    with pytest.raises(BudgetError, match="max_new_tokens"):
        generate(model, tokenizer, "Write a task as JSON.", chat=True, grammar=compiled,
                 max_new_tokens=shortest - 1, complete_within_budget=True)


def test_decoding_smollm2_batch_equals_single(smollm2):
    model, tokenizer, vocab = smollm2
    gs = [Grammar.from_regex(REGEX), Grammar.from_file(ROOT / "grammars" / "json.lark")]
    prompts = ["Name a colour and a number.", "Write a JSON array of two small numbers please."]
    kw = dict(chat=True, sampling={"temperature": 1.0}, max_new_tokens=6)
    batch = generate(model, tokenizer, prompts, grammar=gs, seed=[3, 4], **kw)
    for p, g, s, got in zip(prompts, gs, [3, 4], batch):
        alone = generate(model, tokenizer, p, grammar=g, seed=s, **kw)
        assert got.token_ids == alone.token_ids and got.text == alone.text


def test_decoding_smollm2_processor_agrees_with_loop(smollm2):
    model, tokenizer, vocab = smollm2
    cg = compile_grammar(Grammar.from_file(ROOT / "grammars" / "json.lark"), vocab)
    prompt = "Give me a JSON object with a name."
    loop = generate(model, tokenizer, prompt, grammar=cg, sampling={"temperature": 0.0},
                    max_new_tokens=8, force_tokens=False)
    ids = torch.tensor([tokenizer(prompt)["input_ids"]])
    out = model.generate(ids, attention_mask=torch.ones_like(ids),
                         logits_processor=[GrammarLogitsProcessor(cg)], do_sample=False,
                         max_new_tokens=8, pad_token_id=tokenizer.pad_token_id)
    got = [t for t in out[0, ids.shape[1]:].tolist() if t not in vocab.eos_token_ids]
    assert got == loop.token_ids


def test_decoding_smollm2_stream_joins_and_keeps_characters(smollm2):
    model, tokenizer, vocab = smollm2
    g = Grammar.from_regex(r"(café|naïve|über|日本|😀)( (café|naïve|über|日本|😀)){2,4}")
    s = stream(model, tokenizer, "Say some words.", chat=True, grammar=g,
               sampling={"temperature": 1.0}, seed=2, max_new_tokens=16,
               complete_within_budget=True)
    pieces = list(s)
    assert "".join(pieces) == s.result.text and s.result.finish_reason == "stop"
    assert all("\ufffd" not in p for p in pieces)
