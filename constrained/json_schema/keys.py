"""Object key terminals: a declared name, or any name except the declared ones."""
from __future__ import annotations

from .chars import ANY_CHAR, complement, json_char, literal_char, literal_string


def key_literal(name: str) -> str:
    """Regex of the JSON string of one property name."""
    return literal_string(name)


def key_except(names) -> str:
    """Regex of JSON strings whose decoded value is none of ``names`` (exact for json.dumps)."""
    trie: dict = {}
    for name in names:
        node = trie
        for ch in name:
            node = node.setdefault(ch, {})
        node[None] = {}
    return '"' + _node(trie)


def _node(node: dict) -> str:
    alts = []
    if None not in node:
        alts.append('"')
    children = sorted(c for c in node if c is not None)
    for ch in children:
        alts.append(literal_char(ord(ch)) + _node(node[ch]))
    other = json_char(complement([(ord(c), ord(c)) for c in children]))
    if other is not None:
        alts.append(f"{other}{ANY_CHAR}*\"")
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
