"""Run a recursive conversion on a thread with a deep stack, for schemas that nest deeply.

The converter recurses once per level of the schema (and per ``$ref`` it follows), a few
Python frames each; Python's default recursion limit stops it near 200 levels. Deep documents
are converted again on a thread whose stack and recursion limit are sized for
``max_schema_depth``, so the documented limit is the real one.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")

_STACK_BYTES = 1 << 30          # address space only: pages are committed as the stack grows
_RECURSION_LIMIT = 250_000
_lock = threading.Lock()


def call_with_deep_stack(fn: Callable[[], T]) -> T:
    """``fn()`` on a fresh thread with a 1 GiB stack and a high recursion limit; its result
    or exception.

    The limit is the interpreter's, so it goes back down only once the deep stack has
    unwound, by the thread itself: an exception that interrupts the wait (Ctrl-C, a signal
    handler's timeout) leaves the thread to finish (``fn`` keeps the compile deadline) instead
    of lowering the limit under thousands of frames, which aborts the interpreter ("Cannot
    recover from stack overflow")."""
    outcome: dict = {}
    _lock.acquire()
    old_limit = sys.getrecursionlimit()

    def give_back() -> None:
        sys.setrecursionlimit(old_limit)
        _lock.release()

    def run() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as e:      # handed to the caller's thread below
            outcome["error"] = e
        finally:
            give_back()

    try:
        old_size = threading.stack_size(_STACK_BYTES)
    except BaseException:
        give_back()
        raise
    starting = False
    try:
        sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
        worker = threading.Thread(target=run, name="constrained-deep-schema", daemon=True)
        starting = True
        worker.start()
    except BaseException as e:
        # the thread gives them back once it runs: it does unless it could not be started
        # (RuntimeError), while an exception that interrupts start()'s wait leaves it running
        if not starting or isinstance(e, RuntimeError):
            give_back()
        raise
    finally:
        threading.stack_size(old_size)
    worker.join()
    error = outcome.pop("error", None)
    if error is None:
        return outcome.pop("value")
    # the error's traceback holds ``run``'s frame, whose closure holds ``outcome``: emptied,
    # and this frame's reference dropped, the deep stack's frames form no reference cycle and
    # are freed with the error (not by a later collection, during someone else's work)
    try:
        raise error
    finally:
        del error
