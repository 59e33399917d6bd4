"""One engine per child process, so a schema's time limit holds even inside native code.

A SIGALRM limit (bench/time_limit.py) is only honoured between Python bytecodes: an engine
stuck in its own C++ or Rust compile never sees it, and a whole benchmark run stalls. Here
each engine lives in a forked worker that runs schemas on request; the parent waits for a
result at most the limit plus a grace period, then kills the worker, records a timeout and
starts a fresh one (warmed up again) for the schemas that follow. The worker keeps its
process-wide state from schema to schema, as an engine in a serving process would.
"""
from __future__ import annotations

import atexit
import multiprocessing
import signal
from typing import Any, Callable

# the parent waits this much longer than the soft limit the worker enforces itself
GRACE_SECONDS = 10.0


def _serve(conn, make_engine: Callable[[], Any], run: Callable, warmup: dict | None,
           timeout: float, rss: Callable[[], tuple]) -> None:
    # Ctrl-C reaches the whole process group: the parent decides when to stop (and kills
    # this worker then), so a schema under way is not cut short here; a worker forked after
    # the parent set its own handlers does not keep them
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        engine = make_engine()
    except Exception as e:  # noqa: BLE001 - reported to the parent (not installed, say)
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    if warmup is not None:
        run(engine, warmup, timeout)
    conn.send(("ready", None))
    while True:
        kind, doc = conn.recv()
        if kind == "stop":
            break
        conn.send(("done", run(engine, doc, timeout) if kind == "run" else rss()))
    atexit._run_exitfuncs()     # (a forked worker ends with os._exit: the engine's clean-up)


class EngineProcess:
    """An engine in a worker process: ``run(doc)`` returns what ``run(engine, doc, timeout)``
    returns in the worker, or ``on_kill(reason)`` when the worker died or had to be killed
    (``reason`` says which)."""

    def __init__(self, make_engine: Callable[[], Any], run: Callable, timeout: float,
                 rss: Callable[[], tuple], warmup: dict | None = None,
                 on_kill: Callable[[str], dict] | None = None) -> None:
        self._args = (make_engine, run, warmup, timeout, rss)
        self.timeout = timeout
        self._on_kill = on_kill or (lambda reason: {"status": reason})
        self.killed = 0
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child,) + self._args, daemon=True)
        self._proc.start()
        child.close()
        kind, detail = self._conn.recv()
        if kind == "error":
            self._proc.join()
            raise ImportError(detail)

    def _ask(self, message: tuple, wait: float) -> tuple[bool, Any]:
        """(True, the answer), or (False, why there is none) after restarting the worker."""
        self._conn.send(message)
        if self._conn.poll(wait):
            try:
                return True, self._conn.recv()[1]
            except EOFError:     # (its pipe closes before the process is reaped: wait)
                self._proc.join(GRACE_SECONDS)
                why = f"the worker died (exit code {self._proc.exitcode})"
        else:
            why = f"killed after {wait:.0f}s without an answer"
        self._proc.kill()
        self._proc.join()
        self.killed += 1
        self._start()
        return False, why

    def run(self, doc: dict) -> dict:
        ok, got = self._ask(("run", doc), self.timeout + GRACE_SECONDS)
        return got if ok else self._on_kill(got)

    def rss(self) -> tuple:
        """The worker's resident memory (MB, current and peak)."""
        ok, got = self._ask(("rss", None), GRACE_SECONDS)
        return got if ok else (float("nan"), float("nan"))

    def close(self) -> None:
        if self._proc.is_alive():
            self._conn.send(("stop", None))
            self._proc.join(GRACE_SECONDS)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
