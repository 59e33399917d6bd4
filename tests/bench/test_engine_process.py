"""The benchmark's engine worker: a stall inside native code is killed, and the run goes on."""
import os
import re

import pytest

from bench import engine_process
from bench.engine_process import EngineProcess


def _run(engine, doc, timeout):
    if doc == "stall":      # catastrophic backtracking: sre never looks at signals
        re.match(r"(a+)+$", "a" * 40 + "b")
    if doc == "crash":
        os._exit(3)
    engine["runs"] += 1
    return {"status": "passing", "runs": engine["runs"], "pid": os.getpid()}


def _rss():
    return (1.0, 2.0)


@pytest.fixture
def worker(monkeypatch):
    monkeypatch.setattr(engine_process, "GRACE_SECONDS", 0.5)
    w = EngineProcess(lambda: {"runs": 0}, _run, 0.2, _rss, warmup="warm",
                      on_kill=lambda reason: {"status": "killed", "reason": reason})
    yield w
    w.close()


def test_a_worker_keeps_its_state_between_schemas(worker):
    assert worker.run("a")["runs"] == 2       # (the warm-up was the first)
    assert worker.run("b")["runs"] == 3
    assert worker.rss() == (1.0, 2.0)


def test_a_stall_in_native_code_is_killed_and_a_fresh_worker_follows(worker):
    first = worker.run("a")["pid"]
    got = worker.run("stall")
    assert got["status"] == "killed" and "without an answer" in got["reason"]
    after = worker.run("a")
    assert after["pid"] != first and after["runs"] == 2 and worker.killed == 1


def test_a_crash_is_reported_as_one(worker):
    got = worker.run("crash")
    assert got["status"] == "killed" and "exit code 3" in got["reason"]
    assert worker.run("a")["status"] == "passing"


def test_an_engine_that_cannot_start_raises_import_error():
    def broken():
        raise KeyError("nope")
    with pytest.raises(ImportError, match="KeyError"):
        EngineProcess(broken, _run, 1.0, _rss)


def test_a_worker_ignores_ctrl_c_the_parent_decides(worker):
    pid = worker.run("x")["pid"]
    os.kill(pid, 2)         # SIGINT, as Ctrl-C sends the whole process group
    assert worker.run("x")["pid"] == pid        # the same worker answers
    assert worker.killed == 0
