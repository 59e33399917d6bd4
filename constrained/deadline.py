"""A wall-clock limit on compiling: long loops check it and stop with LimitExceededError.

``compile_deadline(seconds)`` sets the limit for the code it wraps (per thread and task: a
context variable); ``check_deadline(what)`` raises once it has passed. The checks sit in the
loops whose length the input controls (schema conversion, subset construction, grammar
preparation, mask precomputation), so a compile stops within a fraction of a second of its
limit and leaves nothing half-built behind (compiled objects are only returned when complete).
"""
from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from typing import Iterator

from .errors import LimitExceededError

_deadline: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "constrained_compile_deadline", default=None)


@contextmanager
def compile_deadline(seconds: float | None) -> Iterator[None]:
    """Limit the wrapped compile to ``seconds`` of wall-clock time (None: no limit; an outer,
    earlier limit still applies)."""
    if seconds is None:
        yield
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"compile_timeout must be a positive number of seconds, not "
                         f"{seconds!r}")
    outer = _deadline.get()
    end = time.monotonic() + seconds
    if outer is not None and outer[0] <= end:
        yield
        return
    token = _deadline.set((end, float(seconds)))
    try:
        yield
    finally:
        _deadline.reset(token)


def check_deadline(what: str) -> None:
    """LimitExceededError when the current compile's time limit has passed."""
    limit = _deadline.get()
    if limit is not None and time.monotonic() > limit[0]:
        raise LimitExceededError(f"compiling took longer than compile_timeout={limit[1]:g} s "
                                 f"(while {what})")
