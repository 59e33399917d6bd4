"""The structural JSON reader of the distinct-strings check, and the token index it uses."""
from __future__ import annotations

import json

import pytest

from constrained.cfg.json_scan import (AFTER, INITIAL, KEY, KEY_NEXT, STRING, VALUE, Items,
                                       decode_key, decoded_prefix, escape_begins, scan)
from constrained.cfg.key_index import KeyIndex
from constrained.vocabulary import Vocabulary


@pytest.mark.parametrize("raw, decoded, pending", [
    (b"abc", b"abc", b""),
    (b"a\\u00e9b", "aéb".encode(), b""),
    (b"a\\u00", b"a", b"\\u00"),
    (b"a\\", b"a", b"\\"),
    (b"\\ud83d", b"", b"\\ud83d"),               # a low surrogate may follow
    (b"\\ud83d\\u", b"", b"\\ud83d\\u"),
    (b"\\ud83d\\ude00x", "😀x".encode(), b""),
    (b"\\\\", b"\\", b""),
    (b'x\\"y', b'x"y', b""),
    (b"\\ud800z", "\ud800z".encode("utf-8", "surrogatepass"), b""),
    ("é".encode()[:1], "é".encode()[:1], b""),   # half a character stays raw
])
def test_decoded_prefix(raw, decoded, pending):
    assert decoded_prefix(raw) == (decoded, pending)
    if not pending and b"\\ud800" not in raw and raw[-1:] != b"\xc3":
        assert decode_key(raw) == json.loads(b'"' + raw + b'"').encode("utf-8")


def _spellings(ch: str) -> list[bytes]:
    """Every escape spelling of ``ch`` (hex digits in any case)."""
    units = ch.encode("utf-16-be", "surrogatepass")
    spellings = [b""]
    for i in range(0, len(units), 2):
        code = units[i:i + 2].hex()
        cased = [""]
        for d in code:
            cased = [c + v for c in cased for v in {d, d.upper()}]
        spellings = [s + b"\\u" + c.encode() for s in spellings for c in cased]
    return spellings


def _unfinished_spellings(ch: str) -> set[bytes]:
    """Every unfinished prefix of every escape spelling of ``ch``."""
    return {s[:cut] for s in _spellings(ch) for cut in range(1, len(s) + 1)
            if decoded_prefix(s[:cut])[1]}


def test_escape_begins_exactly_the_unfinished_spellings():
    """An escape begins a character iff it is an unfinished prefix of one of its spellings
    (checked against every such prefix of several characters, each tried on every one)."""
    chars = ["é", "a", "\n", "😀", '"', "\ud83d", "\udbff", "\uffff", "\U0010FFFF", "Ā"]
    known = {ch: _unfinished_spellings(ch) for ch in chars}
    finished = {s for ch in chars for s in _spellings(ch)} - set().union(*known.values())
    candidates = set().union(*known.values(), finished) | {b"\\U", b"\\x", b"\\ud83d\\U",
                                                           b"u", b""}
    for ch in chars:
        rest = ch.encode("utf-8", "surrogatepass") + b"xyz"
        for esc in candidates:
            assert escape_begins(esc, rest) == (esc in known[ch]), (ch, esc)
    assert not escape_begins(b"\\", "é".encode()[1:])     # inside a character


def test_scan_tracks_keys_per_object_and_items_of_distinct_arrays():
    s = scan(INITIAL, b'{"a": 1, "b": [1, {"a": 2}], "c": "x\\"y", "')
    assert s[0] == (frozenset({b"a", b"b", b"c"}),) and s[1] == KEY
    assert scan(s, b'a"') is None                        # "a" again in the outer object
    assert scan(s, b'\\u0061"') is None                  # the same key, spelled otherwise
    s2 = scan(s, b'd": ')
    assert s2[1] == VALUE
    text = b'[["x", "y"'
    opened = scan(INITIAL, text, distinct_arrays=frozenset({1}))
    assert type(opened[0][-1]) is Items and opened[0][-1] == {b"x", b"y"}
    assert scan(opened, b', "x"') is None
    plain = scan(INITIAL, text)
    assert plain[0][-1] is None and scan(plain, b', "x"')[1] == AFTER
    assert scan(INITIAL, b'{"k": "v", ')[1] == KEY_NEXT
    assert scan(INITIAL, b'{"k": "v')[1] == STRING


def test_key_index_finds_the_tokens_that_spell_a_key():
    tokens = [b'"', b'a', b'ab', b'b"', b'ab":', b'", "a', b'\\u00', b'\\u0061', b',"ab',
              b'"a":1,"a"', b'x', b'<eos>']
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    index = KeyIndex(vocab)
    ids = {int(t) for part in index.current_key([b"ab"]) for t in part}
    names = {tokens[t] for t in ids}
    assert {b"a", b"ab", b'ab":', b"\\u0061", b"\\u00"} <= names
    assert b"x" not in names and b'b"' not in names
    new = {tokens[int(t)] for part in index.new_keys(False, [frozenset({b"ab"})], None)
           for t in part}
    assert b',"ab' in new and b'"a":1,"a"' in new


def test_keys_ahead_names_the_keys_of_containers_opened_before_the_text():
    from constrained.cfg.json_scan import keys_ahead
    assert keys_ahead(b', "c": "z"}') == (1, {0: frozenset({b"c"})})
    # "e" belongs to an object the text opens itself; "d" and "f" to the outer one
    assert keys_ahead(b'}, "d": {"e": 1}, "f": 2}') == (2, {1: frozenset({b"d", b"f"})})
    assert keys_ahead(b' ]}') == (2, {})
    assert keys_ahead(b', "\\u0061": 1}') == (1, {0: frozenset({b"a"})})
    assert keys_ahead(b'x"}') is None and keys_ahead(b'"x"}') is None   # starts in a string
