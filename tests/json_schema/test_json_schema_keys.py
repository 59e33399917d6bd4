"""Keys other than the declared names: the automaton built from the names' trie is exactly the
DFA the regex pipeline builds from ``key_except``'s regex, and the regex's parts built in C are
those of a Python reference."""
import json
import random

import numpy as np
import pytest

from constrained import Grammar
from constrained.automata.byte_dfa import _build_general
from constrained.cfg.prepare import prepare_grammar
from constrained.errors import LimitExceededError
from constrained.automata._tries import key_except_parts
from constrained.grammar.json_schema.chars import ANY_STRING, char_class, complement, intersect
from constrained.grammar.json_schema.keys import _plain_ascii, _trie, key_except, key_except_automaton

NAME_SETS = [[""], ["a"], ["a", "ab", "b"], ["name", "age", "tags"], ["", "x y", "~!"],
             ["id", "items", "note", "paid"], ["a-b.c", "a_b", "A B", "[x]", "{y}", "1", "10"]]


def _same(a, b) -> bool:
    return (a.initial == b.initial and np.array_equal(a.transitions, b.transitions)
            and np.array_equal(a.accepting, b.accepting))


@pytest.mark.parametrize("names", NAME_SETS)
def test_trie_automaton_equals_the_regex_pipeline(names):
    pattern = key_except(names)
    assert _same(key_except_automaton(names, pattern), _build_general(pattern, 10_000))


def test_no_names_is_any_string():
    # the keys of an object with no declared member are the string values' terminal
    assert key_except([]) == ANY_STRING
    assert key_except_automaton([], ANY_STRING) is None
    dfa = _build_general(key_except([]), 10_000)
    for text in (b'""', b'"a"', b'"\\/x"', b'"\\u0041"', b'"\xc3\xa9"'):
        assert dfa.accepts(text), text


def test_keys_of_an_object_with_no_declared_member_may_open_with_an_escape():
    """Any key spelling, the first character escaped too, and keys stay distinct by their
    decoded text."""
    from constrained import Vocabulary, compile_grammar
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"],
                                        eos_token_ids=[256])
    compiled = compile_grammar(Grammar.from_json_schema({"type": "object"}), vocab)
    for text, ok in ((b'{"\\u0061": 1}', True), (b'{"\\/x": 1, "/y": 2}', True),
                     (b'{"a": 1, "\\u0061": 2}', False), (b'{"\\/": 1, "/": 2}', False),
                     (b'{"\\u00e9": {"\\u00e9": 1}, "\xc3\xa9": 2}', False)):
        m = compiled.matcher()
        assert (all(m.accept_token(b) for b in text) and m.is_accepting()) == ok, text
        assert json.loads(text) is not None


def test_random_name_sets_equal_the_regex_pipeline():
    rng = random.Random(11)
    alphabet = "abz_- .0~"
    for _ in range(40):
        names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))
                        for _ in range(rng.randint(1, 6))})
        pattern = key_except(names)
        assert _same(key_except_automaton(names, pattern), _build_general(pattern, 10_000)), names


def test_byte_classes_read_off_the_trie_equal_the_column_classes():
    """The classes given with the table (from the trie's edges) are the ones hashing its
    columns finds, numbering included: names sharing suffixes (merged trie states, where two
    edge bytes can be alike), prefixes of one another, the empty name."""
    from constrained.automata._dfa_tables import class_columns
    rng = random.Random(23)
    alphabet = "abcxyz_-0129AZ .~{}"
    sets = [("",), ("ab", "ac"), ("xab", "yab", "ab"), ("a", "ab", "abc")]
    for _ in range(600):
        sets.append(tuple({"".join(rng.choice(alphabet[:rng.randint(2, len(alphabet))])
                                   for _ in range(rng.randint(0, 6)))
                           for _ in range(rng.randint(1, 12))}))
    for names in sets:
        dfa = key_except_automaton(list(names), key_except(names))
        want = np.zeros(256, dtype=np.int32)
        class_columns(np.ascontiguousarray(dfa.transitions), want)
        assert np.array_equal(dfa.byte_classes, want), names


def test_the_cache_key_names_the_name_set():
    """The key comes from the names (not the table): equal exactly where the names are."""
    rng = random.Random(5)
    seen: dict[str, tuple] = {}
    for _ in range(200):
        names = tuple(sorted({"".join(rng.choice("ab") for _ in range(rng.randint(0, 3)))
                              for _ in range(rng.randint(1, 4))}))
        key = key_except_automaton(list(names), key_except(names)).key
        assert seen.setdefault(key, names) == names
    assert len(seen) > 20
    shuffled = ["b", "a", "ab"]
    assert (key_except_automaton(shuffled, key_except(shuffled)).key
            == key_except_automaton(["a", "ab", "b"], key_except(["a", "ab", "b"])).key)


def test_names_outside_printable_ascii_are_left_to_the_regex_pipeline():
    for names in (["caf\u00e9"], ['a"b'], ["a/b"], ["tab\there"]):
        assert key_except_automaton(names, key_except(names)) is None


def test_the_automaton_decides_which_keys_the_schema_takes():
    schema = {"type": "object", "properties": {"id": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    g = Grammar.from_json_schema(schema)
    name = next(n for n in g.terminals if n.startswith("XKEY"))
    prepared = prepare_grammar(g)
    at = prepared.terminal_names.index(name)
    assert prepared.dfas._built[at] is None     # built when a lexer first reads it
    dfa = prepared.dfas[at]
    assert dfa.accepts(json.dumps("idx").encode()) and dfa.accepts(b'"i"')
    assert not dfa.accepts(b'"id"')
    # read off the names' trie, not the regex: its key is the digest of the names
    assert dfa.key == key_except_automaton(["id"], g.terminals[name].pattern).key


def test_a_directly_built_automaton_respects_the_state_limit():
    schema = {"type": "object", "properties": {f"property_{i}": {"type": "integer"}
                                               for i in range(40)}}
    with pytest.raises(LimitExceededError):
        prepare_grammar(Grammar.from_json_schema(schema), max_dfa_states=20)


def _printable_except_reference(children) -> str:
    taken = [(ord(c), ord(c)) for c in children] + [(0x22, 0x22), (0x5C, 0x5C)]
    return char_class(intersect(complement(taken), ((0x20, 0x7E),)))


def _lit(ch: str) -> str:
    return "\\" + ch if ch in ".^$*+?()[]{}|\\-" else ch


def _trie_parts_reference(node: dict):
    """The three regexes of a names' trie, one Python call per branching node."""
    chain = []
    while None not in node and len(node) == 1:
        (c, below), = node.items()
        chain.append(c)
        node = below
    children = sorted(c for c in node if c is not None)
    diverge, paths, ends = [_printable_except_reference(children)], [], []
    for c in children:
        d, p, e = _trie_parts_reference(node[c])
        diverge.append(_lit(c) + d)
        paths.append(_lit(c) + p)
        if e is not None:
            ends.append(_lit(c) + e)
    d = diverge[0] if len(diverge) == 1 else "(?:" + "|".join(diverge) + ")"
    p = "(?:" + "|".join(paths) + ")?" if paths else ""
    if None in node:
        e = "(?:" + "|".join(ends) + ")" if ends else None
    else:
        e = "(?:" + "|".join(ends) + ")?" if ends else ""
    if not chain:
        return d, p, e
    lits = [_lit(c) for c in chain]
    k = len(chain)
    d = "".join(["(?:" + _printable_except_reference((c,)) + "|" + lit
                 for c, lit in zip(chain, lits)] + [d, ")" * k])
    p = "".join(["(?:" + lit for lit in lits] + [p, ")?" * k])
    if e is None:
        lits, e, k = lits[:-1], "", k - 1
    e = "".join(["(?:" + lit for lit in lits] + [e, ")?" * k])
    return d, p, e


def test_trie_regexes_equal_the_reference():
    printable = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in '"\\')
    rng = random.Random(11)
    sets = [tuple(n) for n in NAME_SETS] + [tuple(printable)]
    for _ in range(2000):
        pool = rng.choice([printable, "ab", "abc-]^[.", "a", "x/-"])
        sets.append(tuple({"".join(rng.choice(pool) for _ in range(rng.randint(0, 6)))
                           for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 20]))}))
    for names in sets:
        want = _trie_parts_reference(_trie(names))
        assert key_except_parts(sorted({n.encode() for n in names})) == want, names


def test_trie_regexes_refuse_bad_names_and_deep_tries():
    with pytest.raises(ValueError):
        key_except_parts([b'a"b'])
    with pytest.raises(ValueError):
        key_except_parts([b"b", b"a"])
    with pytest.raises(RecursionError):
        key_except_parts([b"a" * i for i in range(1, 6000)])


def test_plain_ascii_names_are_printable_ascii_without_quote_backslash_or_slash():
    rng = random.Random(3)
    chars = [chr(c) for c in range(0x90)] + ["é", "中", "\ud800", "😀"]
    for _ in range(5000):
        names = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 4)))
                 for _ in range(rng.randint(0, 3))]
        want = all(0x20 <= ord(c) < 0x7F and c not in '"\\/' for n in names for c in n)
        assert _plain_ascii(names) == want, names
