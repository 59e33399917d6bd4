"""UTF-8 byte-range sequences for ranges of code points.

A set of code points becomes a small set of byte-range sequences: every sequence is a tuple
of inclusive ``(lo, hi)`` byte ranges, and a byte string of valid UTF-8 encodes a code point of
the set iff it matches one sequence position by position. Surrogates (U+D800..U+DFFF) have no
UTF-8 encoding and are dropped.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF, MAX_CODE_POINT)

ByteSeq = tuple[tuple[int, int], ...]

# the code points of ``\d`` and ``\w`` where they are ASCII (Python's ASCII mode, ECMA-262)
ASCII_DIGIT = ((0x30, 0x39),)
ASCII_WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged, non-overlapping inclusive ranges (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def normalize_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged, non-overlapping inclusive ranges with surrogates removed."""
    out = merge_ranges(ranges)
    result = []
    for lo, hi in out:
        if hi < _SURROGATES[0] or lo > _SURROGATES[1]:
            result.append((lo, hi))
            continue
        if lo < _SURROGATES[0]:
            result.append((lo, _SURROGATES[0] - 1))
        if hi > _SURROGATES[1]:
            result.append((_SURROGATES[1] + 1, hi))
    return result


def complement_ranges(ranges: Iterable[tuple[int, int]], *,
                      surrogates: bool = False) -> list[tuple[int, int]]:
    """Every code point not covered by ``ranges`` (surrogates only when asked for)."""
    out = []
    nxt = 0
    for lo, hi in merge_ranges(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return out if surrogates else normalize_ranges(out)


def chars_to_ranges(chars: Iterable[str]) -> list[tuple[int, int]]:
    """Ranges covering a set of single characters (vectorized: sets may hold 1M characters)."""
    chars = list(chars)
    if not chars:
        return []
    codes = np.sort(np.fromiter(map(ord, chars), dtype=np.int64, count=len(chars)))
    codes = codes[np.concatenate([[True], np.diff(codes) != 0])]
    breaks = np.nonzero(np.diff(codes) != 1)[0]
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(codes) - 1]])
    return normalize_ranges(zip(codes[starts].tolist(), codes[ends].tolist()))


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def _split_range(lo: int, hi: int, out: list[ByteSeq]) -> None:
    # split at the boundaries of encoded length first
    for limit in _LENGTH_LIMITS:
        if lo <= limit < hi:
            _split_range(lo, limit, out)
            _split_range(limit + 1, hi, out)
            return
    if hi <= 0x7F:
        out.append(((lo, hi),))
        return
    n = len(_encode(lo))
    # then until every continuation byte spans its full range or lo/hi share the prefix
    for i in range(1, n):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                _split_range(lo, lo | mask, out)
                _split_range((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split_range(lo, (hi & ~mask) - 1, out)
                _split_range(hi & ~mask, hi, out)
                return
    a, b = _encode(lo), _encode(hi)
    out.append(tuple((a[i], b[i]) for i in range(n)))


def utf8_sequences(ranges: Iterable[tuple[int, int]]) -> list[ByteSeq]:
    """Byte-range sequences matching exactly the UTF-8 encodings of the code points in ``ranges``."""
    out: list[ByteSeq] = []
    for lo, hi in normalize_ranges(ranges):
        _split_range(lo, hi, out)
    return out
