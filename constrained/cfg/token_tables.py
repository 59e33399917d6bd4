"""Walks of tokens (and token remainders) through a lexer, split by where lexemes end.

``walk_lexer_trie(lexer, spans, index, start)`` reads every text token from lexer state
``start`` over the vocabulary's token trie, and ``walk_pairs(lexer, index, pairs)`` reads token
remainders (pairs) from the empty lexeme. Each token or remainder ends up

- ``ok``: every byte extended the current lexeme and the lexer is still alive at the token's end
  (the lexeme may continue or end later: greedy lookahead stays open);
- crossing in lexer state ``q`` at a pair: the byte there cannot extend the lexeme, the lexeme
  read so far is complete in ``q`` (a full match of ``lexer.accepting_terms[q]``) and the next
  lexeme starts at that pair;
- dropped: the byte cannot extend the lexeme and the lexeme is not a full match.

The loops run in C (``_walks.c``): the trie walk costs the number of live trie nodes, the
remainder walk the number of bytes read. Crossings come back grouped by the terminal set the
lexeme completes (the lexer's accepting class of ``q``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..automata.token_walk import TrieSpans
from ..vocabulary import Vocabulary
from . import _walks
from .lexer import Lexer


@dataclass(frozen=True)
class VocabIndex:
    """Arrays every walk reads.

    A *pair* is a position in ``flat``, the concatenation of every token's bytes: it names a
    token and an offset inside it (``tok_of[p]``, ``p - start[tok]``), so a token remainder is one
    int32 and the next remainder after reading one byte is ``p + 1``.
    """

    bytes: np.ndarray      # uint8[n_tokens, width + 1] (a zero column past the longest token)
    lengths: np.ndarray    # int32[n_tokens]
    text_ids: np.ndarray   # int32: tokens that carry text (no special, no empty)
    flat: np.ndarray       # uint8[total bytes]
    start: np.ndarray      # int32[n_tokens]: first pair of each token
    tok_of: np.ndarray     # int32[total bytes]: token of each pair
    end_of: np.ndarray     # int32[total bytes]: one past the last pair of the pair's token
    remaining: np.ndarray  # int16[total bytes]: bytes from the pair to its token's end


_INDEX: "weakref.WeakKeyDictionary[Vocabulary, VocabIndex]" = weakref.WeakKeyDictionary()


def vocab_index(vocab: Vocabulary) -> VocabIndex:
    """The shared VocabIndex of ``vocab``."""
    idx = _INDEX.get(vocab)
    if idx is None:
        bm = vocab.byte_matrix
        padded = np.zeros((bm.shape[0], bm.shape[1] + 1), dtype=np.uint8)
        padded[:, :bm.shape[1]] = bm
        text = np.nonzero(vocab.text_token_mask[:vocab.n_tokens])[0].astype(np.int32)
        lengths = vocab.token_lengths.astype(np.int32)
        flat = np.frombuffer(b"".join(vocab.token_bytes), dtype=np.uint8)
        start = (np.cumsum(lengths) - lengths).astype(np.int32)
        tok_of = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
        end_of = (start + lengths)[tok_of].astype(np.int32)
        remaining = (end_of - np.arange(len(flat), dtype=np.int32)).astype(np.int16)
        idx = VocabIndex(padded, lengths, text, flat, start, tok_of, end_of, remaining)
        _INDEX[vocab] = idx
    return idx


@dataclass(frozen=True, eq=False)
class _PreorderTrie:
    """The token trie renumbered in preorder for the C walk: a node's subtree is the range
    ``[node, skip[node])``, so the walk reads the arrays front to back. ``own[node]`` tokens end
    exactly at the node; they come first in its span (a prefix sorts before its extensions)."""

    node_byte: np.ndarray     # uint8
    depth: np.ndarray         # int16: prefix length (>= 1)
    skip: np.ndarray          # int32: first node after the subtree
    lo: np.ndarray            # int32: span of the node's tokens in token_ids
    hi: np.ndarray            # int32
    own: np.ndarray           # int32
    token_ids: np.ndarray     # int32: text tokens in byte order
    max_depth: int


_PREORDER: "weakref.WeakKeyDictionary[TrieSpans, _PreorderTrie]" = weakref.WeakKeyDictionary()


def _preorder(spans: TrieSpans) -> _PreorderTrie:
    pre = _PREORDER.get(spans)
    if pre is None:
        # preorder = by first token, ancestors (shorter prefixes) first
        order = np.lexsort((spans.depth, spans.lo))
        lo, hi = spans.lo[order], spans.hi[order]
        own = np.bincount(spans.token_node, minlength=len(spans.node_byte))[order]
        skip = np.searchsorted(lo, hi, side="left")
        depth = spans.depth[order]
        pre = _PreorderTrie(spans.node_byte[order].astype(np.uint8), depth.astype(np.int16),
                            skip.astype(np.int32), lo.astype(np.int32), hi.astype(np.int32),
                            own.astype(np.int32), spans.token_ids.astype(np.int32),
                            int(depth.max(initial=0)))
        _PREORDER[spans] = pre
    return pre


def _groups(lexer: Lexer, pairs: np.ndarray, states: np.ndarray) -> list:
    """[(terminal set, pairs)] per accepting class of the crossing states."""
    if not len(pairs):
        return []
    cls = lexer.acc_class[states]
    if cls.min() == cls.max():
        return [(lexer.class_terms[int(cls[0])], pairs.copy())]
    order = np.argsort(cls, kind="stable")
    cls, pairs = cls[order], pairs[order]
    bounds = np.flatnonzero(cls[1:] != cls[:-1]) + 1
    return [(lexer.class_terms[int(c[0])], p)
            for c, p in zip(np.split(cls, bounds), np.split(pairs, bounds))]


def walk_lexer_trie(lexer: Lexer, spans: TrieSpans, index: VocabIndex, start: int):
    """Every text token read from lexer state ``start``: (ok token ids, [(terminals, pairs)]).

    ``pairs`` are where the next lexeme starts; the lexeme read so far is a full match of
    exactly ``terminals``.
    """
    t = _preorder(spans)
    n = len(t.token_ids)
    ok = np.empty(n, dtype=np.int32)
    pairs = np.empty(n, dtype=np.int32)
    states = np.empty(n, dtype=np.int32)
    n_ok, n_cross = _walks.trie_walk(lexer.trans, lexer.acc_u8, int(start), t.node_byte,
                                     t.depth, t.skip, t.lo, t.hi, t.own, t.token_ids,
                                     index.start, t.max_depth, ok, pairs, states)
    return ok[:n_ok].copy(), _groups(lexer, pairs[:n_cross], states[:n_cross])


def walk_pairs(lexer: Lexer, index: VocabIndex, pairs: np.ndarray):
    """Token remainders ``pairs`` read from the empty lexeme: (ok token ids, [(terminals,
    next pairs)]) as in walk_lexer_trie."""
    pairs = np.ascontiguousarray(pairs, dtype=np.int32)
    n = len(pairs)
    ok = np.empty(n, dtype=np.int32)
    nxt = np.empty(n, dtype=np.int32)
    states = np.empty(n, dtype=np.int32)
    n_ok, n_cross = _walks.pairs_walk(lexer.trans, lexer.acc_u8, index.flat, index.end_of,
                                      index.tok_of, pairs, ok, nxt, states)
    return ok[:n_ok].copy(), _groups(lexer, nxt[:n_cross], states[:n_cross])
