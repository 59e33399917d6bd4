"""Pausing Python's cyclic garbage collector while the engine builds many objects at once.

Converting a schema and compiling a grammar allocate many small containers that outlive the
youngest generation (rules, terminals, automata). Each allocation burst then sets off
collections of every generation, and a full collection walks every tracked object of the
process: tens of milliseconds in a serving process, paid by whichever compile happened to
trigger it. A conversion or compile leaves no cyclic garbage, whether it succeeds or is
refused (reference counting frees all of it; tests/json_schema/test_json_schema_refusal_garbage.py),
so pausing the collector for the duration of such a call loses nothing, and objects that die
within it never reach an older generation.

``gc_paused()`` wraps schema conversion and grammar compilation (not masks: there a pause only
moved the collections into the next token's step). Pauses nest and may overlap across threads: the collector
resumes when the last one ends, and only if it was enabled when the first began. Set the
environment variable ``CONSTRAINED_PAUSE_GC=0`` before importing the package to leave the
collector alone.
"""
from __future__ import annotations

import gc
import os
import threading
from types import TracebackType

ENABLED = os.environ.get("CONSTRAINED_PAUSE_GC", "1").strip() not in ("0", "false", "no", "off")


class _Pause:
    """Context manager: the collector is disabled while any pause is active."""

    __slots__ = ()
    _lock = threading.Lock()
    _depth = 0
    _resume = False

    def __enter__(self) -> None:
        if not ENABLED:
            return
        cls = _Pause
        with cls._lock:
            if cls._depth == 0:
                cls._resume = gc.isenabled()
                if cls._resume:
                    gc.disable()
            cls._depth += 1

    def __exit__(self, exc_type: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not ENABLED:
            return
        cls = _Pause
        with cls._lock:
            cls._depth -= 1
            if cls._depth == 0 and cls._resume:
                cls._resume = False
                gc.enable()


_PAUSE = _Pause()


def gc_paused() -> _Pause:
    """``with gc_paused(): ...`` runs the block with the cyclic collector paused."""
    return _PAUSE
