"""Data-driven Lark cases: tests/conformance/lark_cases.json.

Each case is {"name", "grammar", "pass": [...], "fail": [...]} (optional "note"). Every "pass"
text must be accepted and every "fail" text rejected both by Lark's Earley parser and by the
reference recognizer under the engine's greedy lexing; every prefix of a "pass" text is viable.
Another runner can load the same cases (``load_cases``) and check the matcher.
"""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import lark_reference  # noqa: E402

CASES_PATH = Path(__file__).resolve().parents[1] / "conformance" / "lark_cases.json"


def load_cases():
    with open(CASES_PATH, encoding="utf-8") as f:
        return json.load(f)


CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_lark_case(case):
    source = case["grammar"]
    g = Grammar.from_lark(source)
    for text in case["pass"]:
        assert lark_reference.lark_accepts(source, text), f"Lark should accept {text!r}"
        assert lark_reference.recognizes(g, text, "greedy"), f"should accept {text!r}"
        for k in range(len(text) + 1):
            assert lark_reference.is_viable_prefix(g, text[:k], "greedy"), text[:k]
    for text in case["fail"]:
        assert not lark_reference.lark_accepts(source, text), f"Lark should reject {text!r}"
        assert not lark_reference.recognizes(g, text, "greedy"), f"should reject {text!r}"
