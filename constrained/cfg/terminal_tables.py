"""Per-terminal token tables, shared by every lexer (and grammar) using the same automaton.

For one terminal DFA and a vocabulary, a walk from a DFA state records, for every token (or token
remainder), ``die``: how many bytes the terminal consumes before it cannot continue (the full
length when it stays alive to the end) and ``acc``: whether it is a full match at that point.
A lexer over a candidate set is the union of its terminals, so its walk follows from these by a
maximum: the lexeme ends where the *last* candidate dies, and is complete for the candidates
that die exactly there while accepting. Tables are keyed by (automaton key, vocabulary hash) in
a process-wide bounded cache, so JSON strings, numbers, identifiers and whitespace are walked
once per process whatever grammar uses them; with the disk cache on (the default, directory
``$CONSTRAINED_CACHE_DIR``), the walks are also saved and reused by later processes.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..automata import ByteDFA
from ..automata.disk_cache import cache_name, load_arrays, save_arrays
from .lru import LRUCache
from .token_tables import VocabIndex


@dataclass(frozen=True)
class TerminalWalk:
    """Sparse walk result: only entries where the terminal consumes at least one byte."""

    idx: np.ndarray    # int32: token positions (root walks) or pairs (remainder walks)
    die: np.ndarray    # int16: bytes consumed before dying (== length when alive to the end)
    acc: np.ndarray    # bool: accepting after ``die`` bytes


_TOKEN_WALKS = LRUCache(256)    # (dfa key, vocab hash, state) -> TerminalWalk over text tokens
_PAIR_WALKS = LRUCache(64)     # (dfa key, vocab hash) -> TerminalWalk over all pairs
_LOCK = threading.Lock()


def _walk(dfa: ByteDFA, index: VocabIndex, starts: np.ndarray, state: int) -> TerminalWalk:
    trans, accepting = dfa.transitions, dfa.accepting
    flat, end_of = index.flat, index.end_of
    orig = np.arange(len(starts), dtype=np.int32)
    p = starts.astype(np.int32)
    st = trans[state, flat[p]]
    live = st >= 0
    orig, p, st = orig[live], p[live] + 1, st[live]
    out_i, out_d, out_a = [], [], []
    while len(p):
        done = p >= end_of[p - 1]
        if done.any():
            out_i.append(orig[done])
            out_d.append(p[done] - starts[orig[done]])
            out_a.append(accepting[st[done]])
            keep = ~done
            orig, p, st = orig[keep], p[keep], st[keep]
            if not len(p):
                break
        n2 = trans[st, flat[p]]
        dead = n2 < 0
        if dead.any():
            out_i.append(orig[dead])
            out_d.append(p[dead] - starts[orig[dead]])
            out_a.append(accepting[st[dead]])
            keep = ~dead
            orig, p, n2 = orig[keep], p[keep], n2[keep]
        st = n2
        p = p + 1
    if out_i:
        idx = np.concatenate(out_i)
        order = np.argsort(idx, kind="stable")
        return TerminalWalk(idx[order].astype(np.int32),
                            np.concatenate(out_d)[order].astype(np.int16),
                            np.concatenate(out_a)[order].astype(bool))
    return TerminalWalk(np.zeros(0, np.int32), np.zeros(0, np.int16), np.zeros(0, bool))


def _load(name: str) -> TerminalWalk | None:
    data = load_arrays(name)
    if data is None:
        return None
    try:
        idx, die, acc = data["idx"], data["die"], data["acc"]
        if idx.dtype == np.int32 and die.dtype == np.int16 and acc.dtype == bool and \
                len(idx) == len(die) == len(acc):
            return TerminalWalk(idx, die, acc)
    except KeyError:
        pass
    return None


def _cached(cache: LRUCache, key: tuple, kind: str, compute, disk: bool) -> TerminalWalk:
    w = cache.get(key)
    if w is None:
        name = cache_name(kind, *map(str, key)) if disk else None
        w = _load(name) if disk else None
        if w is None:
            w = compute()
            if disk:
                save_arrays(name, {"idx": w.idx, "die": w.die, "acc": w.acc})
        w = cache.put(key, w)
    return w


def token_walk(dfa: ByteDFA, index: VocabIndex, vocab_hash: str, state: int,
               disk: bool = True) -> TerminalWalk:
    """Every text token read from ``state`` (``idx`` indexes ``index.text_ids``)."""
    return _cached(_TOKEN_WALKS, (dfa.key, vocab_hash, state), "cfg-token-walk",
                   lambda: _walk(dfa, index, index.start[index.text_ids], state), disk)


def pair_walk(dfa: ByteDFA, index: VocabIndex, vocab_hash: str,
              disk: bool = True) -> TerminalWalk:
    """Every token remainder (pair) read from the initial state (``idx`` are pairs)."""
    return _cached(_PAIR_WALKS, (dfa.key, vocab_hash), "cfg-pair-walk",
                   lambda: _walk(dfa, index, np.arange(len(index.flat), dtype=np.int32),
                                 dfa.initial), disk)


MAX_UNION = 63   # candidate sets up to this size are combined with 64-bit class codes


def _groups(code: np.ndarray, pairs: np.ndarray, terms: list[int]) -> list:
    """(terminal set, pairs) per distinct nonzero class code."""
    if not len(code):
        return []
    order = np.argsort(code, kind="stable")
    code, pairs = code[order], pairs[order]
    bounds = np.flatnonzero(code[1:] != code[:-1]) + 1
    out = []
    for c, p in zip(np.split(code, bounds), np.split(pairs, bounds)):
        bits = int(c[0])
        out.append((frozenset(t for i, t in enumerate(terms) if bits >> i & 1), p))
    return out


def root_walk(lexer, dfas, index: VocabIndex, vocab_hash: str, q: int, disk: bool = True):
    """Every text token read from lexer state ``q``: (ok token ids, [(terminals, pairs)]).

    ``pairs`` are where the next lexeme starts; the lexeme read so far is a full match of
    exactly ``terminals``. Same answer as a walk of the lexer's union DFA.
    """
    comps = [(t, s) for t, s in zip(lexer.order, lexer.components[q]) if s >= 0]
    text = index.text_ids
    n = len(text)
    lengths = index.lengths[text]
    walks = [token_walk(dfas[t], index, vocab_hash, s, disk) for t, s in comps]
    longest = np.zeros(n, dtype=np.int16)
    for w in walks:
        longest[w.idx] = np.maximum(longest[w.idx], w.die)
    ok = longest == lengths
    code = np.zeros(n, dtype=np.uint64)
    at_start = 0
    for bit, ((t, s), w) in enumerate(zip(comps, walks)):
        sel = w.acc & (w.die == longest[w.idx])
        code[w.idx[sel]] |= np.uint64(1 << bit)
        if dfas[t].accepting[s]:
            at_start |= 1 << bit
    if at_start:
        code[longest == 0] = np.uint64(at_start)
    code[ok] = 0
    cross = np.flatnonzero(code)
    pairs = index.start[text[cross]] + longest[cross]
    return text[ok], _groups(code[cross], pairs.astype(np.int32), [t for t, _ in comps])


def union_suffix_table(lexer, dfas, index: VocabIndex, vocab_hash: str, disk: bool = True):
    """Every pair read from the lexer's empty lexeme, from the per-terminal pair walks.

    Returns (next, cls, class_terms): ``next`` as in token_tables.SuffixTable (OK, DEAD or the
    pair where the next lexeme starts), ``cls[p]`` indexes ``class_terms`` for crossing pairs.
    """
    from .token_tables import DEAD, OK
    n = len(index.flat)
    terms = list(lexer.order)
    walks = [pair_walk(dfas[t], index, vocab_hash, disk) for t in terms]
    longest = np.zeros(n, dtype=np.int16)
    for w in walks:
        longest[w.idx] = np.maximum(longest[w.idx], w.die)
    ok = longest == index.remaining
    code = np.zeros(n, dtype=np.uint64)
    for bit, w in enumerate(walks):
        sel = w.acc & (w.die == longest[w.idx])
        code[w.idx[sel]] |= np.uint64(1 << bit)
    code[ok] = 0
    nxt = np.full(n, DEAD, dtype=np.int32)
    nxt[ok] = OK
    cross = np.flatnonzero(code)
    nxt[cross] = cross + longest[cross]
    uniq, inv = np.unique(code[cross], return_inverse=True)
    cls = np.zeros(n, dtype=np.int16)
    cls[cross] = inv.reshape(-1).astype(np.int16)
    class_terms = [frozenset(t for i, t in enumerate(terms) if int(c) >> i & 1) for c in uniq]
    return nxt, cls, class_terms
