"""The MaskBench runner's whole-run limit: past it, or on SIGTERM, no new schema starts and
the table covers the schemas every engine ran."""
import json
import os
import signal
from types import SimpleNamespace

from bench import maskbench


class _Engine:
    def __init__(self, on_run=None):
        self.docs, self.on_run = [], on_run

    def run(self, doc):
        self.docs.append(doc["n"])
        if self.on_run:
            self.on_run(doc)
        return {"status": "passing", "mask_us": [1.0], "compile_ms": 1.0}


def _files(tmp_path, n):
    out = []
    for i in range(n):
        p = tmp_path / f"{i:02d}.json"
        p.write_text(json.dumps({"n": i}))
        out.append(p)
    return out


def _run(files, engines, minutes=None):
    stop = maskbench._RunLimit(minutes)
    try:
        return maskbench._run_files(files, engines, None, SimpleNamespace(verbose=False),
                                    stop), stop
    finally:
        stop.close()


def test_no_limit_runs_every_schema(tmp_path):
    got, stop = _run(_files(tmp_path, 4), {"a": _Engine(), "b": _Engine()})
    assert [len(v) for v in got.values()] == [4, 4] and not stop.why


def test_a_spent_limit_starts_nothing(tmp_path):
    got, stop = _run(_files(tmp_path, 3), {"a": _Engine()}, minutes=0)
    assert got == {"a": []} and "max-minutes" in stop.why


def test_sigterm_lets_the_schema_under_way_finish_in_every_engine(tmp_path):
    def term(doc):
        if doc["n"] == 1:
            os.kill(os.getpid(), signal.SIGTERM)
    engines = {"a": _Engine(term), "b": _Engine()}
    before = signal.getsignal(signal.SIGTERM)
    got, stop = _run(_files(tmp_path, 5), engines)
    assert engines["a"].docs == [0, 1] and engines["b"].docs == [0, 1]
    assert [r["file"] for r in got["b"]] == ["00.json", "01.json"]
    assert "SIGTERM" in stop.why
    assert signal.getsignal(signal.SIGTERM) is before       # the handler given back
