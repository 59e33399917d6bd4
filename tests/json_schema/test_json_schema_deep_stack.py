"""The deep-stack thread: the recursion limit goes back down only once its stack has unwound,
also when the caller's wait is interrupted (Ctrl-C, a signal handler's timeout)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent("""
    import signal, sys, threading, time
    from constrained.grammar.json_schema.deep_stack import call_with_deep_stack

    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted()

    done = {}
    finished = threading.Event()

    def down(n):
        if n == 0:
            time.sleep(1.0)             # the caller's wait is interrupted meanwhile
            return up(200)              # then calls go deeper still
        return down(n - 1) + 1

    def up(n):
        return 0 if n == 0 else up(n - 1) + 1

    def work():
        try:
            done["depth"] = down(20000)
        except RecursionError:
            done["depth"] = "RecursionError"
        finished.set()
        return done["depth"]

    limit = sys.getrecursionlimit()
    assert call_with_deep_stack(lambda: up(20000)) == 20000
    assert sys.getrecursionlimit() == limit
    signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        call_with_deep_stack(work)
        print("not interrupted")
    except Interrupted:
        print("interrupted")
    finished.wait(60)       # (an interrupted join may leave the thread marked as stopped)
    # the next call waits for the lock, which the thread releases with the limit restored
    assert call_with_deep_stack(lambda: up(20000)) == 20000
    print("depth", done["depth"], "limit restored", sys.getrecursionlimit() == limit)
""")


def test_an_interrupted_wait_leaves_the_deep_thread_its_recursion_limit():
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["interrupted", "depth 20200 limit restored True"]
