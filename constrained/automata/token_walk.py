"""Walk every token of a vocabulary through a byte DFA at once, vectorized with numpy.

``walk_tokens(dfa, vocab, state)`` returns int32[vocab.n_tokens]: the DFA state after reading each
token's bytes from ``state``, or -1 when the token leads to a dead prefix. Special tokens (EOS
included) and empty tokens are always -1: they carry no grammar text. ``walk_tokens_many`` does
the same for several start states and returns int32[len(states), n_tokens].

Only pairs (start, token) still alive are advanced at each byte column, and tokens are ordered by
length so those still longer than the column are a prefix of the order: a restrictive state costs
a fraction of a millisecond, a permissive one a few milliseconds on a 128k vocabulary.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..vocabulary import Vocabulary
from .byte_dfa import ByteDFA


@dataclass(frozen=True)
class _WalkIndex:
    ids: np.ndarray        # int32: text tokens, longest first
    lengths: np.ndarray    # int32: their lengths
    columns: list          # columns[j] = uint8 array of byte j of ids[k] (rows with length > j)
    n_tokens: int


_INDEX: "weakref.WeakKeyDictionary[Vocabulary, _WalkIndex]" = weakref.WeakKeyDictionary()


def _walk_index(vocab: Vocabulary) -> _WalkIndex:
    idx = _INDEX.get(vocab)
    if idx is None:
        n = vocab.n_tokens
        text = np.nonzero(vocab.text_token_mask[:n])[0]
        lengths = vocab.token_lengths[text]
        order = np.argsort(-lengths, kind="stable")
        ids = text[order].astype(np.int32)
        lengths = lengths[order].astype(np.int32)
        bm = vocab.byte_matrix
        width = int(lengths.max(initial=0))
        # number of tokens longer than j, for every column j
        counts = np.searchsorted(-lengths, -np.arange(width), side="left")
        columns = [np.ascontiguousarray(bm[ids[:c], j]) for j, c in enumerate(counts)]
        idx = _WalkIndex(ids, lengths, columns, n)
        _INDEX[vocab] = idx
    return idx


def walk_tokens_many(dfa: ByteDFA, vocab: Vocabulary, states: Sequence[int]) -> np.ndarray:
    """int32[len(states), n_tokens]: end state of every token from every start state (-1 dead)."""
    idx = _walk_index(vocab)
    states = np.asarray(states, dtype=np.int32).reshape(-1)
    out = np.full((len(states), idx.n_tokens), -1, dtype=np.int32)
    if len(idx.ids) == 0 or dfa.n_states == 0:
        return out
    trans = dfa.transitions
    # first byte for every (start, token) pair, keep the live ones
    first = idx.columns[0]
    valid = states >= 0
    start_rows = np.nonzero(valid)[0]
    if len(start_rows) == 0:
        return out
    cur = trans[states[start_rows]][:, first]            # [k, n_text]
    row, pos = np.nonzero(cur >= 0)
    st = cur[row, pos]
    row = start_rows[row]
    j = 1
    lengths = idx.lengths
    while len(pos):
        longer = lengths[pos] > j
        done = ~longer
        if done.any():
            out[row[done], idx.ids[pos[done]]] = st[done]
            pos, st, row = pos[longer], st[longer], row[longer]
            if not len(pos):
                break
        st = trans[st, idx.columns[j][pos]]
        keep = st >= 0
        if not keep.all():
            pos, st, row = pos[keep], st[keep], row[keep]
        j += 1
    return out


def walk_tokens(dfa: ByteDFA, vocab: Vocabulary, state: int) -> np.ndarray:
    """int32[n_tokens]: end state of every token read from ``state`` (-1 dead or special)."""
    return walk_tokens_many(dfa, vocab, [state])[0]
