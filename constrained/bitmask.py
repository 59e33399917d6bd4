"""Packed token bitmasks: bit ``i % 32`` of int32 word ``i // 32`` is set <=> token ``i`` allowed.

Masks are kept as numpy int32 arrays (fast algebra, no per-op overhead) and shared with torch
without copies. Helpers here never loop over the vocabulary in Python.
"""
from __future__ import annotations

import operator
import sys
from typing import Iterable

import numpy as np

from .errors import MatcherError


def _torch():
    """The torch module when it is loaded, else None: an object can only be a tensor if torch
    was imported, so mask algebra never imports it (nor pays for its import)."""
    return sys.modules.get("torch")


def bitmask_words(vocab_size: int) -> int:
    """Number of int32 words covering ``vocab_size`` tokens."""
    return (int(vocab_size) + 31) // 32


def allocate_token_bitmask(vocab_size: int, batch_size: int | None = None, *,
                           fill: bool = False, backend: str = "torch"):
    """A zeroed (or all-allowed with ``fill``) packed bitmask, 1-D or [batch_size, words].

    ``backend`` is "torch" (CPU int32 tensor) or "numpy".
    """
    shape = (bitmask_words(vocab_size),) if batch_size is None else (batch_size,
                                                                     bitmask_words(vocab_size))
    arr = np.full(shape, -1 if fill else 0, dtype=np.int32)
    if backend == "numpy":
        return arr
    if backend != "torch":
        raise ValueError(f"unknown bitmask backend {backend!r} (use 'torch' or 'numpy')")
    import torch
    return torch.from_numpy(arr)


def as_numpy(bitmask) -> np.ndarray:
    """A numpy int32 view sharing memory with ``bitmask`` (a CPU torch tensor or numpy array);
    MatcherError for anything else."""
    if isinstance(bitmask, np.ndarray):
        arr = bitmask
    elif (torch := _torch()) is not None and isinstance(bitmask, torch.Tensor):
        if bitmask.device.type != "cpu":
            raise MatcherError("bitmask must be on the CPU; move it to the device after filling")
        arr = bitmask.numpy()
    else:
        raise MatcherError(f"bitmask must be a torch tensor or numpy array, not "
                           f"{type(bitmask).__name__}")
    if arr.dtype != np.int32:
        raise MatcherError(f"bitmask dtype must be int32, not {arr.dtype}")
    return arr


def bitmask_row(bitmask, index: int, words: int) -> np.ndarray:
    """The writable row a matcher fills: ``bitmask`` itself (1-D) or its row ``index`` (2-D),
    at least ``words`` wide; MatcherError naming what is wrong otherwise."""
    arr = as_numpy(bitmask)
    if not arr.flags.writeable:
        raise MatcherError("bitmask is read-only")
    if arr.ndim == 1:
        row = arr
    elif arr.ndim == 2:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise MatcherError(f"bitmask row index must be an int, not {type(index).__name__}")
        if not 0 <= index < arr.shape[0]:
            raise MatcherError(f"bitmask row index {index} is out of range for "
                               f"{arr.shape[0]} rows")
        row = arr[index]
    else:
        raise MatcherError(f"bitmask must be 1-D or 2-D, not {arr.ndim}-D")
    if row.shape[0] < words:
        raise MatcherError(f"bitmask has {row.shape[0]} words; the vocabulary needs {words}")
    return row


_INT32 = np.dtype(np.int32)


def write_row(bitmask, index: int, words: int, mask: np.ndarray) -> None:
    """Write ``mask`` (``words`` int32 words) into the row ``bitmask_row`` gives, zeroing any
    words past it. A numpy int32 row of exactly ``words`` (1-D, or a row of a 2-D array) is
    written at once; anything else goes through bitmask_row's checks."""
    if type(bitmask) is np.ndarray and bitmask.dtype is _INT32:
        shape = bitmask.shape
        try:
            if shape == (words,):
                bitmask[:] = mask
                return
            if (len(shape) == 2 and shape[1] == words and type(index) is int
                    and 0 <= index < shape[0]):
                bitmask[index] = mask
                return
        except ValueError:      # read-only: reported below
            pass
    row = bitmask_row(bitmask, index, words)
    row[:words] = mask
    if row.shape[0] > words:
        row[words:] = 0


def int_arg(value, what: str) -> int:
    """``value`` as an int (a token id, a step count); MatcherError naming ``what`` for
    anything that is not an integer."""
    if not isinstance(value, (bool, float, str, bytes)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise MatcherError(f"{what} must be an int, not {type(value).__name__}")


def bytes_arg(data) -> bytes:
    """Text bytes handed to a matcher (bytes, bytearray or memoryview); MatcherError else."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise MatcherError(f"data must be bytes, not {type(data).__name__}"
                       + (" (use accept_string for text)" if isinstance(data, str) else ""))


def pack_bool(allowed: np.ndarray, vocab_size: int | None = None) -> np.ndarray:
    """Pack a bool[n] array into int32 words (``vocab_size`` sets the width, default n)."""
    allowed = np.asarray(allowed, dtype=bool).reshape(-1)
    n = len(allowed) if vocab_size is None else int(vocab_size)
    words = bitmask_words(n)
    padded = np.zeros(words * 32, dtype=bool)
    k = min(n, len(allowed))
    padded[:k] = allowed[:k]
    return np.packbits(padded, bitorder="little").view("<u4").astype(np.int32, copy=False)


def unpack_bitmask(bitmask, vocab_size: int) -> np.ndarray:
    """bool[..., vocab_size]: the allowed flags of a packed bitmask (1-D or 2-D)."""
    words = np.ascontiguousarray(as_numpy(bitmask)).astype("<i4", copy=False)
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")
    return bits[..., :vocab_size].astype(bool)


def token_ids_to_bitmask(token_ids: Iterable[int], vocab_size: int) -> np.ndarray:
    """int32 words with exactly the bits of ``token_ids`` set."""
    out = np.zeros(bitmask_words(vocab_size), dtype=np.int32)
    set_bits(out, token_ids)
    return out


_SCATTER = 256  # above this many ids, scatter into flags and pack (ufunc.at is slow)


def set_bits(words: np.ndarray, token_ids: Iterable[int]) -> None:
    """Set the bits of ``token_ids`` in place."""
    ids = np.fromiter(token_ids, dtype=np.int64) if not isinstance(token_ids, np.ndarray) \
        else token_ids.astype(np.int64)
    if len(ids) > _SCATTER:
        flags = np.zeros(len(words) * 32, dtype=bool)
        flags[ids] = True
        np.bitwise_or(words, np.packbits(flags, bitorder="little").view("<i4"), out=words)
    elif len(ids):
        u = words.view(np.uint32)
        np.bitwise_or.at(u, ids >> 5, (np.uint32(1) << (ids & 31).astype(np.uint32)))


def clear_bits(words: np.ndarray, token_ids: Iterable[int]) -> None:
    """Clear the bits of ``token_ids`` in place."""
    ids = np.fromiter(token_ids, dtype=np.int64) if not isinstance(token_ids, np.ndarray) \
        else token_ids.astype(np.int64)
    if len(ids):
        u = words.view(np.uint32)
        np.bitwise_and.at(u, ids >> 5, ~(np.uint32(1) << (ids & 31).astype(np.uint32)))


def is_allowed(words, token_id: int) -> bool:
    """Whether ``token_id`` is allowed in a 1-D packed bitmask."""
    arr = as_numpy(words)
    return bool((int(arr[token_id >> 5]) >> (token_id & 31)) & 1)


def allowed_token_ids(words, vocab_size: int) -> np.ndarray:
    """int64 ids of the allowed tokens of a 1-D packed bitmask."""
    return np.nonzero(unpack_bitmask(words, vocab_size))[0]


def or_masks(masks, out: np.ndarray | None = None) -> np.ndarray:
    """Bitwise OR of a sequence (or 2-D array) of packed masks, in one numpy reduce."""
    stacked = np.asarray(masks, dtype=np.int32)
    return np.bitwise_or.reduce(stacked, axis=0, out=out)


def apply_token_bitmask_inplace(logits, bitmask, vocab_size: int | None = None) -> None:
    """Set disallowed logits to -inf in place (torch tensor or numpy array, 1-D or 2-D).

    Columns past the bitmask's bits (or past ``vocab_size``) are disallowed too.
    """
    width = logits.shape[-1]
    bits = unpack_bitmask(bitmask, min(width, bitmask_words(width) * 32))
    n = bits.shape[-1] if vocab_size is None else min(bits.shape[-1], int(vocab_size))
    allowed = np.zeros(bits.shape[:-1] + (width,), dtype=bool)
    allowed[..., :n] = bits[..., :n]
    if (torch := _torch()) is not None and isinstance(logits, torch.Tensor):
        mask = torch.from_numpy(~allowed).to(logits.device)
        if mask.dim() < logits.dim():
            mask = mask.expand_as(logits)
        logits.masked_fill_(mask, float("-inf"))
    else:
        if allowed.ndim < logits.ndim:
            allowed = np.broadcast_to(allowed, logits.shape)
        logits[~allowed] = -np.inf
