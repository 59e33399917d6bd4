"""Walks of tokens through a lexer over the vocabulary's token trie, split by where lexemes end.

``walk_trie(lexer, trie, start)`` reads every text token from lexer state ``start``;
``walk_subtrees(lexer, trie, roots)`` reads, from the empty lexeme, the tokens below trie
nodes ``roots`` from each root's byte on (the remainders of tokens whose previous lexeme ended
just before that byte). Each token ends up

- ``ok``: every byte extended the current lexeme and the lexer is still alive at the token's end
  (the lexeme may continue or end later: greedy lookahead stays open);
- crossing at a trie node: the node's byte cannot extend the lexeme, the lexeme read so far is
  a full match of some terminals and the next lexeme starts at that byte, for every token below
  the node;
- dropped: the byte cannot extend the lexeme and the lexeme is not a full match.

Crossing nodes come back grouped by the terminal set the lexeme completes (the lexer's
accepting class). Where every text token longer than the K characters a lexeme has left
crosses at its character K + 1 (the end of a long string's chunk), one marker node
``-1 - K`` stands for all of them (``slice_marker``), and ``walk_slice_rests`` reads their
remainders from the next lexeme as differences of text slice rows. The loops run in C
(``_walks.c``) over the trie in preorder: a walk costs the number of trie nodes it reaches,
never the vocabulary size, and a subtree whose bytes all loop on the current lexer state
(string contents) is taken whole without being visited.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..automata.byte_dfa import regex_to_byte_dfa
from ..automata.disk_cache import cache_name, load_arrays, save_arrays
from ..automata.token_walk import trie_spans
from ..bitmask import bitmask_words
from ..vocabulary import Vocabulary
from . import _walks
from ._assemble import assemble_mask
from ..gc_untrack import untrack_all
from .lexer import Lexer
from ..lru import LRUCache


@dataclass(frozen=True, eq=False)
class PreorderTrie:
    """A vocabulary's token trie numbered in preorder: node ``i``'s subtree is the range
    ``[i, skip[i])``; its tokens are ``token_ids[lo[i]:hi[i]]``, the first ``own[i]`` of them
    ending exactly at the node (a prefix sorts before its extensions)."""

    node_byte: np.ndarray     # uint8: last byte of the node's prefix
    depth: np.ndarray         # int16: prefix length (>= 1)
    skip: np.ndarray          # int32: first node after the subtree
    lo: np.ndarray            # int32
    hi: np.ndarray            # int32
    own: np.ndarray           # int32
    token_ids: np.ndarray     # int32: text tokens in byte order
    sub_id: np.ndarray        # int32: the node's row of sub_sets
    sub_sets: np.ndarray      # uint64[m, 4]: bytes of a node and of every node below it
    clean: np.ndarray         # uint8: bit r when the text automaton reads the subtree from r
    slice_chars: np.ndarray   # uint8: text slice nodes (see _walks.c), their tokens' most chars
    text_slice: np.ndarray    # uint32[SLICE_CHARS + 1, words]: row k, slice tokens of <= k chars
    rest: np.ndarray          # uint8: the most bytes of a token below, from the node's byte on
    ends: np.ndarray          # int32: the one token ending at the node, -1 if none, -2 if several
    max_depth: int
    words: int                # int32 words of a bitmask holding every token id
    vocab_hash: str

    @property
    def n_nodes(self) -> int:
        return len(self.node_byte)


# JSON string characters (every UTF-8 scalar but '"', '\\' and controls): a lexer state that
# keeps reading them takes whole subtrees of such text as ok (token_tables._walk, _walks.c)
_TEXT = regex_to_byte_dfa(r'[^"\\\x00-\x1f]*')
# text slices cover tokens of up to this many characters (longer ones are walked)
SLICE_CHARS = 32

_PREORDER: "weakref.WeakKeyDictionary[Vocabulary, PreorderTrie]" = weakref.WeakKeyDictionary()


_PREORDER_FIELDS = ("node_byte", "depth", "skip", "lo", "hi", "own", "token_ids", "ends",
                    "clean", "rest", "sub_id", "sub_sets")


def preorder_trie(vocab: Vocabulary, disk_cache: bool = True) -> PreorderTrie:
    """The token trie of ``vocab`` in preorder (built once per vocabulary and process, and
    kept in the disk cache: a new process loads it instead of sorting the trie again)."""
    pre = _PREORDER.get(vocab)
    if pre is None:
        name = cache_name("preorder", "v3", vocab.hash)
        arrays = _load_preorder(vocab, name) if disk_cache else None
        if arrays is None:
            arrays = _preorder_arrays(vocab, disk_cache)
            if disk_cache:
                save_arrays(name, arrays)
        node_byte, skip, clean = arrays["node_byte"], arrays["skip"], arrays["clean"]
        depth = arrays["depth"]
        words = bitmask_words(vocab.size)
        slices_name = cache_name("textslices", f"v1-{SLICE_CHARS}", vocab.hash)
        slices = _load_slices(slices_name, len(node_byte), words) if disk_cache else None
        if slices is None:
            slices = _text_slices(arrays, clean, words)
            if disk_cache:
                save_arrays(slices_name, {"slice_chars": slices[0], "text_slice": slices[1]})
        slice_chars, text_slice = slices
        pre = PreorderTrie(node_byte, depth, skip, arrays["lo"], arrays["hi"], arrays["own"],
                           arrays["token_ids"], arrays["sub_id"], arrays["sub_sets"], clean,
                           slice_chars, text_slice, arrays["rest"], arrays["ends"],
                           max(1, int(depth.max(initial=0))), words,
                           vocab.hash)
        _PREORDER[vocab] = pre
    return pre


def _text_slices(arrays: dict, clean: np.ndarray, words: int) -> tuple[np.ndarray, np.ndarray]:
    """The text slice nodes (with the most characters of a token below each) and, per number
    of characters k up to SLICE_CHARS, the tokens below them of at most k characters as
    bitmask words: every walk of the whole trie from a lexer state that reads any k characters
    of JSON string text takes row k at once instead of visiting those subtrees."""
    token_ids = arrays["token_ids"]
    slice_chars = np.zeros(len(clean), dtype=np.uint8)
    tok_chars = np.zeros(len(token_ids), dtype=np.uint8)
    _walks.slice_nodes(arrays["node_byte"], arrays["depth"], arrays["skip"], arrays["lo"],
                       arrays["own"], clean, _TEXT.transitions, _TEXT.initial, SLICE_CHARS,
                       slice_chars, tok_chars)
    inside = np.flatnonzero(tok_chars)
    bits = np.zeros((SLICE_CHARS + 1, words * 32), dtype=bool)
    bits[tok_chars[inside], token_ids[inside]] = True
    np.logical_or.accumulate(bits, axis=0, out=bits)
    text_slice = np.packbits(bits, axis=1, bitorder="little").view("<u4")
    text_slice.setflags(write=False)
    return slice_chars, text_slice


def _load_slices(name: str, n_nodes: int, words: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The text slices saved in the disk cache, when they fit this trie."""
    data = load_arrays(name)
    if data is None or "slice_chars" not in data or "text_slice" not in data:
        return None
    chars, rows = data["slice_chars"], data["text_slice"]
    if (chars.dtype != np.uint8 or chars.shape != (n_nodes,) or rows.dtype != np.dtype("<u4")
            or rows.shape != (SLICE_CHARS + 1, words)
            or (n_nodes and int(chars.max()) > SLICE_CHARS)):
        return None
    rows = np.ascontiguousarray(rows)
    rows.setflags(write=False)
    return chars, rows


def _ends(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """Per node, the one token ending exactly there (-1 when none, -2 when several: bytes
    spelled by more than one token)."""
    own, lo, ids = arrays["own"], arrays["lo"], arrays["token_ids"]
    first = ids[np.minimum(lo, max(len(ids) - 1, 0))] if len(ids) else np.zeros_like(own)
    return np.where(own == 1, first, np.where(own == 0, -1, -2)).astype(np.int32)


def _preorder_arrays(vocab: Vocabulary, disk_cache: bool) -> dict[str, np.ndarray]:
    spans = trie_spans(vocab, disk_cache)
    # preorder = by first token, ancestors (shorter prefixes) first
    order = np.lexsort((spans.depth, spans.lo))
    lo, hi = spans.lo[order], spans.hi[order]
    own = np.bincount(spans.token_node, minlength=len(spans.node_byte))[order]
    token_ids = spans.token_ids.astype(np.int32)
    words = bitmask_words(vocab.size)
    if len(token_ids) and not 0 <= int(token_ids.min()) <= int(token_ids.max()) < words * 32:
        raise ValueError("token ids outside the vocabulary size")
    arrays = {"node_byte": spans.node_byte[order].astype(np.uint8),
              "depth": spans.depth[order].astype(np.int16),
              "skip": np.searchsorted(lo, hi, side="left").astype(np.int32),
              "lo": lo.astype(np.int32), "hi": hi.astype(np.int32),
              "own": own.astype(np.int32), "token_ids": token_ids}
    # what walks read per node, kept with the trie (a new process reads it, not computes it)
    n = len(arrays["node_byte"])
    arrays["ends"] = _ends(arrays)
    arrays["clean"] = np.zeros(n, dtype=np.uint8)
    _walks.clean_bits(arrays["node_byte"], arrays["skip"], _TEXT.transitions, arrays["clean"])
    sub = np.zeros((n, 4), dtype=np.uint64)
    arrays["rest"] = np.zeros(n, dtype=np.uint8)
    _walks.subtree_bytes(arrays["node_byte"], arrays["skip"], sub, arrays["rest"])
    # nodes share few distinct byte sets (a tenth as many on llama3): each set kept once
    sets, ids = np.unique(sub.view(np.dtype((np.void, 32))).ravel(), return_inverse=True)
    arrays["sub_sets"] = np.frombuffer(sets.tobytes(), dtype=np.uint64).reshape(-1, 4)
    arrays["sub_id"] = ids.astype(np.int32).reshape(-1)
    return arrays


def _load_preorder(vocab: Vocabulary, name: str) -> dict[str, np.ndarray] | None:
    data = load_arrays(name)
    if data is None or any(f not in data for f in _PREORDER_FIELDS):
        return None
    n = len(data["node_byte"])
    dtypes = {"node_byte": np.uint8, "depth": np.int16, "skip": np.int32, "lo": np.int32,
              "hi": np.int32, "own": np.int32, "token_ids": np.int32, "ends": np.int32,
              "clean": np.uint8, "rest": np.uint8, "sub_id": np.int32, "sub_sets": np.uint64}
    ok = (all(len(data[f]) == n and data[f].dtype == dtypes[f]
              for f in _PREORDER_FIELDS if f not in ("token_ids", "sub_sets"))
          and data["sub_sets"].dtype == np.uint64 and data["sub_sets"].ndim == 2
          and data["sub_sets"].shape[1] == 4
          and data["token_ids"].dtype == np.int32
          and len(data["token_ids"]) <= vocab.n_tokens
          and (n == 0 or (0 <= int(data["skip"].min()) and int(data["skip"].max()) <= n)))
    if ok and len(data["token_ids"]):
        ids = data["token_ids"]
        ok = 0 <= int(ids.min()) and int(ids.max()) < vocab.n_tokens
    if ok and n:        # (a token id the walks write into a bitmask, a row they read)
        ok = (-2 <= int(data["ends"].min()) and int(data["ends"].max()) < vocab.n_tokens
              and 0 <= int(data["sub_id"].min())
              and int(data["sub_id"].max()) < len(data["sub_sets"]))
    return {f: data[f] for f in _PREORDER_FIELDS} if ok else None


_NONE = np.zeros(0, dtype=np.int32)


def _walk(lexer: Lexer, trie: PreorderTrie, start: int, roots: np.ndarray, as_words: bool):
    words = np.zeros(trie.words, dtype=np.int32) if as_words else _NONE
    _, ok, groups = _walks.walk(lexer.table, lexer.cross_class, int(start), trie.node_byte,
                                trie.depth, trie.skip, trie.lo, trie.hi, trie.own,
                                trie.token_ids, trie.sub_id, trie.max_depth, roots, words,
                                _TEXT.transitions, _TEXT.initial, trie.clean,
                                lexer.simulates_text, trie.text_slice if as_words else _NONE,
                                trie.slice_chars, lexer.text_chars, SLICE_CHARS, trie.rest,
                                lexer.text_cross, lexer.byte_class, trie.ends, trie.sub_sets)
    terms = lexer.class_terms
    groups = [(terms[c], np.frombuffer(nodes, dtype=np.int32)) for c, nodes in groups]
    return (words if as_words else np.frombuffer(ok, dtype=np.int32)), groups


# (vocabulary, live terminal automata and their states) -> (words, [(live positions, nodes)])
_ROOT_WALKS = LRUCache(512)
_FUTURE_STATES = 128    # automata up to this size are keyed by their states' futures


def walk_trie(lexer: Lexer, trie: PreorderTrie, start: int):
    """Every text token read from lexer state ``start``: (ok tokens as packed read-only bitmask
    words, [(terminals, nodes)]) where the lexeme read before each crossing node is a full
    match of exactly ``terminals``.

    The walk depends only on what the terminals still alive in ``start`` accept from their
    states on, so it is shared process-wide by every lexer (of any grammar) with the same ones:
    the contents of a JSON string, say, are walked once per process, and so is the text of a
    key outside an object's declared names, whatever the names.
    """
    memo = lexer.memo
    named = memo.get(("root walk", start))
    if named is None:
        comps = lexer.components[start].tolist()
        live = [c for c, s in enumerate(comps) if s >= 0]
        # small automata are named by what they accept from their state on: key-except and
        # literal automata of different schemas often reach states with equal futures (a
        # text's chain: the rest of its text)
        futures = tuple(_future(lexer, c, comps[c]) for c in live)
        named = memo[("root walk", start)] = (futures, live)
        untrack_all(named, futures, live)   # strings and ints
    futures, live = named
    key = (trie.vocab_hash, futures)

    def walk():
        words, groups = _walk(lexer, trie, start, _NONE, True)
        words.setflags(write=False)
        return words, groups
    return _shared(_ROOT_WALKS, key, [lexer.order[c] for c in live], walk)


def _future(lexer: Lexer, c: int, state: int):
    """A name of what component ``c`` of ``lexer`` accepts from ``state`` on."""
    part = lexer.parts[c]
    if isinstance(part, bytes):
        return part[state:]
    named = part.given_future(state)     # (counted strings name theirs cheaply)
    if named is not None:
        return named
    return part.future_key(state) if part.n_states <= _FUTURE_STATES else (lexer.keys[c], state)


def slice_marker(nodes: np.ndarray) -> int | None:
    """K when a walk's crossing ``nodes`` are the marker of the slice tokens of more than K
    characters (each crossing at the first byte of its character K + 1), else None."""
    return -1 - int(nodes[0]) if len(nodes) == 1 and nodes[0] < 0 else None


# (vocabulary, candidate automata, characters read) -> (words, [(component positions, nodes)])
_SLICE_WALKS = LRUCache(512)


def walk_slice_rests(lexer: Lexer, trie: PreorderTrie, k: int):
    """The slice tokens of more than ``k`` characters read, from the first byte of their
    character k + 1, from the empty lexeme of ``lexer``: (ok tokens as packed words,
    [(terminals, nodes)]) as walk_trie's, for the marker a walk leaves where every longer
    text token crosses (the end of a long string's chunk, say). Where the answer is walked,
    it also holds the other tokens below the crossing nodes (``_walks.slice_crossings``):
    the walk that left the marker crossed them there too.

    The lexeme surely reads R characters of text (``_walks.text_reach``): the tokens of k + 1
    to k + R characters are ok, a row difference; the longer ones die (R tight), all cross
    again at their character k + R + 1 (a marker again), or else are walked from their
    crossing nodes like any subtree."""
    def walk():
        reach, tight, cls = _walks.text_reach(lexer.table, lexer.byte_class, lexer.cross_class,
                                              _TEXT.transitions, _TEXT.initial, 0, SLICE_CHARS,
                                              lexer.text_chars, lexer.text_cross)
        rows = trie.text_slice
        top = min(k + reach, SLICE_CHARS)
        groups = []
        if top == SLICE_CHARS or tight or (reach and cls >= 0):
            words = (rows[top] & ~rows[k]).view(np.int32)
            if top < SLICE_CHARS and not tight:
                groups = [(lexer.class_terms[cls], np.array([-1 - top], dtype=np.int32))]
        else:
            nodes = np.frombuffer(_walks.slice_crossings(
                trie.node_byte, trie.depth, trie.skip, trie.slice_chars, k), dtype=np.int32)
            words = np.zeros(trie.words, dtype=np.int32)
            if len(nodes):      # (no roots would walk the whole trie)
                ok, groups = _walk(lexer, trie, 0, nodes, False)
                assemble_mask(words, [], [ok], trie.words * 32)
        words.setflags(write=False)
        return words, groups
    key = (trie.vocab_hash, lexer.keys, k)
    return _shared(_SLICE_WALKS, key, lexer.order, walk)


# (vocabulary, candidate automata, trie nodes) -> (ok ids, [(component positions, nodes)])
_SUBTREE_WALKS = LRUCache(2048)
_SHARED_ROOTS = 4096      # walks below more trie nodes than this are not shared


def walk_subtrees(lexer: Lexer, trie: PreorderTrie, roots: np.ndarray):
    """The tokens below trie nodes ``roots`` (disjoint subtrees) read from the empty lexeme,
    from each root's byte on: (ok token ids, [(terminals, nodes)]) as in walk_trie.

    The walk depends only on the candidates' automata and the nodes, so it is shared
    process-wide like walk_trie's (what follows a key's closing quote recurs in every schema).
    A lexer whose product is not built yet is read through its components, as long as the
    walk stays small (``_walk_components``).
    """
    if not len(roots):
        return _NONE, []
    roots = np.ascontiguousarray(roots, dtype=np.int32)
    if len(roots) > _SHARED_ROOTS:
        return _walk(lexer, trie, 0, roots, False)
    key = (trie.vocab_hash, lexer.keys, roots.tobytes())
    if not lexer.built and _SUBTREE_WALKS.get(key) is None:
        found = _walk_components(lexer, trie, roots)
        if found is not None:       # (stored as _shared stores it: read back below)
            untrack_all(*found[1], found[1], found, key)
            _SUBTREE_WALKS.put(key, found)
    return _shared(_SUBTREE_WALKS, key, lexer.order, lambda: _walk(lexer, trie, 0, roots, False))


# trie nodes a walk of a lexer's components may read before the product is built instead
_COMPONENT_VISITS = 4096


def _walk_components(lexer: Lexer, trie: PreorderTrie, roots: np.ndarray):
    """walk_subtrees' answer for a lexer whose product is not built, stored as _shared stores
    it: (ok ids, ((component positions, nodes),)) with the components read directly
    (``_walks.walk_components``); None when the walk would read more than _COMPONENT_VISITS
    trie nodes."""
    parts, accepting, initial = lexer.component_tables
    got = _walks.walk_components(parts, accepting, initial, trie.node_byte, trie.depth,
                                 trie.skip, trie.lo, trie.own, trie.token_ids, trie.max_depth,
                                 roots, _COMPONENT_VISITS)
    if got is None:
        return None
    ok, groups, members = got
    return (np.frombuffer(ok, dtype=np.int32),
            tuple((members[c], np.frombuffer(nodes, dtype=np.int32)) for c, nodes in groups))


def _shared(cache: LRUCache, key, terms_at: list | tuple, walk):
    """``walk()`` kept in ``cache`` under ``key`` (which names automata, not terminals): its
    terminal sets are stored as positions in ``terms_at`` (the terminal of each automaton of
    the key) and read back as this grammar's terminals."""
    hit = cache.get(key)
    if hit is None:
        found, groups = walk()
        pos_of = {t: i for i, t in enumerate(terms_at)}
        hit = (found, tuple((tuple(sorted(pos_of[t] for t in terms)), nodes)
                            for terms, nodes in groups))
        untrack_all(*hit[1], hit[1], hit, key)
        cache.put(key, hit)
        return found, groups
    found, groups = hit
    term_at = terms_at.__getitem__
    return found, [(frozenset(map(term_at, pos)), nodes) for pos, nodes in groups]

