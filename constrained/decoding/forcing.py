"""Forced tokens: when the grammar allows exactly one continuation, take it without sampling."""
from __future__ import annotations

import numpy as np

from .byte_tokens import ByteTokenizer


def only_allowed_token(row: np.ndarray) -> int:
    """The id of the single allowed token of a packed mask row, or -1 (none or several)."""
    nz = np.flatnonzero(row)
    if len(nz) != 1:
        return -1
    word = int(row[nz[0]]) & 0xFFFFFFFF
    if word & (word - 1):
        return -1
    return int(nz[0]) * 32 + word.bit_length() - 1


def accept_forced(matcher, tokenizer: ByteTokenizer, limit: int) -> list[int]:
    """Accept the tokens of the bytes the grammar forces next (up to ``limit`` tokens)."""
    if limit <= 0 or matcher.is_terminated() or matcher.is_accepting():
        return []
    data = matcher.forced_bytes()
    if not data:
        return []
    return tokenizer.accept(matcher, data, limit)[0]
