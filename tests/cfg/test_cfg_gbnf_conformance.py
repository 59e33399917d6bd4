"""GBNF conformance cases (tests/conformance/gbnf_cases.json) through the CFG matcher."""
import json
from pathlib import Path

import pytest

from constrained.cfg import compile_cfg
from constrained.grammar import Grammar
from constrained.vocabulary import Vocabulary

CASES = json.loads((Path(__file__).resolve().parents[1] / "conformance" /
                    "gbnf_cases.json").read_text(encoding="utf-8"))
VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"],
                                    eos_token_ids=[256])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_gbnf_case(case):
    grammar = Grammar.from_gbnf(case["grammar"])
    if grammar.regex is not None:   # a single-terminal grammar: still run it as a CFG
        pass
    compiled = compile_cfg(grammar, VOCAB)
    for text in case["pass"]:
        m = compiled.matcher()
        data = text.encode("utf-8")
        for i, b in enumerate(data):   # every prefix viable: byte by byte
            assert m.accept_token(b), (case["name"], text, i)
        assert m.is_accepting(), (case["name"], text)
        assert m.accept_token(256)
    for text in case["fail"]:
        m = compiled.matcher()
        assert not (m.accept_string(text) and m.is_accepting()), (case["name"], text)
