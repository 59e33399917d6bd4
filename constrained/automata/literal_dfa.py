"""Byte DFAs of literal patterns (``"name"``, ``(?:"a"|"b c")``) built directly as tries.

Most terminals of JSON Schema grammars are literals: property names, enum and const values.
Reading them through the regex parser, the NFA and the subset construction costs milliseconds
each; a trie of their UTF-8 bytes, minimized, is the same automaton (same canonical arrays) at a
fraction of the cost. Only patterns that are plainly literal qualify: characters other than
regex metacharacters, or a backslash before a character that is not a letter or digit, in
alternatives separated by ``|``, optionally inside one ``(?:...)``. Anything else (classes,
escapes like ``\\d``, empty alternatives) goes through the general pipeline.
"""
from __future__ import annotations

import re

import numpy as np

from ._tries import minimal_trie
from .determinize import number_canonically

_PLAIN_CHAR = r"[^\\\[\]()*+?{}|.^$]"        # no regex metacharacter, no backslash
_CHAR = rf"(?:\\[^A-Za-z0-9]|{_PLAIN_CHAR})"
_ALTERNATIVES = re.compile(rf"{_CHAR}+(?:\|{_CHAR}+)*", re.S)
_TOKEN = re.compile(rf"{_CHAR}|\|", re.S)


_PLAIN = re.compile(rf"{_PLAIN_CHAR}+", re.S)     # one word without escapes


def literal_alternatives(pattern: str) -> list[bytes] | None:
    """The UTF-8 texts a plainly literal ``pattern`` matches, or None when it is not one."""
    if _PLAIN.fullmatch(pattern):
        try:
            return [pattern.encode("utf-8")]
        except UnicodeEncodeError:
            return None
    body = pattern[3:-1] if pattern.startswith("(?:") and pattern.endswith(")") else pattern
    if not _ALTERNATIVES.fullmatch(body):
        return None
    words, current = [], []
    for tok in _TOKEN.findall(body):
        if tok == "|":
            words.append("".join(current))
            current = []
        else:
            current.append(tok[-1])
    words.append("".join(current))
    try:
        return [w.encode("utf-8") for w in words]
    except UnicodeEncodeError:     # lone surrogates: left to the general pipeline's errors
        return None


def literals_dfa(words: list[bytes], max_states: int):
    """(transitions, accepting, initial) of the minimal, canonically numbered DFA matching
    exactly ``words`` (non-empty byte strings), or None when the trie would exceed
    ``max_states`` (the general pipeline then decides, and reports the limit)."""
    if len(words) == 1:
        # a chain is minimal and already numbered breadth first
        w = words[0]
        if len(w) + 1 > max_states:
            return None
        trans = np.full((len(w) + 1, 256), -1, dtype=np.int32)
        trans[np.arange(len(w)), np.frombuffer(w, dtype=np.uint8)] = np.arange(1, len(w) + 1)
        acc = np.zeros(len(w) + 1, dtype=bool)
        acc[-1] = True
        return trans, acc, 0
    classes = trie_classes(words, max_states)
    if classes is None:
        return None
    src, byte, dst, final, root = classes
    trans = np.full((len(final), 256), -1, dtype=np.int32)
    trans[src, byte] = dst
    return number_canonically(trans, final, root)


def trie_classes(words, max_states: int | None = None):
    """The minimal DFA of the trie of byte strings ``words``, unnumbered: its transitions as
    arrays (source state, byte, target state), whether each state ends a word, and the root's
    state; None past ``max_states`` trie nodes. The states are the trie's nodes merged by the
    texts that follow them (in C: ``_tries.minimal_trie``, one pass over the sorted words);
    for a finite language that is minimization."""
    built = minimal_trie(sorted(set(words)), _NO_LIMIT if max_states is None else max_states)
    if built is None:
        return None
    src, byte, dst, final, root = built
    return (np.frombuffer(src, dtype=np.int32), np.frombuffer(byte, dtype=np.int32),
            np.frombuffer(dst, dtype=np.int32), np.frombuffer(final, dtype=np.uint8) != 0, root)


_NO_LIMIT = 1 << 62


