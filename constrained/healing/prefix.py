"""Vectorized byte-prefix relations between a byte string and every token of a vocabulary.

All comparisons are on raw token bytes (never decoded text), over the vocabulary's padded byte
matrix with numpy: no Python loop over the vocabulary.
"""
from __future__ import annotations

import weakref
from typing import Iterable

import numpy as np

from ..matching import GrammarMatcher
from ..vocabulary import Vocabulary


class PrefixIndex:
    """Byte-prefix queries over one vocabulary's text tokens (special tokens never match)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        n = vocab.n_tokens
        self._text = vocab.text_token_mask[:n]
        self._lengths = vocab.token_lengths
        self._matrix = vocab.byte_matrix
        self.max_token_bytes = int(self._lengths[self._text].max(initial=0))
        self._by_bytes: dict[bytes, int] | None = None
        # text tokens grouped by their first byte: a prefix query only reads its byte's group
        ids = np.nonzero(self._text)[0]
        first = self._matrix[ids, 0]
        order = np.argsort(first, kind="stable")
        self._by_first = ids[order]
        self._first_bounds = np.searchsorted(first[order], np.arange(257))

    @classmethod
    def of(cls, vocab: Vocabulary) -> "PrefixIndex":
        """The shared index of ``vocab`` (built once per vocabulary)."""
        index = _INDEXES.get(vocab)
        if index is None:
            index = _INDEXES[vocab] = cls(vocab)
        return index

    def _group(self, first_byte: int) -> np.ndarray:
        """Ids of the text tokens starting with ``first_byte``."""
        lo, hi = self._first_bounds[first_byte], self._first_bounds[first_byte + 1]
        return self._by_first[lo:hi]

    def extending(self, data: bytes, strict: bool = False) -> np.ndarray:
        """bool[n]: text tokens whose bytes start with ``data`` (longer than it with ``strict``)."""
        out = np.zeros(len(self._lengths), dtype=bool)
        if not data:
            return self._text.copy()
        if len(data) > self._matrix.shape[1]:
            return out
        rows = self._group(data[0])
        lengths = self._lengths[rows]
        rows = rows[lengths > len(data)] if strict else rows[lengths >= len(data)]
        target = np.frombuffer(data, dtype=np.uint8)
        out[rows[(self._matrix[rows, :len(data)] == target).all(axis=1)]] = True
        return out

    def within(self, data: bytes) -> np.ndarray:
        """bool[n]: non-empty text tokens whose bytes are a prefix of ``data`` (equal included)."""
        out = np.zeros(len(self._lengths), dtype=bool)
        if not data:
            return out
        rows = self._group(data[0])
        lengths = self._lengths[rows]
        keep = lengths <= len(data)
        rows, lengths = rows[keep], lengths[keep]
        width = min(len(data), self._matrix.shape[1])
        target = np.frombuffer(data[:width], dtype=np.uint8)
        agree = np.logical_and.accumulate(self._matrix[rows, :width] == target, axis=1)
        out[rows[agree[np.arange(len(rows)), lengths - 1]]] = True
        return out

    def start_allowed(self, data: bytes) -> np.ndarray:
        """bool[n]: tokens a generation forced to start with ``data`` may begin with, grammar
        aside: tokens inside ``data`` and tokens that extend it."""
        return self.within(data) | self.extending(data)

    def token_id(self, data: bytes) -> int | None:
        """Id of the text token with exactly these bytes (None when there is none)."""
        if self._by_bytes is None:
            table: dict[bytes, int] = {}
            for tid in np.nonzero(self._text)[0].tolist():
                table.setdefault(self.vocab.token_bytes[tid], tid)
            self._by_bytes = table
        return self._by_bytes.get(data)

    def viable_extensions(self, matcher: GrammarMatcher | None, data: bytes,
                          candidates: np.ndarray | None = None, first_only: bool = False
                          ) -> np.ndarray:
        """Ids of tokens ``data + x`` (x non-empty) whose excess x the matcher can accept.

        ``matcher`` is left in its state. Pruned by x's first byte (one trial per distinct byte);
        an x that is itself a token is read from the matcher's mask; the rest are tried with
        ``accept_bytes``. ``first_only`` stops at the first viable one.
        """
        ids = np.nonzero(self.extending(data, strict=True))[0] if candidates is None \
            else np.asarray(candidates, dtype=np.int64)
        if matcher is None or ids.size == 0:
            return ids[:1] if first_only else ids
        cut = len(data)
        firsts = self._matrix[ids, cut]
        good_first = {b for b in set(firsts.tolist()) if _try(matcher, bytes((b,)))}
        ids = ids[np.isin(firsts, list(good_first))]
        if ids.size == 0:
            return ids
        mask_bits = _allowed_bits(matcher, self.vocab.size)
        out: list[int] = []
        for tid in ids.tolist():
            x = self.vocab.token_bytes[tid][cut:]
            as_token = self.token_id(x)
            ok = bool(mask_bits[as_token]) if as_token is not None else _try(matcher, x)
            if ok:
                out.append(tid)
                if first_only:
                    break
        return np.array(out, dtype=np.int64)


_INDEXES: "weakref.WeakKeyDictionary[Vocabulary, PrefixIndex]" = weakref.WeakKeyDictionary()


def _try(matcher: GrammarMatcher, data: bytes) -> bool:
    """Whether the matcher can accept ``data`` now (state restored)."""
    if matcher.accept_bytes(data):
        matcher.rollback(1)
        return True
    return False


def _allowed_bits(matcher: GrammarMatcher, size: int) -> np.ndarray:
    from ..bitmask import allocate_token_bitmask, unpack_bitmask
    bm = allocate_token_bitmask(size, backend="numpy")
    matcher.fill_next_token_bitmask(bm)
    return unpack_bitmask(bm, size)


def ids_to_bool(ids: Iterable[int], n: int) -> np.ndarray:
    """bool[n] with the given ids set."""
    out = np.zeros(n, dtype=bool)
    arr = np.fromiter(ids, dtype=np.int64)
    out[arr] = True
    return out
