"""A wall-clock limit for one piece of benchmark work (SIGALRM, main thread only)."""
from __future__ import annotations

import signal
from contextlib import contextmanager


class TimeLimitExceeded(Exception):
    """The work did not finish within its limit."""


def _alarm(_signum, _frame):
    raise TimeLimitExceeded()


@contextmanager
def time_limit(seconds: float):
    """Raise TimeLimitExceeded inside the block once ``seconds`` have passed."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
