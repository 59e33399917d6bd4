"""Regexes that are unions at their top: where they split, and that the automaton built from
the alternatives' automata equals the one read from the whole pattern."""
import itertools
import random
import re

import numpy as np
import pytest

from constrained.automata import byte_dfa
from constrained.automata.alternation import top_alternatives
from constrained.automata.byte_nfa import ByteNFA
from constrained.automata.determinize import determinize, union_tables
from constrained.errors import LimitExceededError, RegexError


@pytest.mark.parametrize("pattern,parts", [
    ("a|b", ["a", "b"]),
    ("(?:ab|c(d|e))", ["ab", "c(d|e)"]),
    ("(?:a|b)|c", ["(?:a|b)", "c"]),
    (r"[|]x|\|y|[]|]z", ["[|]x", r"\|y", "[]|]z"]),
    (r"[^]|]|\\", ["[^]|]", r"\\"]),
    ('"(?:[^"\\\\]|\\\\.){2,4}"|null', ['"(?:[^"\\\\]|\\\\.){2,4}"', "null"]),
    ("(?:a|b)*", None),             # a repeated group is not a union
    ("(?:a|b)(?:c|d)", None),       # two groups: a concatenation
    ("abc", None),
    ("^a|b", None),                 # anchors stay with the whole pattern
    ("a|b$", None),
    ("(?i:a)|b", None),             # inline flags
    ("(?i)a|b", None),
    ("(a)|\\1", None),              # a backreference
    ("a(?=b)|c", None),             # a lookaround
    ("a||b", None),                 # an empty alternative
    (r"\bx|y", None),
    ("[a|b", None),                 # unbalanced
    (")|", None),
    ("a)|(b", None),
    ("(a|b", None),
])
def test_top_alternatives(pattern, parts):
    assert top_alternatives(pattern) == parts


PIECES = ["a", "b+", "[a-c]{2,4}", "(?:ab|ba)*", "x?", r"\d{1,3}", "é", "[^a]", "(?:é|ü)+",
          '"(?:[^"\\\\]|\\\\.){0,3}"', ".", "[ab]*c"]


def _same(x, y) -> bool:
    return (x.initial == y.initial and np.array_equal(x.transitions, y.transitions)
            and np.array_equal(x.accepting, y.accepting))


def test_union_of_alternatives_equals_reading_the_whole_pattern():
    rng = random.Random(5)
    split = 0
    for _ in range(150):
        alts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))
                for _ in range(rng.randint(2, 4))]
        pattern = "|".join(alts) if rng.random() < 0.5 else "(?:" + "|".join(alts) + ")"
        split += top_alternatives(pattern) is not None
        got = byte_dfa._build_uncached(pattern, 10_000)
        want = byte_dfa._build_general(pattern, 10_000)
        assert _same(got, want), pattern
        for text in ("", "a", "ab", "abba", "12", '"x"', "éü", "bbb", "acc", "xx"):
            assert got.accepts(text.encode()) == bool(re.fullmatch(pattern, text)), (pattern,
                                                                                   text)
    assert split == 150


def test_an_error_in_an_alternative_is_reported_at_its_place_in_the_whole_pattern():
    pattern = "abc|d[z-a]e"
    assert top_alternatives(pattern) is not None
    with pytest.raises(RegexError) as split:
        byte_dfa.regex_to_byte_dfa(pattern)
    with pytest.raises(RegexError) as whole:
        byte_dfa._build_general(pattern, 100)
    assert split.value.position == whole.value.position == 6


def _union(dfas, max_states):
    tables = [(d.transitions, d.accepting, d.initial) for d in dfas]
    return union_tables(tables, [d.byte_classes for d in dfas], max_states)


def test_union_skips_empty_languages():
    a = byte_dfa.regex_to_byte_dfa("ab")
    empty = byte_dfa.ByteDFA(np.zeros((0, 256), np.int32), np.zeros(0, bool), -1, "")
    got = byte_dfa.dfa_from_arrays(*_union([empty, a], 100))
    assert _same(got, a)
    nothing = byte_dfa.dfa_from_arrays(*_union([empty, empty], 100))
    assert nothing.n_states == 0


def _nfa_union_states(dfas, max_states):
    """The states of the subset construction of the union's NFA (a new start reaching every
    initial state, every accepting state one final node), or None past ``max_states``: what
    union_tables must count."""
    edges, eps = [[], []], [[], []]         # node 0: the start, node 1: the final node
    for d in dfas:
        if d.initial < 0:
            continue
        base = len(edges)
        eps[0].append(base + d.initial)
        for s in range(d.n_states):
            row = d.transitions[s]
            edges.append([(b, b, base + int(row[b])) for b in range(256) if row[b] >= 0])
            eps.append([1] if d.accepting[s] else [])
    nfa = ByteNFA(len(edges))
    nfa.edges, nfa.eps, nfa.start, nfa.final = edges, eps, 0, 1
    try:
        trans, _, _ = determinize(nfa, max_states)
    except LimitExceededError:
        return None
    return len(trans)


# alternatives by first character: each group's first bytes differ from every other group's
DISJOINT = [["a", "a+b", "(?:ab)*", "a(?:ba)*c?"], ['"(?:[^"\\\\]|\\\\.){0,3}"', '"x"'],
            [r"\d{1,3}", "[0-9]+(?:\\.[0-9]+)?"], ["é", "éü*"], ["null", "n(?:o|u)"],
            ["-?", "-1"], ["[^\\x00-\\x7f]"], ["true|false"]]


def test_the_union_counts_states_as_the_subset_construction_of_its_nfa():
    """The union's states are the subsets the NFA's construction finds (an accepting state that
    reads nothing more is only the final node there), so the limit falls at the same count; and
    its minimal automaton is the one read from the whole pattern."""
    rng = random.Random(11)
    for _ in range(200):
        groups = rng.sample(range(len(DISJOINT)), rng.randint(2, 4))
        alts = [rng.choice(DISJOINT[g]) if rng.random() < 0.7 else rng.choice(PIECES)
                for g in groups]
        dfas = [byte_dfa.regex_to_byte_dfa(a) for a in alts]
        count = _nfa_union_states(dfas, 10_000)
        trans, accepting, initial = _union(dfas, 10_000)
        assert len(trans) == count, alts
        assert _nfa_union_states(dfas, count - 1) is None
        with pytest.raises(LimitExceededError):
            _union(dfas, count - 1)
        pattern = "(?:" + "|".join(alts) + ")"
        assert _same(byte_dfa.dfa_from_arrays(trans, accepting, initial),
                     byte_dfa._build_general(pattern, 10_000)), pattern


def _outcome(build, pattern):
    try:
        d = build(pattern)
    except Exception as e:  # noqa: BLE001 - compared: the same type and position
        return type(e), getattr(e, "position", None)
    return d.initial, d.transitions.tobytes(), d.accepting.tobytes()


def _agrees_with_re(pattern: str) -> None:
    dfa = byte_dfa._build_uncached(pattern, 2000)
    for n in range(4):
        for chars in itertools.product(["a", "b", "é", "1", "-", ":"], repeat=n):
            text = "".join(chars)
            assert dfa.accepts(text.encode()) == bool(re.fullmatch(pattern, text)), (pattern,
                                                                                     text)


def test_random_texts_split_or_not_give_what_reading_the_whole_pattern_gives():
    """Equal outcomes (automaton, or error type and position), except where the whole
    pattern's reader refuses a construct every alternative's own builder reads: then the
    union must agree with Python's ``re``."""
    rng = random.Random(11)
    alphabet = "ab|||()[]^$\\?*+{}1,:.-é"
    split = 0
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        parts = top_alternatives(text)
        if parts is None:
            continue
        split += 1
        got = _outcome(lambda p: byte_dfa._build_uncached(p, 2000), text)
        want = _outcome(lambda p: byte_dfa._build_general(p, 2000), text)
        if isinstance(want[0], type) and not isinstance(got[0], type):
            _agrees_with_re(text)
        else:
            assert got == want, text
    assert split > 100


def test_a_union_of_alternatives_the_builders_read_is_read():
    # "\é" is a literal é to Python; the full reader refuses it, the literal builder not
    with pytest.raises(RegexError):
        byte_dfa._full_reader_nfa("a|\\é", 6400)
    _agrees_with_re("a|\\é")
