"""Every grammar shipped in grammars/ loads, and its sample documents are judged correctly.

Samples live in tests/grammars_samples/<grammar>/{valid,invalid}/*.txt and serve both the .lark
and the .gbnf file of that name. Lark files are judged by Lark's Earley parser and by the
reference recognizer under greedy lexing (the engine's semantics) and under any lexing; GBNF
files by the GBNF reference recognizer.
"""
import sys
from pathlib import Path

import interegular
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import gbnf_reference  # noqa: E402
import lark_reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# grammars naming special tokens need a vocabulary that has them: tests/cfg/test_token_terminals.py
GRAMMARS = [p for p in sorted((ROOT / "grammars").glob("*.lark"))
            + sorted((ROOT / "grammars").glob("*.gbnf"))
            if not Grammar.from_file(p).has_token_refs]
SAMPLES = ROOT / "tests" / "grammars_samples"

KEYWORDS = {
    ("c_subset", "IDENT", False): "int char void float double long unsigned const if else while "
                                  "for do return break continue sizeof",
    ("sql_select", "IDENT", True): "all and as asc between by case cross desc distinct else end "
                                   "false from full group having in inner is join left like "
                                   "limit not null offset on or order outer right select then "
                                   "true union when where",
    ("python_subset", "NAME", False): "and def else False for if in is None not or pass return "
                                      "True while break continue lambda import from as",
}


def _load(path: Path) -> Grammar:
    return _CACHE.setdefault(path, Grammar.from_file(path))


_CACHE: dict = {}


def _samples(name: str, kind: str):
    return sorted((SAMPLES / name / kind).glob("*.txt"))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def test_expected_grammars_are_shipped():
    names = {p.name for p in GRAMMARS}
    for n in ("json", "arithmetic", "csv", "lines"):
        assert {f"{n}.lark", f"{n}.gbnf"} <= names
    for n in ("c_subset", "sql_select", "python_subset", "pgn"):
        assert f"{n}.lark" in names


@pytest.mark.parametrize("path", GRAMMARS, ids=lambda p: p.name)
def test_grammar_loads_and_has_samples(path):
    g = _load(path)
    assert g.start in g.rules
    for t in g.terminals.values():
        interegular.parse_pattern(t.pattern)
    assert _samples(path.stem, "valid") and _samples(path.stem, "invalid")


@pytest.mark.parametrize("path", GRAMMARS, ids=lambda p: p.name)
def test_samples(path):
    g = _load(path)
    text = path.read_text(encoding="utf-8")
    for kind in ("valid", "invalid"):
        for sample in _samples(path.stem, kind):
            doc = _read(sample)
            want = kind == "valid"
            where = f"{path.name}: {kind}/{sample.name}"
            if path.suffix == ".lark":
                assert lark_reference.lark_accepts(text, doc) == want, where + " (Lark)"
                assert lark_reference.recognizes(g, doc, "greedy") == want, where + " (greedy)"
                assert lark_reference.recognizes(g, doc, "any") == want, where + " (any)"
            else:
                assert gbnf_reference.recognizes(g, doc) == want, where


@pytest.mark.parametrize("key", sorted(KEYWORDS), ids=lambda k: k[0])
def test_identifiers_exclude_keywords(key):
    name, terminal, insensitive = key
    g = _load(ROOT / "grammars" / f"{name}.lark")
    ident = interegular.parse_pattern(g.terminals[terminal].pattern).to_fsm()
    words = KEYWORDS[key].split()
    alternatives = "|".join(words)
    if insensitive:
        alternatives = "|".join("".join(f"[{c.lower()}{c.upper()}]" for c in w) for w in words)
    keywords = interegular.parse_pattern(alternatives).to_fsm()
    plain = interegular.parse_pattern("[A-Za-z_][0-9A-Za-z_]*").to_fsm()
    assert ident.equivalent(plain.difference(keywords))


@pytest.mark.parametrize("name", ["json", "arithmetic", "csv", "lines", "pgn"])
def test_prefixes_of_valid_samples_are_viable_under_greedy_lexing(name):
    g = _load(ROOT / "grammars" / f"{name}.lark")
    for sample in _samples(name, "valid")[:3]:
        doc = _read(sample)
        for k in sorted({*range(0, len(doc), max(1, len(doc) // 40)), len(doc)}):
            assert lark_reference.is_viable_prefix(g, doc[:k]), (sample.name, doc[:k])
