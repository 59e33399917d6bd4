"""Per-state token tables of a byte DFA over a vocabulary, computed lazily and shared.

``TokenTable.get(dfa, vocab)`` returns the one table for (``dfa.key``, ``vocab.hash``) in this
process (and loads rows saved on disk by earlier processes). ``table.row(state)`` gives a
``TokenRow``: ``mask`` (packed int32 words over ``vocab.size``: the text tokens that keep the
prefix viable from ``state``), ``tokens`` (their ids, sorted) and ``ends`` (the DFA state after
each; computed on first use). Rows are computed on first use by a vectorized walk
(token_walk.py); ``save()`` persists the masks of the computed rows. Tables are thread-safe;
rows are read-only.
"""
from __future__ import annotations

import threading
import weakref
from typing import Iterable

import numpy as np

from ..bitmask import bitmask_words, pack_bool
from ..vocabulary import Vocabulary
from .byte_dfa import ByteDFA
from .disk_cache import cache_name, load_arrays, save_arrays
from .token_walk import walk_tokens


class TokenRow:
    """Tokens allowed from one DFA state (text tokens only; no EOS) and where each leads."""

    def __init__(self, table: "TokenTable", state: int, mask: np.ndarray,
                 ends_all: np.ndarray | None = None) -> None:
        mask.setflags(write=False)
        self.mask = mask              # int32[words]
        self._table = table
        self._state = state
        self._tokens: np.ndarray | None = None
        self._ends: np.ndarray | None = None
        if ends_all is not None:
            self._set(ends_all)

    def _set(self, ends_all: np.ndarray) -> None:
        tokens = np.nonzero(ends_all >= 0)[0].astype(np.int32)
        ends = ends_all[tokens]
        tokens.setflags(write=False)
        ends.setflags(write=False)
        self._tokens, self._ends = tokens, ends

    @property
    def tokens(self) -> np.ndarray:
        """int32[k]: ids of the allowed text tokens, sorted."""
        if self._tokens is None:
            self._set(self._table._walk(self._state))
        return self._tokens

    @property
    def ends(self) -> np.ndarray:
        """int32[k]: DFA state after each of ``tokens``."""
        if self._ends is None:
            self._set(self._table._walk(self._state))
        return self._ends

    def end_state(self, token_id: int) -> int:
        """DFA state after ``token_id``, or -1 when it is not allowed."""
        i = int(np.searchsorted(self.tokens, token_id))
        return int(self.ends[i]) if i < len(self.tokens) and self.tokens[i] == token_id else -1


class TokenTable:
    """See the module docstring."""

    _registry: "weakref.WeakValueDictionary[tuple[str, str, bool], TokenTable]" = \
        weakref.WeakValueDictionary()
    _registry_lock = threading.Lock()

    def __init__(self, dfa: ByteDFA, vocab: Vocabulary, disk_cache: bool = True) -> None:
        self.dfa = dfa
        self.vocab = vocab
        self.words = bitmask_words(vocab.size)
        self._rows: dict[int, TokenRow] = {}
        self._lock = threading.Lock()
        self._disk_cache = disk_cache
        self._saved = 0
        if disk_cache:
            self._load()

    @classmethod
    def get(cls, dfa: ByteDFA, vocab: Vocabulary, disk_cache: bool = True) -> "TokenTable":
        """The shared table for (dfa.key, vocab.hash) (one with and one without disk cache)."""
        key = (dfa.key, vocab.hash, bool(disk_cache))
        with cls._registry_lock:
            table = cls._registry.get(key)
            if table is None:
                table = cls(dfa, vocab, disk_cache)
                cls._registry[key] = table
            return table

    @property
    def _file(self) -> str:
        return cache_name("tokentable", "v2", self.dfa.key, self.vocab.hash)

    def row(self, state: int) -> TokenRow:
        """The row of ``state`` (computed now if it is the first visit)."""
        r = self._rows.get(state)
        if r is None:
            with self._lock:
                r = self._rows.get(state)
                if r is None:
                    r = self._rows[state] = self._compute(state)
        return r

    def ensure(self, states: Iterable[int]) -> None:
        """Compute the rows of ``states`` now."""
        for s in states:
            self.row(s)

    def ensure_all(self) -> None:
        """Compute every state's row."""
        self.ensure(range(self.dfa.n_states))

    @property
    def n_computed(self) -> int:
        return len(self._rows)

    def _walk(self, state: int) -> np.ndarray:
        return walk_tokens(self.dfa, self.vocab, state, disk_cache=self._disk_cache)

    def _compute(self, state: int) -> TokenRow:
        ends = self._walk(state)
        mask = pack_bool(ends >= 0, self.vocab.size)
        # end states are not kept (a permissive state has ~10^5 of them); asked for, they are
        # walked again
        return TokenRow(self, state, mask)

    def save(self) -> bool:
        """Persist the computed rows (no-op when nothing new was computed)."""
        if not self._disk_cache:
            return False
        with self._lock:
            rows = dict(self._rows)
        if len(rows) <= self._saved:
            return True
        states = np.array(sorted(rows), dtype=np.int32)
        ok = save_arrays(self._file, {
            "states": states,
            "masks": np.stack([rows[s].mask for s in states.tolist()]),
        })
        if ok:
            self._saved = len(rows)
        return ok

    def _load(self) -> None:
        data = load_arrays(self._file)
        if data is None:
            return
        try:
            states, masks = data["states"], data["masks"]
            if (masks.dtype != np.int32 or masks.shape != (len(states), self.words)
                    or (len(states) and (states.min() < 0 or states.max() >= self.dfa.n_states))):
                return
            for i, s in enumerate(states.tolist()):
                self._rows[s] = TokenRow(self, s, masks[i])
            self._saved = len(self._rows)
        except (KeyError, ValueError, TypeError):
            self._rows.clear()
