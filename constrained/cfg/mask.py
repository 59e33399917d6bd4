"""Exact token masks for a matcher state, from token walks and a few parser steps.

For a state ``(column, q)`` one walk of every token from lexer state ``q`` (the *root*, cached
per (candidate set, q)) over the token trie splits the vocabulary into tokens that stay inside
the current lexeme (allowed: the lexer is still alive at their end) and tokens that end the
lexeme at some byte (at a trie node), grouped by the terminal set the lexeme completes. Only
those groups touch the parser: the column advances over the group's terminals and the subtrees
below the group's nodes are read from a new lexeme of the next column's candidate set,
recursing for tokens that span several lexemes (``"},{"``). A walk below the root depends only
on the trie nodes it starts from (the *edge*, identified by content: different paths often reach
the same nodes) and the candidate set it reads with, so each is computed once per (edge,
candidate set). A mask is then a traversal of cached nodes plus ``EarleyParser.advance`` calls
(memoized by the parser); whole masks are memoized by (column id, q), and the large subtrees below
the root's children by (edge, column id), since new lexer states and new columns often lead to
known columns. Every cache is bounded. The walks run in C (token_tables), and so do the traversal
and the OR of the parts found (``_assemble.c``).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..bitmask import bitmask_words
from ..errors import LimitExceededError
from ..vocabulary import Vocabulary
from .earley import DEAD, Column
from ..lru import LRUCache
from .runtime import Runtime, State
from ._assemble import assemble_mask, descend
from ..gc_untrack import untrack_all
from .token_tables import (PreorderTrie, preorder_trie, slice_marker, walk_slice_rests,
                           walk_subtrees, walk_trie)

# ok sets larger than this are kept as packed words (OR) rather than ids (set bits)
_PACK = 512
# subtrees whose traversal visits at least this many nodes keep their result per column
_MEMO_VISITS = 8
_NO_IDS = np.zeros(0, dtype=np.int32)
_MAX_EDGE_BYTES = 64 << 20


class _Node:
    """What one walk found, for a given edge (how its remainders were reached) and lexer."""

    __slots__ = ("words", "ids", "children", "empty")

    def __init__(self, ok: np.ndarray, packed: bool, children: tuple, size: int) -> None:
        if not packed and len(ok) > _PACK:
            words = np.zeros(bitmask_words(size), dtype=np.int32)
            assemble_mask(words, [], [ok], size)
            ok, packed = words, True
        if packed:
            ok.setflags(write=False)
        self.words = ok if packed else None
        self.ids = None if packed else ok
        # ((terminal set, its id, child edge, roots, {candidates: node}),)
        self.children = children
        self.empty = not packed and not len(ok) and not children   # contributes nothing


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
        self.eos_ids = np.array(sorted(vocab.eos_token_ids), dtype=np.int32)
        self.disk = disk_cache
        self._advanced = runtime.parser.advanced
        self._advance = runtime.parser.advance
        self.empty_mask = np.zeros(self.words, dtype=np.int32)
        self.empty_mask.setflags(write=False)
        self._masks = LRUCache(mask_cache_size)          # col.id << 32 | q -> words
        self._nodes = LRUCache(table_cache_size)         # (edge, candidates) -> _Node
        self._subtrees = LRUCache(table_cache_size)      # column id << 32 | edge -> (words, ids)
        self._edge_ids: dict[bytes, int] = {}           # trie node set -> edge id
        self._edge_bytes = 0
        self._next_edge = itertools.count(1)
        self._nothing = _Node(_NO_IDS, False, (), vocab.size)

    def _edge(self, roots: np.ndarray) -> int:
        """A small id for a set of trie nodes (walks below equal sets are equal)."""
        key = roots.tobytes()
        nid = self._edge_ids.get(key)
        if nid is None:
            if len(self._edge_ids) >= 100_000 or self._edge_bytes > _MAX_EDGE_BYTES:
                self._edge_ids = {}     # ids are never reused: old cache entries just miss
                self._edge_bytes = 0
            self._edge_bytes += len(key)
            nid = self._edge_ids.setdefault(key, next(self._next_edge))
            if nid >= 1 << 32:     # the subtree memo packs edge ids into 32 bits
                raise LimitExceededError("more than 2**32 trie node sets were numbered by one "
                                         "compiled grammar; compile it again")
        return nid

    def mask(self, state: State) -> np.ndarray:
        """Read-only packed mask of the tokens allowed after ``state`` (EOS included); a mask
        allowing nothing is always the object ``empty_mask``."""
        col, q = state
        key = col.id << 32 | q
        out = self._masks.get(key)
        if out is not None:
            return out
        out = self._compute(col, q)
        out.setflags(write=False)
        return self._masks.put(key, out)

    def _compute(self, col: Column, q: int) -> np.ndarray:
        out = np.zeros(self.words, dtype=np.int32)
        words: list[np.ndarray] = []
        ids: list[np.ndarray] = []
        root = self._root(col.candidates, q)
        self._collect(root, col, words, ids)
        if self.runtime.is_accepting((col, q)):
            ids.append(self.eos_ids)
        return out if assemble_mask(out, words, ids, self.vocab.size) else self.empty_mask

    def _collect(self, root: _Node, col: Column, words: list, ids: list) -> None:
        """Appends the packed words and id arrays of ``root`` read at ``col``. The subtrees
        below the root's children are memoized by (edge, column) when large: a new lexer state
        or column often leads to known columns."""
        if root.words is not None:
            words.append(root.words)
        elif len(root.ids):
            ids.append(root.ids)
        for terms, set_id, edge, roots, resolved in root.children:
            nxt = self._advance(col, terms, set_id)
            if nxt is None:
                continue
            key = nxt.id << 32 | edge
            done = self._subtrees.get(key)
            if done is not None:
                words.extend(done[0])
                ids.append(done[1])
                continue
            w0, i0 = len(words), len(ids)
            child = resolved.get(nxt.candidates) or self._resolve(resolved, edge, nxt, roots)
            visited = self._descend(child, nxt, words, ids)
            if visited >= _MEMO_VISITS:
                sub = ids[i0:]
                done = (tuple(words[w0:]), np.concatenate(sub) if sub else _NO_IDS)
                untrack_all(done[0], done)
                self._subtrees.put(key, done)

    def _descend(self, node: _Node, col: Column, words: list, ids: list) -> int:
        """Appends the parts of the subtree ``node`` read at ``col`` (in C: chains of one-lexeme
        steps, like a token of 64 dashes, run deep); returns the nodes visited."""
        advanced = self._advanced
        return descend(node, col, words, ids, advanced.recent, advanced.get, self._advance,
                       self._resolve, DEAD)

    def _resolve(self, resolved: dict, edge: int, col: Column, roots: np.ndarray) -> _Node:
        """The walk below ``roots`` for ``col``'s candidates, not yet in ``resolved``: children
        walked for a candidate set are linked from their parent (they live as long as it does),
        so the traversal looks them up there before calling this."""
        child = self._child(edge, col.candidates, roots)
        if len(resolved) < 8:
            resolved[col.candidates] = child
            untrack_all(resolved)       # (an insertion tracks it again)
        return child

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
        if not candidates:      # (a complete parse expects nothing: no byte goes on)
            return self._nothing
        key = (edge, candidates)
        node = self._nodes.get(key)
        if node is None:
            lexer = self.runtime.lexer(candidates)
            k = slice_marker(roots)
            if k is not None:       # the slice tokens of more than k characters
                words, groups = walk_slice_rests(lexer, self.trie, k)
                node = self._node(key, words, True, groups)
            else:
                ok, groups = walk_subtrees(lexer, self.trie, roots)
                node = self._node(key, ok, False, groups)
        return node

    def _node(self, key: tuple, ok: np.ndarray, packed: bool, groups: list) -> _Node:
        set_id = self.runtime.parser.terminal_set_id
        children = tuple((terms, set_id(terms), self._edge(p), p, {}) for terms, p in groups)
        node = _Node(ok, packed, children, self.vocab.size)
        # a node refers only to nodes of deeper trie nodes (its children's ``resolved``
        # dicts, which the collector keeps tracking): no cycle
        for child in children:
            untrack_all(child[0], child)
        untrack_all(children, node, key)
        return self._nodes.put(key, node)
