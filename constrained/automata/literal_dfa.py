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

from .determinize import number_canonically

_CHAR = r"(?:\\[^A-Za-z0-9]|[^\\\[\]()*+?{}|.^$])"
_ALTERNATIVES = re.compile(rf"{_CHAR}+(?:\|{_CHAR}+)*", re.S)
_TOKEN = re.compile(rf"{_CHAR}|\|", re.S)


def literal_alternatives(pattern: str) -> list[bytes] | None:
    """The UTF-8 texts a plainly literal ``pattern`` matches, or None when it is not one."""
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
    """The minimal DFA of the trie of byte strings ``words``, unnumbered: its edges as arrays
    (source state, byte, target state), whether each state ends a word, and the root's state;
    None past ``max_states`` trie nodes. The states are the trie nodes merged by the texts that
    follow them (equal subtries), found bottom-up: for a finite language that is
    minimization, at the cost of one pass over the trie."""
    built = _trie(words, max_states)
    if built is None:
        return None
    children, src, byte, final = built
    cls = [0] * len(children)
    sigs: dict = {}
    for v in range(len(children) - 1, -1, -1):     # children come after their parents
        kids = children[v]
        if len(kids) == 1:      # most nodes of a trie of names: a chain
            for b, c in kids.items():
                sig = (final[v], b, cls[c])
        elif kids:
            sig = (final[v],) + tuple(sorted([(b, cls[c]) for b, c in kids.items()]))
        else:
            sig = final[v]
        cls[v] = sigs.setdefault(sig, len(sigs))
    cls_arr = np.array(cls, dtype=np.int32)
    class_final = np.zeros(len(sigs), dtype=bool)
    class_final[cls_arr] = final
    return cls_arr[src], np.array(byte, dtype=np.int64), cls_arr[1:], class_final, cls[0]


def _trie(words, max_states: int | None):
    """(children dicts, parents, bytes, final flags) of the trie; node i + 1 is entry i."""
    children: list[dict[int, int]] = [{}]
    final = [False]
    src: list[int] = []
    byte: list[int] = []
    for w in words:
        node = 0
        for b in w:
            nxt = children[node].get(b)
            if nxt is None:
                if max_states is not None and len(children) >= max_states:
                    return None
                nxt = children[node][b] = len(children)
                children.append({})
                final.append(False)
                src.append(node)
                byte.append(b)
            node = nxt
        final[node] = True
    return children, src, byte, final
