"""A plain-text progress bar on stderr (redrawn in place on a terminal, a line per step else)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts finished records out of ``total``; ``update(n)`` redraws at most every 0.2 s."""

    def __init__(self, total: int, *, done: int = 0, stream: TextIO | None = None,
                 enabled: bool = True, width: int = 30) -> None:
        self.total, self.done, self.errors = total, done, 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.width = width
        self._start = time.perf_counter()
        self._initial = done
        self._last = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1

    def update(self, n: int = 1, *, errors: int = 0) -> None:
        self.done += n
        self.errors += errors
        now = time.perf_counter()
        if self._tty and now - self._last >= 0.2:
            self._last = now
            self._draw(end="\r")
        elif not self._tty and self.total:
            decile = 10 * self.done // self.total
            if decile != self._last_decile:
                self._last_decile = decile
                self._draw(end="\n")

    def close(self) -> None:
        if self._tty or self._last_decile != 10 * self.done // max(self.total, 1):
            self._draw(end="\n")

    def line(self) -> str:
        """The bar as text: [#####-----] done/total rate eta errors."""
        frac = self.done / self.total if self.total else 1.0
        filled = int(round(frac * self.width))
        elapsed = time.perf_counter() - self._start
        rate = (self.done - self._initial) / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta = f"eta {left:.0f}s" if left == left else "eta ?"
        err = f" {self.errors} errors" if self.errors else ""
        return (f"[{'#' * filled}{'-' * (self.width - filled)}] {self.done}/{self.total} "
                f"{rate:.2f} rec/s {eta}{err}")

    def _draw(self, end: str) -> None:
        if self.enabled:
            self.stream.write(self.line() + end)
            self.stream.flush()
