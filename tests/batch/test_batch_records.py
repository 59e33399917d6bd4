"""Records, ordered writing and resume logic, without a model."""
import io
import json

import pytest

from constrained.batch.local import run_local
from constrained.batch.progress import Progress
from constrained.batch.records import (OrderedWriter, Record, batches, check_resume,
                                       parse_record, plan, read_records, scan_done)
from constrained.batch.worker import JobSpec


class FakeGenerator:
    """Stands in for BatchGenerator: text is a function of the prompt and the record's seed."""

    def __init__(self, seed=0, fail_on=()):
        self.spec = JobSpec(seed=seed)
        self.fail_on = set(fail_on)
        self.calls = []

    def run(self, records):
        self.calls.append([r.index for r in records])
        out = []
        for r in records:
            if r.error is not None or r.prompt in self.fail_on:
                out.append({"index": r.index, "error": r.error or "boom"})
            else:
                out.append({"index": r.index, "text": f"{r.prompt}|{r.seed_for(self.spec.seed)}"})
        for r, res in zip(records, out):
            if r.id is not None:
                res["id"] = r.id
        return out


def _write_input(path, n, **extra):
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"prompt": f"p{i}", "id": f"r{i}", **extra}) + "\n")


def _lines(path):
    return [json.loads(x) for x in open(path).read().splitlines()]


def test_batch_parse_record_fields_and_errors():
    r = parse_record(3, '{"prompt": "hi", "id": 7, "seed": 11}')
    assert (r.index, r.prompt, r.id, r.seed, r.error) == (3, "hi", 7, 11, None)
    assert r.seed_for(100) == 11
    assert parse_record(4, '{"prompt": "hi"}').seed_for(100) == 104
    assert "not valid JSON" in parse_record(0, "{oops").error
    assert "not a JSON object" in parse_record(0, "[1]").error
    assert "no \"prompt\"" in parse_record(0, '{"id": 1}').error
    assert "integer" in parse_record(0, '{"prompt": "x", "seed": "3"}').error
    chat = parse_record(0, '{"prompt": [{"role": "user", "content": "x"}]}')
    assert chat.prompt == [{"role": "user", "content": "x"}]


def test_batch_read_records_keeps_line_numbers(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"prompt": "a"}\n\n{"prompt": "b"}\n')
    assert [(r.index, r.prompt) for r in read_records(path)] == [(0, "a"), (2, "b")]


def test_batch_scan_done_cuts_a_torn_last_line(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"index": 0, "id": "a"}\n{"index": 1}\n{"index": 2, "te')
    assert scan_done(path) == {0: "a", 1: None}
    assert path.read_text() == '{"index": 0, "id": "a"}\n{"index": 1}\n'
    assert scan_done(tmp_path / "missing.jsonl") == {}


def test_batch_check_resume_rejects_another_input():
    with pytest.raises(ValueError, match="another input"):
        check_resume({0: "x"}, [Record(0, "p", id="y")])
    check_resume({0: "x"}, [Record(0, "p", id="x"), Record(1, "q")])


def test_batch_ordered_writer_writes_in_input_order(tmp_path):
    path = tmp_path / "out.jsonl"
    with OrderedWriter(path, [1, 3, 4, 7]) as w:
        assert list(w.add({"index": 4})) == []
        assert list(w.add({"index": 1})) == [{"index": 1}]
        assert list(w.add({"index": 7})) == []
        assert [x["index"] for x in list(w.add({"index": 3}))] == [3, 4, 7]
        assert w.complete
    assert [x["index"] for x in _lines(path)] == [1, 3, 4, 7]


def test_batch_ordered_writer_writes_only_what_was_reported(tmp_path):
    path = tmp_path / "out.jsonl"
    with OrderedWriter(path, [0, 1, 2]) as w:
        assert list(w.add({"index": 1})) == []
        it = w.add({"index": 0})
        assert next(it) == {"index": 0}        # the caller stops here (an interruption)
        assert [x["index"] for x in _lines(path)] == [0]
        assert [x["index"] for x in w.add({"index": 2})] == [1, 2]
    assert [x["index"] for x in _lines(path)] == [0, 1, 2]


def test_batch_batches_slices():
    recs = [Record(i, "p") for i in range(5)]
    assert [[r.index for r in b] for b in batches(recs, 2)] == [[0, 1], [2, 3], [4]]


def test_batch_local_run_errors_do_not_stop_the_job(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text('{"prompt": "a"}\nnot json\n{"prompt": "bad"}\n{"prompt": "c", "seed": 9}\n')
    summary = run_local(inp, out, JobSpec(), batch_size=3, progress=False,
                        generator=FakeGenerator(seed=100, fail_on={"bad"}))
    lines = _lines(out)
    assert [x["index"] for x in lines] == [0, 1, 2, 3]
    assert lines[0]["text"] == "a|100" and lines[3]["text"] == "c|9"
    assert "error" in lines[1] and "error" in lines[2]
    assert (summary.total, summary.written, summary.errors) == (4, 4, 2)


class _Stop(Exception):
    pass


def test_batch_resume_after_interrupt_writes_no_duplicates(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_input(inp, 10)
    seen = []

    def interrupt(result):
        seen.append(result["index"])
        if len(seen) == 4:
            raise _Stop

    with pytest.raises(_Stop):
        run_local(inp, out, JobSpec(), batch_size=3, progress=False,
                  generator=FakeGenerator(), on_result=interrupt)
    with open(out, "a") as f:  # a write torn by the interruption
        f.write('{"index": 4, "id": "r4", "te')
    assert [json.loads(x)["index"] for x in out.read_text().splitlines()[:4]] == [0, 1, 2, 3]
    gen = FakeGenerator()
    summary = run_local(inp, out, JobSpec(), batch_size=3, progress=False, generator=gen)
    assert (summary.skipped, summary.written) == (4, 6)
    assert gen.calls == [[4, 5, 6], [7, 8, 9]]
    lines = _lines(out)
    assert [x["index"] for x in lines] == list(range(10))
    assert [x["text"] for x in lines] == [f"p{i}|{i}" for i in range(10)]
    again = run_local(inp, out, JobSpec(), progress=False, generator=FakeGenerator())
    assert (again.skipped, again.written) == (10, 0)
    assert len(_lines(out)) == 10


def test_batch_results_do_not_depend_on_batch_size(tmp_path):
    inp = tmp_path / "in.jsonl"
    _write_input(inp, 7)
    texts = []
    for size in (1, 3, 16):
        out = tmp_path / f"out{size}.jsonl"
        run_local(inp, out, JobSpec(), batch_size=size, progress=False,
                  generator=FakeGenerator(seed=5))
        texts.append([x["text"] for x in _lines(out)])
    assert texts[0] == texts[1] == texts[2]


def test_batch_plan_skips_done(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_input(inp, 3)
    out.write_text('{"index": 1, "id": "r1"}\n')
    todo, skipped = plan(inp, out)
    assert [r.index for r in todo] == [0, 2] and skipped == 1


def test_batch_progress_line():
    stream = io.StringIO()
    bar = Progress(4, done=1, stream=stream)
    bar.update(1, errors=1)
    bar.update(2)
    bar.close()
    text = stream.getvalue()
    assert "4/4" in text and "1 errors" in text and "rec/s" in text
    assert text.count("4/4") == 1


def test_batch_cli_spec_from_args():
    from constrained.batch.cli import _add_arguments, spec_from_args
    import argparse
    p = argparse.ArgumentParser()
    _add_arguments(p)
    args = p.parse_args(["--input", "i", "--output", "o", "--regex", "[ab]+", "--top-k", "5",
                         "--seed", "3", "--max-new-tokens", "7", "--greedy"])
    spec = spec_from_args(args)
    assert spec.grammar.regex == "[ab]+"
    assert spec.sampling == {"top_k": 5, "temperature": 0.0}
    assert (spec.seed, spec.max_new_tokens, spec.chat) == (3, 7, None)
    args = p.parse_args(["--input", "i", "--output", "o", "--no-chat", "--sampling",
                         '{"typical_p": 0.9, "top_k": 1}', "--top-k", "2"])
    spec = spec_from_args(args)
    assert spec.grammar is None and spec.chat is False
    assert spec.sampling == {"typical_p": 0.9, "top_k": 2}
    with pytest.raises(SystemExit):
        p.parse_args(["--input", "i", "--output", "o", "--regex", "a", "--grammar", "g.lark"])


def test_batch_cli_runs_a_job_and_resumes(tmp_path, monkeypatch, capsys):
    import constrained.batch.local as local
    import constrained.batch.ray_runner as ray_runner
    from constrained.batch.cli import main
    monkeypatch.setattr(local, "BatchGenerator", lambda spec: FakeGenerator(seed=spec.seed))
    monkeypatch.setattr(ray_runner, "ray_available", lambda: False)
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_input(inp, 3)
    argv = ["--input", str(inp), "--output", str(out), "--regex", "[0-9]+", "--seed", "10",
            "--workers", "2"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "running in this process" in err and "3 written" in err and "3/3" in err
    assert [x["text"] for x in _lines(out)] == ["p0|10", "p1|11", "p2|12"]
    assert main(argv) == 0
    assert "0 written, 3 already done" in capsys.readouterr().err
    assert len(_lines(out)) == 3
    assert main(["--input", str(inp), "--output", str(out), "--grammar", "x.txt"]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(argv[:4] + ["--ray-address", "auto"]) == 2
