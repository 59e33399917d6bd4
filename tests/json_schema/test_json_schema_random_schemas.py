"""Random schemas (random_schemas.py) against jsonschema: schemas nobody tuned the converter on.

Grammar level: random instances are accepted by the converted grammar (an independent Earley
recognizer) exactly when jsonschema validates them. Engine level: random walks over the masks
of a small vocabulary end, through the completion planner, in documents jsonschema validates.
Refusals are counted and bounded: they must stay typed and rare.
"""
from __future__ import annotations

import json
import random

import jsonschema
import pytest

from constrained import Vocabulary, compile_grammar
from constrained.decoding.budget import CompletionPlanner
from constrained.decoding.byte_tokens import ByteTokenizer
from constrained.errors import EmptyLanguageError, LimitExceededError, UnsupportedSchemaError
from constrained.grammar.json_schema import schema_to_grammar
from json_schema_lark_oracle import EarleyOracle
from random_schemas import random_schema, random_value
from walks import random_walk


def _converted(seed: int, n: int, **options):
    rng = random.Random(seed)
    out, refused = [], 0
    for _ in range(n):
        schema = random_schema(rng)
        try:
            out.append((schema, schema_to_grammar(schema, **options)))
        except EmptyLanguageError:            # no instance at all: None stands for it
            out.append((schema, None))
        except (UnsupportedSchemaError, LimitExceededError) as e:
            assert e.args and str(e)
            refused += 1
    return out, refused, rng


@pytest.mark.parametrize("seed", [101, 202, 303])
def test_random_schemas_match_jsonschema(seed):
    converted, refused, rng = _converted(seed, 150, property_order="any",
                                         integer_spelling="any")
    assert refused <= 0.15 * 150, refused
    wrong = []
    for schema, grammar in converted:
        oracle = None if grammar is None else EarleyOracle(grammar)
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(50):
            value = random_value(rng)
            accepted = oracle is not None and oracle.accepts(json.dumps(value,
                                                                         ensure_ascii=False))
            if accepted != validator.is_valid(value):
                wrong.append((json.dumps(schema), json.dumps(value)))
                break
    assert not wrong, wrong[:3]


_MULTI = [b'": "', b'", "', b'{"', b'"}', b'"]', b'["', b'": {', b', ', b'true', b'false',
          b'null', b'0.5', b'-1', b'ab', "é".encode()]
VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + _MULTI + [b"<eos>"],
                                    eos_token_ids=[256 + len(_MULTI)])


@pytest.mark.slow
def test_random_walks_on_random_schemas_validate():
    converted, _, rng = _converted(404, 80)
    planner = CompletionPlanner(ByteTokenizer.of(VOCAB))
    walked = unfinished = 0
    for schema, grammar in converted:
        try:
            if grammar is None:
                raise EmptyLanguageError("no instance")
            m = compile_grammar(grammar, VOCAB).matcher()
        except EmptyLanguageError:      # no instance at all: nothing to walk
            assert not any(jsonschema.Draft202012Validator(schema).is_valid(random_value(rng))
                           for _ in range(50))
            continue
        out = random_walk(m, VOCAB, planner, rng, rng.choice([2, 6, 15]))
        if out is None:
            unfinished += 1
            continue
        jsonschema.validate(json.loads(out.decode("utf-8")), schema)
        walked += 1
    assert walked >= 60 and unfinished <= 3, (walked, unfinished)
