"""Suffix-aware infill with the embedded SmolLM2-135M-Instruct: 30 middles over a JSON Schema, a
Lark grammar (C) and a GBNF grammar (JSON), several seeds. Every middle must end by itself
(finish reason "stop", within the token budget) and make prefix + middle + suffix valid for an
independent judge: jsonschema, Lark's own Earley parser, json.loads. A dead end would raise."""
import json
from pathlib import Path

import pytest

from constrained import Grammar, generate
from constrained.compiler import compile_grammar
from constrained.infill import InfillGrammar

pytestmark = pytest.mark.slow
GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"},
                                           "age": {"type": "integer"},
                                           "city": {"type": "string"}},
          "required": ["name", "age", "city"], "additionalProperties": False}


def _cases():
    lark = pytest.importorskip("lark")
    jsonschema = pytest.importorskip("jsonschema")
    c_parser = lark.Lark((GRAMMARS / "c_subset.lark").read_text(), parser="earley")
    return [
        ("schema", Grammar.from_json_schema(SCHEMA), '{"name": "Ann", "age": ',
         ', "city": "Oslo"}', lambda t: jsonschema.validate(json.loads(t), SCHEMA)),
        ("lark", Grammar.from_file(GRAMMARS / "c_subset.lark"),
         "int add(int a, int b) {\n    return ", ";\n}\n", c_parser.parse),
        ("gbnf", Grammar.from_file(GRAMMARS / "json.gbnf"), '{"items": [1, 2, ',
         '], "done": true}', json.loads),
    ]


def test_smollm2_infills_are_valid_under_three_grammars(smollm2):
    model, tokenizer, vocab = smollm2
    valid = 0
    for name, grammar, prefix, suffix, judge in _cases():
        constraint = InfillGrammar(compile_grammar(grammar, vocab), prefix, suffix)
        for seed in range(10):
            r = generate(model, tokenizer, "Fill in the code:\n" + prefix, grammar=constraint,
                         max_new_tokens=24, seed=seed, sampling={"temperature": 1.0},
                         complete_within_budget=True)
            assert r.finish_reason == "stop", (name, seed, r.text)
            judge(prefix + r.text + suffix)      # raises when the whole text is invalid
            valid += 1
    assert valid == 30
