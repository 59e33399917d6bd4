"""Exact token masks for a matcher state, from token walks and a few parser steps.

For a state ``(column, q)`` one walk of every token from lexer state ``q`` (the *root*, cached
per (candidate set, q)) over the token trie splits the vocabulary into tokens that stay inside
the current lexeme (allowed: the lexer is still alive at their end) and tokens that end the
lexeme at some byte (at a trie node), grouped by the terminal set the lexeme completes. Only
those groups touch the parser: the column advances over the group's terminals and the subtrees
below the group's nodes are read from a new lexeme of the next column's candidate set,
recursing for tokens that span several lexemes (``"},{"``). Walks below the root depend only on
the candidate set they start in (the nodes are fixed by the path, the *edge*), so each is
computed once per (edge, candidate set). A mask is then a traversal of cached nodes plus ``Column.advance`` calls (memoized per
column), and whole masks are memoized by (column id, q). Every cache is bounded. The walks
themselves run in C (token_tables).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..bitmask import bitmask_words, set_bits, token_ids_to_bitmask
from ..vocabulary import Vocabulary
from .earley import Column
from .lru import LRUCache
from .runtime import Runtime, State
from .token_tables import PreorderTrie, preorder_trie, walk_subtrees, walk_trie

# ok sets larger than this are kept as packed words (OR) rather than ids (set bits)
_PACK = 512


class _Node:
    """What one walk found, for a given edge (how its remainders were reached) and lexer."""

    __slots__ = ("words", "ids", "children")

    def __init__(self, ok: np.ndarray, packed: bool, children: tuple, size: int) -> None:
        if not packed and len(ok) > _PACK:
            ok, packed = token_ids_to_bitmask(ok, size), True
        if packed:
            ok.setflags(write=False)
        self.words = ok if packed else None
        self.ids = None if packed else ok
        self.children = children   # ((terminal set, child edge, roots, {candidates: node}),)


class MaskEngine:
    """Computes and memoizes packed masks (int32 words over ``vocab.size``).

    The walk below an edge depends only on the candidate set of the column it starts at, so
    walks are cached by (edge, candidates); the parser is consulted only to advance columns.
    """

    def __init__(self, runtime: Runtime, vocab: Vocabulary, *, mask_cache_size: int = 2048,
                 table_cache_size: int = 65536, disk_cache: bool = True) -> None:
        self.runtime = runtime
        self.vocab = vocab
        self.words = bitmask_words(vocab.size)
        self.trie: PreorderTrie = preorder_trie(vocab, disk_cache)
        self.eos_ids = np.array(sorted(vocab.eos_token_ids), dtype=np.int64)
        self.disk = disk_cache
        self._masks = LRUCache(mask_cache_size)          # (col.id, q) -> words
        self._nodes = LRUCache(table_cache_size)         # (edge, candidates) -> _Node
        self._node_ids: dict[tuple, int] = {}
        self._next_node = itertools.count(1)

    def _edge(self, key: tuple) -> int:
        nid = self._node_ids.get(key)
        if nid is None:
            if len(self._node_ids) > 200_000:
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

    def _compute(self, col: Column, q: int) -> np.ndarray:
        out = np.zeros(self.words, dtype=np.int32)
        ids: list[np.ndarray] = []
        root = self._root(col.candidates, q)
        self._collect(root, col, out, ids)
        if ids:
            allids = np.concatenate(ids)
            if len(allids):
                set_bits(out, allids)
        if self.runtime.is_accepting((col, q)):
            set_bits(out, self.eos_ids)
        return out

    def _collect(self, node: _Node, col: Column, out: np.ndarray, ids: list) -> None:
        if node.words is not None:
            np.bitwise_or(out, node.words, out=out)
        elif len(node.ids):
            ids.append(node.ids)
        for terms, edge, roots, resolved in node.children:
            nxt = col.advance(terms)
            if nxt is None:
                continue
            # children already walked for this candidate set are linked from their parent,
            # skipping the shared cache (they live as long as the parent does)
            child = resolved.get(nxt.candidates)
            if child is None:
                child = self._child(edge, nxt.candidates, roots)
                if len(resolved) < 8:
                    resolved[nxt.candidates] = child
            self._collect(child, nxt, out, ids)

    # walks ---------------------------------------------------------------------------------
    def _root(self, candidates: frozenset, q: int) -> _Node:
        """Every text token read from lexer state ``q``."""
        key = (-1, candidates, q)
        node = self._nodes.get(key)
        if node is None:
            words, groups = walk_trie(self.runtime.lexer(candidates), self.trie, q)
            node = self._node(key, words, True, groups)
        return node

    def _child(self, edge: int, candidates: frozenset, roots: np.ndarray) -> _Node:
        """The tokens below trie nodes ``roots`` read from an empty lexeme of ``candidates``."""
        key = (edge, candidates)
        node = self._nodes.get(key)
        if node is None:
            ok, groups = walk_subtrees(self.runtime.lexer(candidates), self.trie, roots)
            node = self._node(key, ok, False, groups)
        return node

    def _node(self, key: tuple, ok: np.ndarray, packed: bool, groups: list) -> _Node:
        edge = self._edge(key)
        children = tuple((terms, self._edge((edge, terms)), p, {}) for terms, p in groups)
        return self._nodes.put(key, _Node(ok, packed, children, self.vocab.size))
