"""Vectorized walks of many token (suffixes) through a lexer, split by where lexemes end.

``walk_lexer(lexer, index, tokens, offsets, start)`` reads ``token[offset:]`` for every pair from
lexer state ``start`` and sorts each pair into

- ``ok``: every byte extended the current lexeme and the lexer is still alive at the token's end
  (the lexeme may continue or end later: greedy lookahead stays open);
- a crossing group ``(q, tokens, offsets)``: the byte at ``offset`` cannot extend the lexeme, the
  lexeme read so far is complete in lexer state ``q`` (it is a full match of
  ``lexer.accepting_terms[q]``) and the next lexeme starts at ``offset``;
- dropped: the byte cannot extend the lexeme and the lexeme is not a full match.

No Python loop runs over tokens: each step advances all pairs still alive by one byte.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

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


@dataclass(frozen=True)
class WalkResult:
    """See ``walk_lexer``."""

    ok: np.ndarray                                            # int32 token ids
    groups: tuple[tuple[int, np.ndarray, np.ndarray], ...]    # (lexer state, ids, offsets)


def walk_lexer(lexer: Lexer, index: VocabIndex, tokens: np.ndarray, offsets: np.ndarray,
               start: int) -> WalkResult:
    """Walk ``tokens[i][offsets[i]:]`` from lexer state ``start`` (see the module docstring)."""
    trans, acc_any = lexer.trans, lexer.acc_any
    bm, lengths = index.bytes, index.lengths
    tok = np.asarray(tokens, dtype=np.int32)
    off = np.asarray(offsets, dtype=np.int32)
    st = np.full(len(tok), start, dtype=np.int32)
    tok_len = lengths[tok]
    ok_parts: list[np.ndarray] = []
    c_tok: list[np.ndarray] = []
    c_off: list[np.ndarray] = []
    c_st: list[np.ndarray] = []
    while len(tok):
        done = off >= tok_len
        if done.any():
            ok_parts.append(tok[done])
            keep = ~done
            tok, off, st, tok_len = tok[keep], off[keep], st[keep], tok_len[keep]
            if not len(tok):
                break
        nxt = trans[st, bm[tok, off]]
        dead = nxt < 0
        if dead.any():
            ends = dead & acc_any[st]
            if ends.any():
                c_tok.append(tok[ends])
                c_off.append(off[ends])
                c_st.append(st[ends])
            keep = ~dead
            tok, off, nxt, tok_len = tok[keep], off[keep], nxt[keep], tok_len[keep]
        st = nxt
        off = off + 1
    ok = np.concatenate(ok_parts) if ok_parts else np.zeros(0, np.int32)
    groups: list[tuple[int, np.ndarray, np.ndarray]] = []
    if c_tok:
        ct, co, cs = np.concatenate(c_tok), np.concatenate(c_off), np.concatenate(c_st)
        order = np.argsort(cs, kind="stable")
        ct, co, cs = ct[order], co[order], cs[order]
        bounds = np.flatnonzero(np.diff(cs)) + 1
        for t, o, s in zip(np.split(ct, bounds), np.split(co, bounds), np.split(cs, bounds)):
            groups.append((int(s[0]), t, o))
    return WalkResult(ok, tuple(groups))


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
