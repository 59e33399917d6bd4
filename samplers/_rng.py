"""Seeded randomness: per-row generators and a counter-based hash for per-token draws.

Each row owns numpy PCG64 generators (one for selection, one for XTC's coin) so its draws do not
depend on the other rows of the batch. The exponential race needs one Exp(1) variable per
candidate token; those come from a splitmix64 hash of (a 63-bit key drawn from the row's
generator once per step, token id), computed vectorized in torch int64 arithmetic (which wraps
on overflow), so a token's variable does not depend on how the candidates are laid out.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

_M64 = (1 << 64) - 1


def _signed(x: int) -> int:
    x &= _M64
    return x - (1 << 64) if x >= (1 << 63) else x


_GOLDEN = _signed(0x9E3779B97F4A7C15)
_MUL1 = _signed(0xBF58476D1CE4E5B9)
_MUL2 = _signed(0x94D049BB133111EB)

# stream tags mixed into the seed so the selection and XTC generators of one seed are independent
STREAM_SELECT = 0x53454C
STREAM_XTC = 0x585443


def _srl(z: Tensor, s: int) -> Tensor:
    """Logical right shift of int64 values."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def mix64(z: Tensor) -> Tensor:
    """splitmix64 finaliser on int64 tensors (bijective on 64-bit words)."""
    z = (z ^ _srl(z, 30)) * _MUL1
    z = (z ^ _srl(z, 27)) * _MUL2
    return z ^ _srl(z, 31)


def hashed_uniform(keys: Tensor, ids: Tensor) -> Tensor:
    """Uniform (0, 1) float64 draws for each (row key, token id); keys [B], ids [B, N]."""
    z = mix64(keys[:, None] + (ids + 1) * _GOLDEN)
    return (_srl(z, 11).to(torch.float64) + 0.5) * (2.0 ** -53)


def hashed_exponential(keys: Tensor, ids: Tensor) -> Tensor:
    """Exp(1) float64 draws for each (row key, token id)."""
    return -torch.log(hashed_uniform(keys, ids))


def seed_key(seeds: Tensor) -> Tensor:
    """Turn int64 seeds into well-mixed 64-bit keys."""
    return mix64(seeds.to(torch.int64) * _GOLDEN + 0x2545F491)


def make_generator(seed: int | None, stream: int) -> np.random.Generator:
    """A numpy PCG64 generator for (seed, stream); seed None draws fresh OS entropy."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([int(seed) & _M64, stream])
