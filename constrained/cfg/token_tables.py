"""Vectorized walks of tokens (and token remainders) through a lexer, split by where lexemes end.

``walk_lexer_trie(lexer, spans, index, start)`` reads every text token from lexer state
``start`` over the vocabulary's token trie, and ``suffix_table(lexer, index)`` reads every token
remainder (pair) from the empty lexeme. Each token or remainder ends up

- ``ok``: every byte extended the current lexeme and the lexer is still alive at the token's end
  (the lexeme may continue or end later: greedy lookahead stays open);
- crossing in lexer state ``q`` at a pair: the byte there cannot extend the lexeme, the lexeme
  read so far is complete in ``q`` (a full match of ``lexer.accepting_terms[q]``) and the next
  lexeme starts at that pair;
- dropped: the byte cannot extend the lexeme and the lexeme is not a full match.

No Python loop runs over tokens: each step advances all prefixes (or pairs) still alive.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..automata.token_walk import TrieSpans, concat_ranges, trie_children
from ..vocabulary import Vocabulary
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


def walk_lexer_trie(lexer: Lexer, spans: TrieSpans, index: VocabIndex, start: int):
    """Every text token read from lexer state ``start``, over the token trie: the walk's
    cost is the number of prefixes that stay alive, not the vocabulary size.

    Returns (ok token ids, [(lexer state, pairs)]): ``ok`` tokens stay inside the lexeme; a
    group's tokens end the lexeme (complete in that lexer state) where their byte at the
    pair's offset cannot extend it (see the module docstring).
    """
    flat = lexer.trans.reshape(-1).astype(np.int64, copy=False)
    acc = lexer.acc_any
    node_alive = np.zeros(len(spans.node_byte), dtype=bool)
    cross_nodes: list[np.ndarray] = []
    cross_states: list[np.ndarray] = []
    # the virtual root (empty prefix, state ``start``) has the depth-1 nodes as children
    children = np.arange(spans.n_roots, dtype=np.int64)
    parent_st = np.full(len(children), start, dtype=np.int64)
    while len(children):
        st = flat.take(parent_st * 256 + spans.node_byte.take(children))
        alive = st >= 0
        dead = ~alive
        if dead.any():
            ends = dead & acc[parent_st]
            if ends.any():
                cross_nodes.append(children[ends])
                cross_states.append(parent_st[ends])
        nodes, st = children[alive], st[alive]
        node_alive[nodes] = True
        children, counts = trie_children(spans.child_start, spans.child_count, nodes)
        parent_st = np.repeat(st, counts)
    ok = spans.token_ids[node_alive[spans.token_node]].astype(np.int32)
    groups = []
    if cross_nodes:
        nodes, states = np.concatenate(cross_nodes), np.concatenate(cross_states)
        counts = spans.hi[nodes] - spans.lo[nodes]
        toks = spans.token_ids[concat_ranges(spans.lo[nodes], counts)]
        offs = np.repeat(spans.depth[nodes] - 1, counts)
        pairs = (index.start[toks] + offs).astype(np.int32)
        st = np.repeat(states, counts)
        order = np.argsort(st, kind="stable")
        st, pairs = st[order], pairs[order]
        bounds = np.flatnonzero(np.diff(st)) + 1
        for s_part, p_part in zip(np.split(st, bounds), np.split(pairs, bounds)):
            groups.append((int(s_part[0]), p_part))
    return ok, groups


OK = -2     # suffix table: the remainder stays inside the lexeme to the token's end
DEAD = -1   # suffix table: the remainder is not viable


@dataclass(frozen=True)
class SuffixTable:
    """Every token remainder (pair) read from a lexer's empty lexeme, precomputed.

    ``next[p]`` is OK, DEAD, or the pair where the next lexeme starts, the lexeme read from
    ``p`` being complete in lexer state ``state[p]``. One table per candidate set serves every
    multi-lexeme token at every position with plain array indexing.
    """

    next: np.ndarray    # int32[n_pairs]
    state: np.ndarray   # int32[n_pairs]


def suffix_table(lexer: Lexer, index: VocabIndex) -> SuffixTable:
    """Walk every pair of the vocabulary from ``lexer``'s empty lexeme (vectorized)."""
    n = len(index.flat)
    nxt = np.full(n, DEAD, dtype=np.int32)
    state = np.zeros(n, dtype=np.int32)
    trans, acc_any, flat, end_of = lexer.trans, lexer.acc_any, index.flat, index.end_of
    orig = np.arange(n, dtype=np.int32)
    st = trans[0, flat]
    live = st >= 0
    orig, st = orig[live], st[live]
    p = orig + 1
    while len(p):
        done = p >= end_of[orig]
        if done.any():
            nxt[orig[done]] = OK
            keep = ~done
            orig, st, p = orig[keep], st[keep], p[keep]
            if not len(p):
                break
        n2 = trans[st, flat[p]]
        dead = n2 < 0
        if dead.any():
            ends = dead & acc_any[st]
            if ends.any():
                nxt[orig[ends]] = p[ends]
                state[orig[ends]] = st[ends]
            keep = ~dead
            orig, n2, p = orig[keep], n2[keep], p[keep]
        st = n2
        p = p + 1
    nxt.setflags(write=False)
    state.setflags(write=False)
    return SuffixTable(nxt, state)
