"""Data-driven GBNF conformance: tests/conformance/gbnf_cases.json against the reference recognizer.

Each case is {"name", "grammar", "pass": [...], "fail": [...]} (optional "note"): every "pass"
text is a complete sentence, every "fail" text is not, and every prefix of a "pass" text is
viable. Another runner can load the same cases (``load_cases``) and check the matcher.
"""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import gbnf_reference  # noqa: E402

CASES_PATH = Path(__file__).resolve().parents[1] / "conformance" / "gbnf_cases.json"


def load_cases():
    with open(CASES_PATH, encoding="utf-8") as f:
        return json.load(f)


CASES = load_cases()


def test_cases_are_well_formed():
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    for c in CASES:
        assert set(c) <= {"name", "grammar", "pass", "fail", "note"}
        assert c["pass"] and isinstance(c["fail"], list)
        assert not set(c["pass"]) & set(c["fail"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reference_recognizer(case):
    g = Grammar.from_gbnf(case["grammar"])
    for text in case["pass"]:
        assert gbnf_reference.recognizes(g, text), f"should accept {text!r}"
        for k in range(len(text) + 1):
            assert gbnf_reference.is_viable_prefix(g, text[:k]), f"prefix {text[:k]!r}"
    for text in case["fail"]:
        assert not gbnf_reference.recognizes(g, text), f"should reject {text!r}"
