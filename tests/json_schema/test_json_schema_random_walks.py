"""Random walks on 200 real-world schemas (MaskBench): uniform choices among the allowed tokens,
then the completion planner to an end; every output is JSON that validates against its schema
(jsonschema), ending only where EOS was allowed. The vocabulary is every byte plus tokens that
span several JSON tokens and characters (quick masks; llama3 runs in the MaskBench runner)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest

from constrained import ConstrainedError, Grammar, Vocabulary, compile_grammar
from constrained.decoding.budget import CompletionPlanner
from constrained.decoding.byte_tokens import ByteTokenizer
from walks import random_walk

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "maskbench-dev"
N_SCHEMAS = 200
_MULTI = [b'": "', b'", "', b'{"', b'"}', b'"]', b'["', b'},{', b'": {', b'":', b', ', b'true',
          b'false', b'null', b'0.5', b'-1', b'e+', b'\\n', b'\\u00e9', "é".encode(),
          "中文".encode(), "😀".encode(), b'http://', b'@example.com', b'2024-01-', b'T12:']
VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + _MULTI + [b"<eos>"],
                                    eos_token_ids=[256 + len(_MULTI)])


def _schemas():
    out = []
    for path in sorted(DATA.glob("*.json")):
        schema = json.loads(path.read_text())["schema"]
        try:
            grammar = Grammar.from_json_schema(schema)
        except ConstrainedError:
            continue                      # refused: counted by the MaskBench runner
        out.append((path.name, schema, grammar))
        if len(out) == N_SCHEMAS:
            break
    return out


def test_random_walk_outputs_validate_on_200_schemas():
    vocab = VOCAB
    planner = CompletionPlanner(ByteTokenizer.of(vocab))
    rng = random.Random(11)
    schemas = _schemas()
    assert len(schemas) == N_SCHEMAS
    unfinished = []
    for name, schema, grammar in schemas:
        cg = compile_grammar(grammar, vocab)
        out = random_walk(cg.matcher(), vocab, planner, rng, rng.choice([3, 10, 25]))
        if out is None:
            unfinished.append(name)
            continue
        jsonschema.validate(json.loads(out.decode("utf-8")), schema)
    # the planner's search is bounded: a walk it cannot end is listed, never counted as valid
    # (on this sample it ends 199 of the 200)
    assert len(unfinished) <= 2, unfinished
