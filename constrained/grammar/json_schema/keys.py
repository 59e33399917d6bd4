"""Object key terminals: a declared name, or any name except the declared ones.

``key_except`` gives the regex of the keys other than the declared names. For names of printable
ASCII (nearly all schemas) ``key_except_automaton`` builds the same automaton directly from a
trie of the names: the regex is as large as the trie, and reading it through the regex pipeline
took most of a typical schema's compile time.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

from ...automata.byte_dfa import ByteDFA, LanguageFacts, provide_builder, regex_to_byte_dfa
from ...automata._dfa_tables import class_columns, minimize_table
from ...automata._tries import key_except_parts, key_except_table
from ...lru import LRUCache
from .chars import ANY_CHAR, ANY_STRING, complement, json_char, literal_char, literal_string


def key_literal(name: str) -> str:
    """Regex of the JSON string of one property name."""
    return literal_string(name)


# escapes that never decode to a printable ASCII character other than "/" "\\" and '"'
_ESC_REST = ('(?:["\\\\bfnrt]|u(?:00[01][0-9a-fA-F]|007[fF]|00[89a-fA-F][0-9a-fA-F]'
             '|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3}))')


def key_except(names) -> str:
    """Regex of JSON strings whose decoded value is none of ``names`` (exact for json.dumps).
    For printable-ASCII names its automaton is built from their trie when it is first needed
    (``regex_to_byte_dfa`` of the regex asks ``_automaton_of``). With no names, any JSON
    string: a key of an object with no declared member."""
    names = tuple(names)
    if not names:
        return ANY_STRING
    pattern = _key_except(names)
    if _NAMES_OF.get(pattern) is None and _plain_ascii(names):
        _NAMES_OF.put(pattern, names)
    return pattern


# key-except regexes of printable-ASCII names -> the names
_NAMES_OF = LRUCache(4096)
# no key-except language holds the empty text (a key has quotes), every one holds infinitely
# many texts
_KEY_FACTS = LanguageFacts(texts=True, empty_text=False)


def _automaton_of(pattern: str) -> ByteDFA | None:
    """The automaton of a key-except regex of printable-ASCII names, from their trie."""
    names = _NAMES_OF.get(pattern)
    return None if names is None else _key_except_automaton(names, pattern)


def _facts_of(pattern: str, max_states: int) -> LanguageFacts | None:
    """What a key-except language holds, where its automaton (a state before the opening
    quote, the trie's nodes, the fixed states) surely has at most ``max_states`` states."""
    names = _NAMES_OF.get(pattern)
    if names is None:
        return None
    bound = 2 + len(_key_except_parts()[0]) + sum(map(len, names))
    return _KEY_FACTS if bound <= max_states else None


@lru_cache(maxsize=1024)
def _key_except(names: tuple[str, ...]) -> str:
    """Shared by the objects (of one schema or many) that declare the same names."""
    if _plain_ascii(names):
        return _ascii_key_except(names)
    return _general_key_except(names)


_NOT_PLAIN = re.compile(r'[^\x20-\x7e]|["\\/]')


def _plain_ascii(names) -> bool:
    """Every name is printable ASCII without quotes, backslashes or slashes."""
    return not any(_NOT_PLAIN.search(n) for n in names)


def key_except_automaton(names, pattern: str) -> ByteDFA | None:
    """The byte DFA of ``pattern == key_except(names)`` built from the names' trie, for
    printable-ASCII names, at least one (None otherwise: the regex pipeline builds it, any
    JSON string when there are no names). Same structure as the regex: follow
    the trie; a printable character that leaves it starts any key text (``tail``); an escape or
    a character past ASCII starts it too (``escaped``, only escapes that never decode to
    printable ASCII); a closing quote ends the key where the trie node is not a name."""
    names = tuple(names)
    if not names or not _plain_ascii(names):
        return None
    return _key_except_automaton(names, pattern)


@lru_cache(maxsize=1024)
def _key_except_automaton(names: tuple[str, ...], pattern: str) -> ByteDFA:
    """Shared by every schema with the same names: a ByteDFA is never modified. Built minimal
    in C (``_tries.key_except_table``: the fixed states merged once, the trie's nodes merged
    by the names that follow them), so only the canonical numbering remains, done as the
    table is written."""
    rows, acc, template, final = _key_except_parts()
    words = sorted({n.encode("ascii") for n in names})
    table, accepting, classes = key_except_table(words, rows, acc.view(np.uint8), template,
                                                 final, _key_except_base_classes())
    dfa = ByteDFA(np.frombuffer(table, dtype=np.int32).reshape(-1, 256),
                  np.frombuffer(accepting, dtype=np.uint8).view(bool), 0, pattern)
    # minimal and canonically numbered, the automaton is a function of the name set: so is
    # its cache key (hashing the names is cheaper than hashing the table)
    dfa.__dict__["key"] = hashlib.sha256(b"key-except-v1|" + b"\0".join(words)).hexdigest()
    # and its byte classes are read off the trie (lexer products need them; hashing the
    # table's columns cost as much as building it)
    dfa.__dict__["byte_classes"] = np.frombuffer(classes, dtype=np.int32)
    return dfa


@lru_cache(maxsize=1)
def _key_except_base_classes() -> np.ndarray:
    """The byte classes of the rows of every key-except automaton that do not depend on the
    names: the fixed states, the state before the opening quote and the trie's template row
    (a trie row differs from it only on its edges and on the quote)."""
    rows, _, template, final = _key_except_parts()
    before_quote = np.full(256, -1, dtype=np.int32)
    before_quote[ord('"')] = len(rows)      # a state of its own
    stacked = np.vstack([rows, before_quote[None, :], template[None, :]]).astype(np.int32)
    classes = np.zeros(256, dtype=np.int32)
    class_columns(np.ascontiguousarray(stacked), classes)
    classes.setflags(write=False)
    return classes


@lru_cache(maxsize=1)
def _key_except_parts() -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The fixed states of every key-except automaton, minimal: the rows and accepting flags of
    the tail (any key text, then the quote), of the escaped tail and of the final quote; the
    row of a trie node before its trie edges and its quote (printable characters leave the
    trie into the tail, escapes and characters past ASCII into the escaped tail); and the final
    quote's state."""
    tail = regex_to_byte_dfa(ANY_CHAR + '*"')
    escaped = regex_to_byte_dfa("(?:\\\\" + _ESC_REST + "|[^\\x00-\\x7e])" + ANY_CHAR + '*"')
    off_esc = tail.n_states
    final = off_esc + escaped.n_states
    entry = final + 1       # leads to every state the trie's rows lead to (then dropped)
    rows = np.full((entry + 1, 256), -1, dtype=np.int32)
    acc = np.zeros(entry + 1, dtype=bool)
    for dfa, off in ((tail, 0), (escaped, off_esc)):
        rows[off:off + dfa.n_states] = np.where(dfa.transitions >= 0, dfa.transitions + off, -1)
        acc[off:off + dfa.n_states] = dfa.accepting
    acc[final] = True
    printable = np.zeros(256, dtype=bool)
    printable[0x20:0x7F] = True
    printable[[ord('"'), ord("\\")]] = False
    esc_row = escaped.transitions[escaped.initial]
    template = np.full(256, -1, dtype=np.int32)
    template[printable] = tail.initial
    template[esc_row >= 0] = esc_row[esc_row >= 0] + off_esc
    targets = sorted(set(template[template >= 0].tolist()) | {final})
    rows[entry, :len(targets)] = targets
    # the escaped tail ends in the plain tail: minimizing merges them
    ids = np.empty(entry + 1, dtype=np.int32)
    reps = np.empty(entry + 1, dtype=np.int32)
    out = np.empty((entry + 1, 256), dtype=np.int32)
    k = minimize_table(rows, acc.view(np.uint8), entry, ids, reps, out)
    # the entry state is number 0 (the first in breadth-first order) and nothing leads to it
    fixed = np.where(out[1:k] > 0, out[1:k] - 1, -1)
    fixed_acc = acc[reps[1:k]]
    template = np.where(template >= 0, ids[template] - 1, -1).astype(np.int32)
    for a in (fixed, fixed_acc, template):
        a.setflags(write=False)
    return fixed, fixed_acc, template, int(ids[final]) - 1


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
    # leaving the trie on a printable ASCII character happens inside it; on an escape or a
    # non-ASCII character it shares one branch, which keeps the DFA about the trie's size
    diverge, paths, ends = key_except_parts(sorted({n.encode("ascii") for n in names}))
    parts = [diverge + ANY_CHAR + "*",
             paths + "(?:\\\\" + _ESC_REST + "|[^\\x00-\\x7e])" + ANY_CHAR + "*"]
    if ends is not None:
        parts.append(ends)
    return '"(?:' + "|".join(parts) + ')"'


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


provide_builder(_automaton_of, _facts_of)
