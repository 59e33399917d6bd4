"""A token budget for the region that opens the output (a reasoning block), enforced exactly.

The region is ``begin``, free text, ``end``: the free text never contains ``end``, so after the
begin the region's state is the state of one byte automaton, the free text's ``[\\s\\S]*end``
(first occurrence) with its accepting states made absorbing ("closed"), or, when ``end`` is a
special token, the UTF-8 automaton of free text plus one "closed" state the end token leads to
from a character boundary. That automaton has a handful of states, so for every state the
end state of every token is computed once per vocabulary and end (vectorized walks over the
token trie), and so is the fewest tokens that close the region from each state (a shortest-path
iteration over those tables). A mask is then a table row: token t is allowed iff the grammar
allows it and, after it, the region is closed or can close within the tokens left.

``RegionBudgetMatcher`` wraps the grammar's matcher and applies that while the region is open:
it counts the tokens that end past the begin, the end's tokens included; once closed, the
grammar alone decides. Budgets live in the decode loop (``generate``, ``stream``, the server),
not in a bare GrammarMatcher.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..automata import regex_difference_dfa, regex_to_byte_dfa, walk_tokens_many
from ..automata.byte_dfa import ByteDFA
from ..bitmask import bitmask_row, pack_bool, unpack_bitmask
from ..errors import BudgetError, DeadEndError
from ..grammar._regex_translate import escape_literal
from ..vocabulary import Vocabulary
from .budget import state_key

_FAR = np.iinfo(np.int32).max // 2


@dataclass(frozen=True, eq=False)
class RegionTable:
    """Token steps and closing distances of a region's free text and end, for a vocabulary.

    ``trans[s, t]``: the state after token t from state s (-1: t cannot be read there);
    ``dist[s]``: the fewest tokens that close the region from s (0 when closed, ``_FAR`` when
    it cannot close); ``closed``: the absorbing state; ``dfa``: the byte automaton (for
    reading the part of a token after the begin)."""

    trans: np.ndarray
    dist: np.ndarray
    closed: int
    dfa: ByteDFA
    worst: int            # the largest finite distance: more tokens left never restrict


_TABLES: "weakref.WeakKeyDictionary[Vocabulary, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def region_table(vocab: Vocabulary, end: str, end_is_token: bool = False) -> RegionTable:
    """The table of free text closed by ``end``: text, or (``end_is_token``) the special token
    whose text it is; built once per vocabulary and end."""
    key = (end, end_is_token)
    with _LOCK:
        per_vocab = _TABLES.setdefault(vocab, {})
        table = per_vocab.get(key)
    if table is None:
        table = _build(vocab, end, end_is_token)
        with _LOCK:
            per_vocab[key] = table
    return table


def _build(vocab: Vocabulary, end: str, end_is_token: bool) -> RegionTable:
    end_id = vocab.special_ids_by_text.get(end.encode("utf-8")) if end_is_token else None
    if end_is_token and end_id is None:
        raise BudgetError(f"the budgeted block ends with the special token {end!r}, which "
                          f"vocabulary {vocab.name or '(unnamed)'} does not have")
    if end_id is None:
        any_ = r"[\s\S]"
        text = regex_difference_dfa(f"{any_}*{escape_literal(end)}",
                                    (f"{any_}*(?:{escape_literal(end)}){any_}+",))
        acc = text.accepting.copy()
        ends = np.flatnonzero(acc)
        closed = int(ends[0])               # one absorbing state: the end was written
        trans = np.where(np.isin(text.transitions, ends), closed, text.transitions)
        trans[closed, :] = closed
        dfa = ByteDFA(trans.astype(np.int32), acc, text.initial, f"free text then {end!r}")
        steps = walk_tokens_many(dfa, vocab, range(dfa.n_states))
    else:
        text = regex_to_byte_dfa(r"[\s\S]*")
        n = text.n_states
        trans = np.vstack([text.transitions, np.full((1, 256), n, dtype=np.int32)])
        acc = np.zeros(n + 1, dtype=bool)
        acc[n] = True
        closed = n
        dfa = ByteDFA(trans.astype(np.int32), acc, text.initial, f"free text then {end!r}")
        steps = walk_tokens_many(dfa, vocab, range(dfa.n_states))
        steps[:, end_id] = -1
        steps[np.flatnonzero(text.accepting), end_id] = closed   # at a character boundary
    full = np.full((steps.shape[0], vocab.size), -1, dtype=np.int32)
    full[:, :steps.shape[1]] = steps
    full[:, sorted(vocab.eos_token_ids)] = -1
    full[closed, :] = closed
    dist = _distances(full, closed)
    finite = dist[dist < _FAR]
    return RegionTable(full, dist, closed, dfa, int(finite.max(initial=0)))


def _distances(trans: np.ndarray, closed: int) -> np.ndarray:
    """Fewest token steps from every state to ``closed`` (Bellman-Ford over few states)."""
    n = trans.shape[0]
    dist = np.full(n, _FAR, dtype=np.int64)
    dist[closed] = 0
    reach = [np.unique(row[row >= 0]) for row in trans]   # the states a token can lead to
    for _ in range(n):
        changed = False
        for s in range(n):
            if len(reach[s]):
                best = int(dist[reach[s]].min()) + 1
                if best < dist[s]:
                    dist[s] = best
                    changed = True
        if not changed:
            break
    return dist


class RegionBudgetMatcher:
    """``inner`` (the grammar's matcher) with at most ``max_tokens`` tokens after ``begin``
    (the first token that ends past it is the first counted) until the region is closed."""

    def __init__(self, inner, table: RegionTable, vocab: Vocabulary, max_tokens: int,
                 begin: bytes) -> None:
        self._inner = inner
        self._table = table
        self._vocab = vocab
        self.max_tokens = max_tokens
        self._begin = len(begin)
        # per accepted step: (bytes seen, tokens counted, region state or -1 before the begin)
        self._counts: list[tuple[int, int, int]] = [(0, 0, -1)]

    def __getattr__(self, name):
        return getattr(self._inner, name)

    # a byte that leaves the grammar's state as it is may still move the region's: completion
    # searches probe each byte instead of asking the inner matcher
    looping_bytes = None

    def state_key(self):
        """The grammar's state key with the budget's count and region state (completion
        searches must not merge states the budget tells apart)."""
        return (state_key(self._inner), self._counts[-1][1:])

    # masks -----------------------------------------------------------------------------------
    def _tight(self) -> tuple[int, int] | None:
        """(region state, tokens left) while the budget can refuse tokens, else None."""
        _, steps, state = self._counts[-1]
        table = self._table
        if state < 0 or state == table.closed:
            return None
        left = self.max_tokens - steps
        return None if left - 1 >= table.worst else (state, left)

    def _limit(self) -> np.ndarray | None:
        """Bool per token id of the tokens the budget allows now, or None (no limit)."""
        tight = self._tight()
        if tight is None:
            return None
        state, left = tight
        nxt = self._table.trans[state]
        ok = nxt >= 0
        ok[ok] = self._table.dist[nxt[ok]] <= left - 1
        return ok

    def _allows(self, tid: int) -> bool:
        """Whether the budget allows token ``tid`` now (one table lookup)."""
        tight = self._tight()
        if tight is None:
            return True
        state, left = tight
        if not 0 <= tid < self._table.trans.shape[1]:
            return False
        nxt = int(self._table.trans[state, tid])
        return nxt >= 0 and int(self._table.dist[nxt]) <= left - 1

    def fill_next_token_bitmask(self, bitmask, index: int = 0) -> bool:
        self._inner.fill_next_token_bitmask(bitmask, index)
        limit = self._limit()
        if limit is not None:
            row = bitmask_row(bitmask, index, (self._vocab.size + 31) // 32)
            keep = unpack_bitmask(row, self._vocab.size) & limit
            if not keep.any():
                raise DeadEndError(f"the reasoning budget of {self.max_tokens} tokens leaves no "
                                   "token that closes the block in time")
            row[:] = pack_bool(keep, self._vocab.size)[:len(row)]
        return True

    def allowed_token_ids(self) -> np.ndarray:
        ids = self._inner.allowed_token_ids()
        limit = self._limit()
        return ids if limit is None else ids[limit[ids]]

    # steps -----------------------------------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        tid = int(token_id)
        if not self._allows(tid):
            return False
        if not self._inner.accept_token(token_id):
            return False
        vocab = self._vocab
        data = vocab.token_bytes[tid] if 0 <= tid < vocab.n_tokens else b""
        self._push(len(data), lambda state: int(self._table.trans[state, tid]), data)
        return True

    def accept_bytes(self, data: bytes) -> bool:
        if not self._inner.accept_bytes(data):
            return False
        self._push(len(data), lambda state: self._walk(state, data), data)
        return True

    def _walk(self, state: int, data: bytes) -> int:
        trans = self._table.dfa.transitions
        for b in data:
            if state < 0:
                break
            state = int(trans[state, b])
        return state

    def _push(self, n_bytes: int, step, data: bytes) -> None:
        seen, steps, state = self._counts[-1]
        total = seen + n_bytes
        if total > self._begin and state != self._table.closed:
            steps += 1           # a token of the block (the one that closes it included)
        if state >= 0:
            state = step(state)
            if state < 0:       # text the region cannot hold: its end was passed by other means
                state = self._table.closed
        elif total >= self._begin:
            rest = data[self._begin - seen:] if n_bytes else b""
            state = self._walk(self._table.dfa.initial, rest)
            if state < 0:
                state = self._table.closed
        self._counts.append((total, steps, state))

    def rollback(self, n_tokens: int = 1) -> None:
        self._inner.rollback(n_tokens)
        if n_tokens:
            del self._counts[-n_tokens:]

    def reset(self) -> None:
        self._inner.reset()
        self._counts = [(0, 0, -1)]


def budgeted_matcher(compiled, inner, budget) -> RegionBudgetMatcher:
    """``inner`` under ``budget`` (a grammar.RegionBudget)."""
    vocab = compiled.vocab
    table = region_table(vocab, budget.end, budget.end_is_token)
    fewest = int(table.dist[table.dfa.initial])
    if fewest > budget.max_tokens:
        raise BudgetError(f"the reasoning budget of {budget.max_tokens} tokens is too small: "
                          f"closing the block ({budget.end!r}) takes at least {fewest} tokens "
                          "with this vocabulary")
    return RegionBudgetMatcher(inner, table, vocab, budget.max_tokens,
                               budget.begin.encode("utf-8"))
