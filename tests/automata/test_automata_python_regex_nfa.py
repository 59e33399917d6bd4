"""The quick regex reading (Python's parse tree to NFA) against the full reader and Python re."""
import random
import warnings
import re
from pathlib import Path

import numpy as np
import pytest

from constrained.automata import byte_dfa
from constrained.automata.determinize import determinize
from constrained.automata.python_regex_nfa import python_regex_nfa

_CASES = Path(__file__).parent / "data" / "python_regex_cases.txt"


def _sections() -> dict[str, list[str]]:
    """Patterns per section of the case file (a '# ' line opens a section)."""
    out: dict[str, list[str]] = {}
    section = None
    for line in _CASES.read_text(encoding="utf-8").split("\n"):
        if line.startswith("# "):
            section = line[2:]
            out[section] = []
        elif line:
            out[section].append(line)
    return out


_SAME, _ONLY_QUICK, _FULL = _sections().values()


def _dfa(nfa):
    return byte_dfa.dfa_from_arrays(*determinize(nfa, 100_000))


def _same_language(a, b) -> bool:
    # canonical numbering: equal languages give equal arrays
    return (a.initial == b.initial and np.array_equal(a.transitions, b.transitions)
            and np.array_equal(a.accepting, b.accepting))


def _full(pattern: str):
    return _dfa(byte_dfa._full_reader_nfa(pattern, 1_000_000))


@pytest.mark.parametrize("pattern", _SAME)
def test_quick_reading_builds_the_full_readers_language(pattern):
    nfa = python_regex_nfa(pattern, 1_000_000)
    assert nfa is not None
    assert _same_language(_dfa(nfa), _full(pattern))


@pytest.mark.parametrize("pattern", _ONLY_QUICK)
def test_anchors_the_full_match_ignores_are_read_as_python_does(pattern):
    with pytest.raises(Exception):
        _full(pattern)
    dfa = _dfa(python_regex_nfa(pattern, 1_000_000))
    compiled = re.compile(pattern, re.ASCII)
    for text in ["", "a", "b", "ab", "ba", "aa", "a\n", "\na"]:
        assert dfa.accepts(text.encode()) == bool(compiled.fullmatch(text)), (pattern, text)


@pytest.mark.parametrize("pattern", _FULL)
def test_other_constructs_are_left_to_the_full_reader(pattern):
    assert python_regex_nfa(pattern, 1_000_000) is None


def _random_regex(rng: random.Random, depth: int = 0) -> str:
    atoms = ["a", "b", "é", ".", r"\d", r"\W", "[a-c]", "[^b]", r"[\s\d]", r"[^\Wa]", r"\.",
             "[é-ü]", "(?s:.)"]
    if depth > 2 or rng.random() < 0.35:
        return rng.choice(atoms)
    kind = rng.randrange(4)
    if kind == 0:
        return "".join(_random_regex(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    if kind == 1:
        return "(?:" + "|".join(_random_regex(rng, depth + 1)
                                for _ in range(rng.randint(2, 3))) + ")"
    if kind == 2:
        lo = rng.randint(0, 2)
        quantifier = rng.choice(["*", "+", "?", f"{{{lo}}}", f"{{{lo},{lo + rng.randint(0, 2)}}}",
                                 f"{{{lo},}}"]) + rng.choice(["", "?"])
        return "(" + _random_regex(rng, depth + 1) + ")" + quantifier
    return rng.choice(["^", ""]) + _random_regex(rng, depth + 1) + rng.choice(["$", r"\Z", ""])


def test_random_patterns_agree_with_the_full_reader():
    rng = random.Random(20261127)
    quick = 0
    for _ in range(300):
        pattern = _random_regex(rng)
        nfa = python_regex_nfa(pattern, 1_000_000)
        try:
            full = _full(pattern)
        except Exception:
            continue
        if nfa is not None:
            quick += 1
            assert _same_language(_dfa(nfa), full), pattern
    assert quick > 200


def test_regex_to_byte_dfa_reports_what_the_quick_reading_leaves():
    with pytest.raises(byte_dfa.RegexError) as info:
        byte_dfa.regex_to_byte_dfa("ab(?=c)")
    assert info.value.position == 2


def test_pythons_future_warnings_stay_inside(recwarn):
    # "[[a]" reads as today's class; Python warns that a future version may nest sets
    warnings.simplefilter("always")
    assert python_regex_nfa("[[a]", 1_000_000) is not None
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]
