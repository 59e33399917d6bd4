"""The Vocabulary: token id -> exact bytes, plus which ids end generation or are special."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from ..errors import VocabularyError
from ._token_bytes import join_tokens

SPECIAL_MARK = 0xFF
_DIGITS = 4


def special_spelling(token_id: int) -> bytes:
    """The bytes a special token stands for where a grammar can name it (token tries, token
    terminals): 0xFF, which UTF-8 text never holds, then the id in four base-64 digits
    (bytes 0x80-0xBF), so no text and no other special token spells it."""
    if not 0 <= token_id < 64 ** _DIGITS:
        raise VocabularyError(f"token id {token_id} is too large for a special token")
    digits = bytearray((SPECIAL_MARK,))
    for k in range(_DIGITS - 1, -1, -1):
        digits.append(0x80 | (token_id >> (6 * k)) & 0x3F)
    return bytes(digits)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Exact token bytes of a model's vocabulary.

    ``token_bytes[i]`` is the byte string token ``i`` stands for; a token may hold part of a
    UTF-8 character. ``size`` is the width of the model's logits, which may exceed the number of
    tokens the tokenizer knows: ids past ``len(token_bytes)`` are padding and never allowed.
    Special tokens (EOS included) never match grammar text.
    """

    token_bytes: tuple[bytes, ...]
    eos_token_ids: frozenset[int]
    special_token_ids: frozenset[int] = field(default_factory=frozenset)
    size: int = -1
    name: str = ""

    def __post_init__(self) -> None:
        n = len(self.token_bytes)
        if self.size == -1:
            object.__setattr__(self, "size", n)
        if self.size < n:
            raise VocabularyError(
                f"vocab_size={self.size} is smaller than the tokenizer's {n} tokens: the "
                "vocabulary does not fit the model's logits")
        if not self.eos_token_ids:
            raise VocabularyError(
                f"vocabulary {self.name or '(unnamed)'} has no end-of-sequence token: pass "
                "eos_token_ids=[...]")
        for tid in self.eos_token_ids | self.special_token_ids:
            if not 0 <= tid < n:
                raise VocabularyError(f"token id {tid} is outside the vocabulary (0..{n - 1})")
        object.__setattr__(self, "special_token_ids",
                           frozenset(self.special_token_ids) | frozenset(self.eos_token_ids))

    # construction -------------------------------------------------------------------------
    @classmethod
    def from_token_bytes(cls, tokens: Sequence[bytes], eos_token_ids: Iterable[int],
                         special_token_ids: Iterable[int] = (), vocab_size: int | None = None,
                         name: str = "") -> "Vocabulary":
        """Build from raw token bytes (tiktoken style); ``vocab_size`` is the logits width."""
        toks = tuple(bytes(t) for t in tokens)
        return cls(toks, frozenset(int(i) for i in eos_token_ids),
                   frozenset(int(i) for i in special_token_ids),
                   len(toks) if vocab_size is None else int(vocab_size), name)

    @classmethod
    def from_hf(cls, tokenizer, vocab_size: int | None = None,
                eos_token_ids: Iterable[int] | None = None) -> "Vocabulary":
        """Build from a Hugging Face tokenizer (byte-level BPE, SentencePiece, added tokens)."""
        from .hf_tokenizer import vocabulary_from_hf
        return vocabulary_from_hf(cls, tokenizer, vocab_size, eos_token_ids)

    @classmethod
    def from_tiktoken(cls, encoding, vocab_size: int | None = None,
                      eos_token_ids: Iterable[int] | None = None) -> "Vocabulary":
        """Build from a tiktoken-style encoding (``decode_single_token_bytes``, ``eot_token``).

        By default EOS is ``eot_token`` plus the special tokens that end a turn
        (``<|eot_id|>``, ``<|im_end|>``, ...).
        """
        from .tiktoken_encoding import vocabulary_from_tiktoken
        return vocabulary_from_tiktoken(cls, encoding, vocab_size, eos_token_ids)

    @classmethod
    def from_gguf(cls, path: str, vocab_size: int | None = None) -> "Vocabulary":
        """Build from the tokenizer stored in a GGUF model file."""
        from .gguf_tokenizer import vocabulary_from_gguf
        return vocabulary_from_gguf(cls, path, vocab_size)

    # queries ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.size

    @property
    def n_tokens(self) -> int:
        """Number of tokens the tokenizer knows (ids past it are padding)."""
        return len(self.token_bytes)

    def decode(self, token_ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the tokens (padding ids contribute nothing)."""
        n = len(self.token_bytes)
        return b"".join(self.token_bytes[i] for i in token_ids if 0 <= i < n)

    @cached_property
    def hash(self) -> str:
        """Stable hex digest of everything that determines masks over this vocabulary."""
        h = hashlib.sha256()
        h.update(f"v2|{self.size}|{len(self.token_bytes)}|".encode())
        h.update(self.token_lengths.astype("<i4").tobytes())    # lengths, then all the bytes
        h.update(self._joined)
        h.update(repr(sorted(self.eos_token_ids)).encode())
        h.update(repr(sorted(self.special_token_ids)).encode())
        return h.hexdigest()

    @cached_property
    def text_token_mask(self) -> np.ndarray:
        """bool[size]: True for tokens that can carry grammar text: non-special, non-empty, and
        without byte 0xFF (never in UTF-8 text; it starts the spelling of special tokens)."""
        mask = np.zeros(self.size, dtype=bool)
        n = len(self.token_bytes)
        mask[:n] = self.token_lengths > 0
        if n:
            flat = np.frombuffer(self._joined, dtype=np.uint8)
            ends = np.cumsum(self.token_lengths, dtype=np.int64)
            holders = np.searchsorted(ends, np.flatnonzero(flat == SPECIAL_MARK), side="right")
            mask[holders] = False
        if self.special_token_ids:
            mask[np.fromiter(self.special_token_ids, dtype=np.int64)] = False
        return mask

    @cached_property
    def special_ids_by_text(self) -> dict[bytes, int]:
        """Special tokens by their text (the lowest id when several share one)."""
        out: dict[bytes, int] = {}
        for tid in sorted(self.special_token_ids, reverse=True):
            out[self.token_bytes[tid]] = tid
        return out

    @cached_property
    def _joined(self) -> bytes:
        """Every token's bytes, concatenated in id order (see token_lengths)."""
        return self._joined_and_lengths[0]

    @cached_property
    def token_lengths(self) -> np.ndarray:
        """int32[n_tokens]: byte length of every token (read-only)."""
        return self._joined_and_lengths[1]

    @cached_property
    def _joined_and_lengths(self) -> tuple[bytes, np.ndarray]:
        joined, lengths = join_tokens(self.token_bytes)     # one pass, in C
        return joined, np.frombuffer(lengths, dtype=np.int32)

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        """uint8[n_tokens, max_len]: token bytes, zero-padded on the right (see token_lengths)."""
        lengths = self.token_lengths
        width = max(1, int(lengths.max(initial=0)))
        flat = np.frombuffer(self._joined, dtype=np.uint8)
        out = np.zeros((len(self.token_bytes), width), dtype=np.uint8)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        starts = np.cumsum(lengths) - lengths
        cols = np.arange(len(flat)) - np.repeat(starts, lengths)
        out[rows, cols] = flat
        return out

    def __repr__(self) -> str:
        return (f"Vocabulary({self.name or 'unnamed'}, tokens={len(self.token_bytes)}, "
                f"size={self.size}, eos={sorted(self.eos_token_ids)})")
