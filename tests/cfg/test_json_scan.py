"""The structural JSON reader of the distinct-strings check, and the token index it uses."""
from __future__ import annotations

import json

import pytest

from constrained.cfg.json_scan import (AFTER, INITIAL, KEY, KEY_NEXT, STRING, VALUE, Items,
                                       decode_key, decoded_prefix, escape_prefixes, scan)
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


def test_escape_prefixes_cover_every_spelling():
    """Each unfinished prefix of every escape spelling of a character is listed."""
    for ch in ["é", "a", "\n", "😀", '"']:
        units = ch.encode("utf-16-be")
        hexes = [units[i:i + 2].hex() for i in range(0, len(units), 2)]
        for upper in (False, True):
            spelling = "".join("\\u" + (h.upper() if upper else h) for h in hexes).encode()
            for cut in range(1, len(spelling)):
                prefix = spelling[:cut]
                if decoded_prefix(prefix)[1]:       # unfinished: must be listed
                    assert prefix in escape_prefixes(ch.encode()), (ch, prefix)
    assert escape_prefixes("é".encode()[1:]) == frozenset()


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
