"""A MaskBench subset (real-world schemas) against the converter, with the exact oracle.

Invalid instances of compiled schemas must all be rejected; valid ones accepted, except the
few whose object keys are out of schema order (the converter produces schema order).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from constrained.errors import LimitExceededError, UnsupportedSchemaError
from constrained.json_schema import schema_to_grammar
from json_schema_lark_oracle import EarleyOracle

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "maskbench-dev"


def _sample(step: int = 19) -> list[str]:
    if not DATA.is_dir():
        return []
    return [p.name for p in sorted(DATA.glob("*.json"))[::step]]


@pytest.mark.parametrize("name", _sample())
def test_json_schema_maskbench_file(name):
    doc = json.loads((DATA / name).read_text())
    try:
        oracle = EarleyOracle(schema_to_grammar(doc["schema"]))
    except (UnsupportedSchemaError, LimitExceededError):
        pytest.skip("schema refused (counts as a compile error)")
    for test in doc["tests"]:
        text = json.dumps(test["data"])
        if len(text) > 3000:
            continue  # the pure-Python oracle is slow on long documents
        accepted = oracle.accepts(text)
        if not test["valid"]:
            assert not accepted, text[:200]
        else:
            assert accepted, text[:200]
