"""Per-state token tables of a byte DFA over a vocabulary, computed lazily and shared.

``TokenTable.get(dfa, vocab)`` returns the one table for (``dfa.key``, ``vocab.hash``) in this
process (and loads rows saved on disk by earlier processes). ``table.row(state)`` gives a
``TokenRow``: ``mask`` (packed int32 words over ``vocab.size``: the text tokens that keep the
prefix viable from ``state``), ``tokens`` (their ids, sorted) and ``ends`` (the DFA state after
each). Rows are computed on first use by a vectorized walk (token_walk.py); ``save()`` persists
the computed rows. Tables are thread-safe; rows are read-only.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..bitmask import bitmask_words, set_bits
from ..vocabulary import Vocabulary
from .byte_dfa import ByteDFA
from .disk_cache import cache_name, load_arrays, save_arrays
from .token_walk import walk_tokens


@dataclass(frozen=True)
class TokenRow:
    """Tokens allowed from one DFA state (text tokens only; no EOS) and where each leads."""

    mask: np.ndarray     # int32[words]
    tokens: np.ndarray   # int32[k], sorted
    ends: np.ndarray     # int32[k]

    def end_state(self, token_id: int) -> int:
        """DFA state after ``token_id``, or -1 when it is not allowed."""
        i = int(np.searchsorted(self.tokens, token_id))
        return int(self.ends[i]) if i < len(self.tokens) and self.tokens[i] == token_id else -1


class TokenTable:
    """See the module docstring."""

    _registry: "weakref.WeakValueDictionary[tuple[str, str], TokenTable]" = \
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
        """The shared table for (dfa.key, vocab.hash)."""
        key = (dfa.key, vocab.hash)
        with cls._registry_lock:
            table = cls._registry.get(key)
            if table is None:
                table = cls(dfa, vocab, disk_cache)
                cls._registry[key] = table
            return table

    @property
    def _file(self) -> str:
        return cache_name("tokentable", "v1", self.dfa.key, self.vocab.hash)

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

    def _compute(self, state: int) -> TokenRow:
        ends = walk_tokens(self.dfa, self.vocab, state)
        tokens = np.nonzero(ends >= 0)[0].astype(np.int32)
        mask = np.zeros(self.words, dtype=np.int32)
        set_bits(mask, tokens)
        return self._freeze(mask, tokens, ends[tokens])

    @staticmethod
    def _freeze(mask, tokens, ends) -> TokenRow:
        for a in (mask, tokens, ends):
            a.setflags(write=False)
        return TokenRow(mask, tokens, ends)

    def save(self) -> bool:
        """Persist the computed rows (no-op when nothing new was computed)."""
        if not self._disk_cache:
            return False
        with self._lock:
            rows = dict(self._rows)
        if len(rows) <= self._saved:
            return True
        states = np.array(sorted(rows), dtype=np.int32)
        counts = np.array([len(rows[s].tokens) for s in states], dtype=np.int64)
        ok = save_arrays(self._file, {
            "states": states,
            "offsets": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            "masks": np.stack([rows[s].mask for s in states]) if len(states) else
            np.zeros((0, self.words), np.int32),
            "tokens": np.concatenate([rows[s].tokens for s in states]).astype(np.int32),
            "ends": np.concatenate([rows[s].ends for s in states]).astype(np.int32),
        })
        if ok:
            self._saved = len(rows)
        return ok

    def _load(self) -> None:
        data = load_arrays(self._file)
        if data is None:
            return
        try:
            states, offsets, masks = data["states"], data["offsets"], data["masks"]
            tokens, ends = data["tokens"], data["ends"]
            if (masks.shape != (len(states), self.words) or len(offsets) != len(states) + 1
                    or offsets[-1] != len(tokens) or len(ends) != len(tokens)
                    or (len(states) and (states.min() < 0 or states.max() >= self.dfa.n_states))):
                return
            for i, s in enumerate(states.tolist()):
                a, b = int(offsets[i]), int(offsets[i + 1])
                self._rows[s] = self._freeze(masks[i], tokens[a:b], ends[a:b])
            self._saved = len(self._rows)
        except (KeyError, ValueError, TypeError):
            self._rows.clear()
