"""Exact token masks for a matcher state, from vectorized lexer walks and a few parser steps.

For a state ``(column, q)`` the vocabulary splits, in one walk from ``q`` (cached per lexer
state), into tokens that stay inside the current lexeme (allowed: the lexer is still alive) and
tokens that end the lexeme at some byte, grouped by the lexer state there. Only those groups
touch the parser: the column advances over the group's terminals and the token remainders are
walked from the new lexeme start, again vectorized and cached by the walk's path, recursing for
tokens that span several lexemes (``"},{"``). What each group contributes depends only on the
interned column it reaches, so contributions are memoized by (path, column id), and whole masks
by (column id, q). Every cache is a bounded LRU.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..bitmask import bitmask_words, set_bits, token_ids_to_bitmask
from ..vocabulary import Vocabulary
from .earley import Column
from .lru import LRUCache
from .runtime import Runtime, State
from .token_tables import VocabIndex, WalkResult, vocab_index, walk_lexer

_EMPTY = np.zeros(0, dtype=np.int32)


class MaskEngine:
    """Computes and memoizes packed masks (int32 words over ``vocab.size``)."""

    def __init__(self, runtime: Runtime, vocab: Vocabulary, *, mask_cache_size: int = 2048,
                 table_cache_size: int = 4096) -> None:
        self.runtime = runtime
        self.vocab = vocab
        self.words = bitmask_words(vocab.size)
        self.index: VocabIndex = vocab_index(vocab)
        self.eos_ids = np.array(sorted(vocab.eos_token_ids), dtype=np.int64)
        self._masks = LRUCache(mask_cache_size)          # (col.id, q) -> words
        self._roots = LRUCache(table_cache_size)         # (candidates, q) -> (words, walk, node)
        self._walks = LRUCache(table_cache_size)         # node -> WalkResult
        self._contrib = LRUCache(table_cache_size * 4)   # (node, col.id) -> token ids
        self._node_ids: dict[tuple, int] = {}
        self._next_node = itertools.count(1)

    def _node(self, key: tuple) -> int:
        nid = self._node_ids.get(key)
        if nid is None:
            if len(self._node_ids) > 1_000_000:
                self._node_ids.clear()   # ids are never reused: old cache entries just miss
            nid = self._node_ids.setdefault(key, next(self._next_node))
        return nid

    def mask(self, state: State) -> np.ndarray:
        """Read-only packed mask of the tokens allowed after ``state`` (EOS included)."""
        col, q = state
        key = (col.id, q)
        out = self._masks.get(key)
        if out is not None:
            return out
        out = self._compute(col, q)
        out.setflags(write=False)
        return self._masks.put(key, out)

    def _root(self, col: Column, q: int) -> tuple:
        rkey = (col.candidates, q)
        root = self._roots.get(rkey)
        if root is None:
            lex = self.runtime.lexer(col.candidates)
            ids = self.index.text_ids
            walk = walk_lexer(lex, self.index, ids, np.zeros(len(ids), np.int32), q)
            words = token_ids_to_bitmask(walk.ok, self.vocab.size)
            words.setflags(write=False)
            root = self._roots.put(rkey, (words, walk, self._node(rkey)))
        return root

    def _compute(self, col: Column, q: int) -> np.ndarray:
        words, walk, node = self._root(col, q)
        out = words.copy()
        lex = self.runtime.lexer(col.candidates)
        parts = []
        for qk, toks, offs in walk.groups:
            nxt = col.advance(lex.accepting_terms[qk])
            if nxt is not None:
                parts.append(self._contribution(self._node((node, qk)), nxt, toks, offs))
        if parts:
            ids = np.concatenate(parts)
            if len(ids):
                set_bits(out, ids)
        if self.runtime.is_accepting((col, q)):
            set_bits(out, self.eos_ids)
        return out

    def _contribution(self, edge: int, col: Column, toks: np.ndarray,
                      offs: np.ndarray) -> np.ndarray:
        """Ids of the tokens whose remainders ``toks[offs:]`` are viable from a new lexeme."""
        ckey = (edge, col.id)
        ids = self._contrib.get(ckey)
        if ids is not None:
            return ids
        wkey = self._node((edge, col.candidates))
        walk: WalkResult | None = self._walks.get(wkey)
        if walk is None:
            lex = self.runtime.lexer(col.candidates)
            walk = self._walks.put(wkey, walk_lexer(lex, self.index, toks, offs, 0))
        lex = self.runtime.lexer(col.candidates)
        parts = [walk.ok]
        for qk, t2, o2 in walk.groups:
            nxt = col.advance(lex.accepting_terms[qk])
            if nxt is not None:
                parts.append(self._contribution(self._node((wkey, qk)), nxt, t2, o2))
        ids = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return self._contrib.put(ckey, ids)
