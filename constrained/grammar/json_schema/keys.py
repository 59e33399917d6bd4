"""Object key terminals: a declared name, or any name except the declared ones.

``key_except`` gives the regex of the keys other than the declared names. For names of printable
ASCII (nearly all schemas) ``key_except_automaton`` builds the same automaton directly from a
trie of the names: the regex is as large as the trie, and reading it through the regex pipeline
took most of a typical schema's compile time.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...automata.byte_dfa import ByteDFA, regex_to_byte_dfa
from ...automata.determinize import minimize
from ...automata.literal_dfa import byte_trie
from .chars import ANY_CHAR, char_class, complement, intersect, json_char, literal_char, literal_string


def key_literal(name: str) -> str:
    """Regex of the JSON string of one property name."""
    return literal_string(name)


# escapes that never decode to a printable ASCII character other than "/" "\\" and '"'
_ESC_REST = ('(?:["\\\\bfnrt]|u(?:00[01][0-9a-fA-F]|007[fF]|00[89a-fA-F][0-9a-fA-F]'
             '|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3}))')


def key_except(names) -> str:
    """Regex of JSON strings whose decoded value is none of ``names`` (exact for json.dumps)."""
    names = list(names)
    if _plain_ascii(names):
        return _ascii_key_except(names)
    return _general_key_except(names)


def _plain_ascii(names) -> bool:
    return all(0x20 <= ord(c) < 0x7F and c not in '"\\/' for n in names for c in n)


def key_except_automaton(names, pattern: str) -> ByteDFA | None:
    """The byte DFA of ``pattern == key_except(names)`` built from the names' trie, for
    printable-ASCII names (None otherwise: the regex pipeline builds it). Same structure as the regex: follow
    the trie; a printable character that leaves it starts any key text (``tail``); an escape or
    a character past ASCII starts it too (``escaped``, only escapes that never decode to
    printable ASCII); a closing quote ends the key where the trie node is not a name."""
    names = tuple(names)
    if not _plain_ascii(names):
        return None
    return _key_except_automaton(names, pattern)


@lru_cache(maxsize=1024)
def _key_except_automaton(names: tuple[str, ...], pattern: str) -> ByteDFA:
    """Shared by every schema with the same names: a ByteDFA is never modified."""
    tail = regex_to_byte_dfa(ANY_CHAR + '*"')
    escaped = regex_to_byte_dfa("(?:\\\\" + _ESC_REST + "|[^\\x00-\\x7e])" + ANY_CHAR + '*"')
    trie, is_name = byte_trie([n.encode("ascii") for n in names])
    n_trie = len(trie)
    # states: 0 before the opening quote, 1 + trie nodes, tail, escaped, the final quote
    off_tail = 1 + n_trie
    off_esc = off_tail + tail.n_states
    final = off_esc + escaped.n_states
    trans = np.full((final + 1, 256), -1, dtype=np.int32)
    acc = np.zeros(final + 1, dtype=bool)
    trans[0, ord('"')] = 1
    rows = trans[1:1 + n_trie]
    printable = np.zeros(256, dtype=bool)
    printable[0x20:0x7F] = True
    printable[[ord('"'), ord("\\")]] = False
    rows[:, printable] = off_tail + tail.initial
    esc_row = escaped.transitions[escaped.initial]
    rows[:, esc_row >= 0] = esc_row[esc_row >= 0] + off_esc
    rows[trie >= 0] = trie[trie >= 0] + 1     # trie edges (printable) take precedence
    rows[~is_name, ord('"')] = final
    for dfa, off in ((tail, off_tail), (escaped, off_esc)):
        trans[off:off + dfa.n_states] = np.where(dfa.transitions >= 0, dfa.transitions + off, -1)
        acc[off:off + dfa.n_states] = dfa.accepting
    acc[final] = True
    # every state reaches the final quote (through the tail), so nothing needs trimming
    return ByteDFA(*minimize(trans, acc, 0), pattern)


def _trie(names) -> dict:
    trie: dict = {}
    for name in names:
        node = trie
        for ch in name:
            node = node.setdefault(ch, {})
        node[None] = {}
    return trie


def _ascii_key_except(names) -> str:
    """Small form for printable-ASCII names: one shared tail after the point of divergence."""
    trie = _trie(names)
    # leaving the trie on a printable ASCII character happens inside it; on an escape or a
    # non-ASCII character it shares one branch, which keeps the DFA about the trie's size
    parts = [_diverge(trie) + ANY_CHAR + "*",
             _paths(trie) + "(?:\\\\" + _ESC_REST + "|[^\\x00-\\x7e])" + ANY_CHAR + "*"]
    ends = _non_key_ends(trie)
    if ends is not None:
        parts.append(ends)
    return '"(?:' + "|".join(parts) + ')"'


def _lit(ch: str) -> str:
    return "\\" + ch if ch in ".^$*+?()[]{}|\\-" else ch


def _diverge(node: dict) -> str:
    """Trie paths followed by a literal character that leaves the trie."""
    children = tuple(sorted(c for c in node if c is not None))
    alts = [_printable_except(children)] + [_lit(c) + _diverge(node[c]) for c in children]
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


@lru_cache(maxsize=4096)
def _printable_except(children: tuple[str, ...]) -> str:
    """A class of the printable ASCII characters other than ``children``, '"' and '\\'."""
    taken = [(ord(c), ord(c)) for c in children] + [(0x22, 0x22), (0x5C, 0x5C)]
    return char_class(intersect(complement(taken), ((0x20, 0x7E),)))


def _paths(node: dict) -> str:
    """Any trie path (possibly empty)."""
    children = sorted(c for c in node if c is not None)
    if not children:
        return ""
    return "(?:" + "|".join(_lit(c) + _paths(node[c]) for c in children) + ")?"


def _non_key_ends(node: dict) -> str | None:
    """Trie paths ending at a node that is not a declared name."""
    children = sorted(c for c in node if c is not None)
    subs = [(c, _non_key_ends(node[c])) for c in children]
    alts = [_lit(c) + sub for c, sub in subs if sub is not None]
    if None in node:
        return None if not alts else "(?:" + "|".join(alts) + ")"
    return "" if not alts else "(?:" + "|".join(alts) + ")?"


def _general_key_except(names) -> str:
    return '"' + _node(_trie(names))


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
