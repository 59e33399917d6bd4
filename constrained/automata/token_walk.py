"""Walk every token of a vocabulary through a byte DFA at once, over a token trie, with numpy.

``walk_tokens(dfa, vocab, state)`` returns int32[vocab.n_tokens]: the DFA state after reading each
token's bytes from ``state``, or -1 when the token leads to a dead prefix. Special tokens (EOS
included) and empty tokens are always -1: they carry no grammar text. ``walk_tokens_many`` does
the same for several start states and returns int32[len(states), n_tokens].

The text tokens, and the special tokens spelled as ``special_spelling`` (a byte no text holds,
then the id: grammars that name a special token match exactly that spelling), are arranged once
per vocabulary into a trie of distinct prefixes (llama3: 275k
nodes for 839k token bytes), numbered depth by depth so the children of a node are contiguous.
The walk advances only the children of nodes still alive, one depth at a time: its cost is the
number of viable prefixes, never the vocabulary size times the token length. The trie is kept
in the disk cache (keyed by the vocabulary hash) so a new process does not rebuild it.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from ..vocabulary import Vocabulary, special_spelling
from .byte_dfa import ByteDFA
from .disk_cache import cache_name, load_arrays, save_arrays


@dataclass(frozen=True, eq=False)
class _Trie:
    node_byte: np.ndarray      # uint8[N]: last byte of each node's prefix
    child_start: np.ndarray    # int64[N]: first child (children are contiguous)
    child_count: np.ndarray    # int64[N]
    n_roots: int               # nodes 0..n_roots-1 are the depth-1 prefixes
    token_ids: np.ndarray      # int64[k]: text tokens
    token_node: np.ndarray     # int64[k]: node of each text token's full bytes
    n_nodes: int
    n_tokens: int

    @cached_property
    def byte64(self) -> np.ndarray:
        """node_byte as int64, ready for flat indexing into a transition table."""
        return self.node_byte.astype(np.int64)


_TRIES: "weakref.WeakKeyDictionary[Vocabulary, _Trie]" = weakref.WeakKeyDictionary()


def _build_trie(vocab: Vocabulary) -> _Trie:
    n = vocab.n_tokens
    text = np.nonzero(vocab.text_token_mask[:n])[0]
    spelled = list(vocab.token_bytes)
    for tid in vocab.special_token_ids:
        spelled[tid] = special_spelling(tid)
    order = sorted(text.tolist() + sorted(vocab.special_token_ids), key=spelled.__getitem__)
    ids = np.array(order, dtype=np.int64)
    words = [spelled[i] for i in order]
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    width = int(lengths.max(initial=0))
    mat = _byte_matrix(words, lengths, width)
    # longest common prefix with the previous token in sorted order
    lcp = np.zeros(len(ids), dtype=np.int64)
    if len(ids) > 1:
        same = mat[1:] == mat[:-1]
        cols = np.arange(width)
        same &= cols[None, :] < np.minimum(lengths[1:], lengths[:-1])[:, None]
        first_diff = np.where(same.all(axis=1), width, np.argmin(same, axis=1))
        lcp[1:] = first_diff
    node_byte, parents, token_node = [], [], np.zeros(len(ids), dtype=np.int64)
    offset = 0
    pos = np.arange(len(ids))                 # positions with length >= depth
    prev_node_of_pos = None                   # node id (global) per position at depth-1
    for d in range(1, width + 1):
        keep = lengths[pos] >= d
        pos = pos[keep]
        if prev_node_of_pos is not None:
            prev_node_of_pos = prev_node_of_pos[keep]
        new = lcp[pos] < d
        local = np.cumsum(new) - 1
        node_of_pos = local + offset
        starts = pos[new]
        node_byte.append(mat[starts, d - 1])
        if prev_node_of_pos is not None:
            parents.append(prev_node_of_pos[new])
        ends_here = lengths[pos] == d
        token_node[pos[ends_here]] = node_of_pos[ends_here]
        offset += int(new.sum())
        prev_node_of_pos = node_of_pos
    n_nodes = offset
    n_roots = len(node_byte[0]) if node_byte else 0
    parent = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
    child_count = np.bincount(parent, minlength=n_nodes).astype(np.int64)
    child_start = np.full(n_nodes, n_nodes, dtype=np.int64)
    if len(parent):
        # children of a node are contiguous and start right after the roots, in parent order
        first = np.concatenate([[True], parent[1:] != parent[:-1]])
        child_start[parent[first]] = n_roots + np.nonzero(first)[0]
    return _Trie(np.concatenate(node_byte) if node_byte else np.zeros(0, np.uint8),
                 child_start, child_count, n_roots, ids, token_node, n_nodes, n)


_FIELDS = ("node_byte", "child_start", "child_count", "token_ids", "token_node")


def _byte_matrix(words: list[bytes], lengths: np.ndarray, width: int) -> np.ndarray:
    """uint8[len(words), width]: the words zero-padded on the right."""
    flat = np.frombuffer(b"".join(words), dtype=np.uint8)
    out = np.zeros((len(words), max(1, width)), dtype=np.uint8)
    rows = np.repeat(np.arange(len(words)), lengths)
    starts = np.cumsum(lengths) - lengths
    out[rows, np.arange(len(flat)) - np.repeat(starts, lengths)] = flat
    return out[:, :width]


def _load_trie(vocab: Vocabulary, name: str) -> _Trie | None:
    data = load_arrays(name)
    if data is None or any(f not in data for f in _FIELDS):
        return None
    n_nodes = len(data["node_byte"])
    try:
        meta = data["meta"].tolist()
        n_roots, n_tokens = int(meta[0]), int(meta[1])
    except (KeyError, IndexError, ValueError):
        return None
    ok = (n_tokens == vocab.n_tokens and len(data["child_start"]) == n_nodes
          and len(data["child_count"]) == n_nodes and len(data["token_ids"]) ==
          len(data["token_node"]) and 0 <= n_roots <= n_nodes)
    if not ok:
        return None
    return _Trie(data["node_byte"], data["child_start"], data["child_count"], n_roots,
                 data["token_ids"], data["token_node"], n_nodes, n_tokens)


def _trie(vocab: Vocabulary, disk_cache: bool = True) -> _Trie:
    """The vocabulary's trie: from memory, else from the disk cache, else built (and saved)."""
    t = _TRIES.get(vocab)
    if t is None:
        name = cache_name("tokentrie", "v3", vocab.hash)
        t = _load_trie(vocab, name) if disk_cache else None
        if t is None:
            t = _build_trie(vocab)
            if disk_cache:
                save_arrays(name, {**{f: getattr(t, f) for f in _FIELDS},
                                   "meta": np.array([t.n_roots, t.n_tokens], dtype=np.int64)})
        _TRIES[vocab] = t
    return t


@dataclass(frozen=True, eq=False)
class TrieSpans:
    """A vocabulary's token trie with, per node, its depth and the span of tokens below it.

    ``token_ids`` lists the text tokens in byte order, so the tokens whose bytes start with a
    node's prefix are exactly ``token_ids[lo[node]:hi[node]]``.
    """

    node_byte: np.ndarray     # int64[N]
    child_start: np.ndarray   # int64[N]
    child_count: np.ndarray   # int64[N]
    n_roots: int
    token_ids: np.ndarray     # int64[k], byte order
    token_node: np.ndarray    # int64[k]
    depth: np.ndarray         # int64[N]: prefix length of each node
    lo: np.ndarray            # int64[N]
    hi: np.ndarray            # int64[N]


_SPANS: "weakref.WeakKeyDictionary[Vocabulary, TrieSpans]" = weakref.WeakKeyDictionary()


def trie_spans(vocab: Vocabulary, disk_cache: bool = True) -> TrieSpans:
    """The token trie of ``vocab`` with node depths and token spans (built once per
    vocabulary and process, from the cached trie)."""
    spans = _SPANS.get(vocab)
    if spans is not None:
        return spans
    t = _trie(vocab, disk_cache)
    n, k = t.n_nodes, len(t.token_ids)
    parent = np.full(n, -1, dtype=np.int64)
    parent[t.n_roots:] = np.repeat(np.arange(n, dtype=np.int64), t.child_count)[: n - t.n_roots]
    bounds = [0, t.n_roots]
    while bounds[-1] < n:
        bounds.append(bounds[-1] + int(t.child_count[bounds[-2]:bounds[-1]].sum()))
    depth = np.zeros(n, dtype=np.int64)
    for d in range(1, len(bounds)):
        depth[bounds[d - 1]:bounds[d]] = d
    lo = np.full(n, k, dtype=np.int64)
    hi = np.zeros(n, dtype=np.int64)
    positions = np.arange(k, dtype=np.int64)
    np.minimum.at(lo, t.token_node, positions)
    np.maximum.at(hi, t.token_node, positions + 1)
    for d in range(len(bounds) - 1, 1, -1):        # children before their parents
        nodes = np.arange(bounds[d - 1], bounds[d])
        np.minimum.at(lo, parent[nodes], lo[nodes])
        np.maximum.at(hi, parent[nodes], hi[nodes])
    spans = TrieSpans(t.byte64, t.child_start, t.child_count, t.n_roots, t.token_ids,
                      t.token_node, depth, lo, hi)
    _SPANS[vocab] = spans
    return spans


def concat_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` without a loop."""
    run_end = np.cumsum(counts)
    out = np.arange(int(run_end[-1]) if len(run_end) else 0, dtype=np.int64)
    out += np.repeat(starts - (run_end - counts), counts)
    return out


def trie_children(child_start: np.ndarray, child_count: np.ndarray,
                  nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All children of ``nodes`` (contiguous runs, one per parent, in order) and the number of
    children of each node."""
    counts = child_count.take(nodes)
    return concat_ranges(child_start.take(nodes), counts), counts


def _walk(trie: _Trie, trans: np.ndarray, state: int) -> np.ndarray:
    flat = trans.reshape(-1)
    byte = trie.byte64
    node_state = np.full(trie.n_nodes, -1, dtype=np.int32)
    st = flat.take(state * 256 + byte[:trie.n_roots])
    nodes = np.nonzero(st >= 0)[0]
    st = st.take(nodes)
    while len(nodes):
        node_state[nodes] = st
        children, counts = trie_children(trie.child_start, trie.child_count, nodes)
        if not len(children):
            break
        st = flat.take(np.repeat(st.astype(np.int64) * 256, counts) + byte.take(children))
        keep = np.nonzero(st >= 0)[0]
        nodes, st = children.take(keep), st.take(keep)
    return node_state


def walk_tokens_many(dfa: ByteDFA, vocab: Vocabulary, states: Sequence[int], *,
                     disk_cache: bool = True) -> np.ndarray:
    """int32[len(states), n_tokens]: end state of every token from every start state (-1 dead).

    ``disk_cache=False`` keeps the vocabulary's trie out of the disk cache.
    """
    trie = _trie(vocab, disk_cache)
    states = [int(s) for s in np.asarray(states).reshape(-1)]
    out = np.full((len(states), trie.n_tokens), -1, dtype=np.int32)
    if trie.n_nodes == 0 or dfa.n_states == 0:
        return out
    for i, s in enumerate(states):
        if s >= 0:
            out[i, trie.token_ids] = _walk(trie, dfa.transitions, s)[trie.token_node]
    if vocab.special_token_ids:
        out[:, np.fromiter(vocab.special_token_ids, dtype=np.int64)] = -1
    return out


def walk_tokens(dfa: ByteDFA, vocab: Vocabulary, state: int, *,
                disk_cache: bool = True) -> np.ndarray:
    """int32[n_tokens]: end state of every token read from ``state`` (-1 dead or special)."""
    return walk_tokens_many(dfa, vocab, [state], disk_cache=disk_cache)[0]
