"""Typed errors raised by the sampler chain."""
from __future__ import annotations

from typing import Sequence


class SamplerError(ValueError):
    """Base class of every error raised by :mod:`samplers`."""


class InvalidParameterError(SamplerError):
    """A sampling parameter is out of range or of the wrong type.

    ``param`` names the offending parameter; ``row`` is the batch row when known.
    """

    def __init__(self, param: str, message: str, row: int | None = None) -> None:
        self.param = param
        self.row = row
        where = f" (row {row})" if row is not None else ""
        super().__init__(f"{param}{where}: {message}")


class UnknownSamplerError(InvalidParameterError):
    """A sampler order names a sampler (by name, letter or number) that does not exist."""

    def __init__(self, item: object, message: str | None = None) -> None:
        self.item = item
        super().__init__("samplers", message or f"unknown sampler {item!r}")


class AllMaskedError(SamplerError):
    """Every token of a row is masked (-inf), so nothing can be sampled."""

    def __init__(self, rows: Sequence[int], stage: str = "input") -> None:
        self.rows = list(rows)
        self.stage = stage
        super().__init__(
            f"all tokens are masked (-inf) in row(s) {self.rows} at {stage}; nothing can be sampled"
        )


class InvalidLogitsError(SamplerError):
    """Logits have the wrong shape, contain NaN or +inf, or do not fit the vocabulary."""
