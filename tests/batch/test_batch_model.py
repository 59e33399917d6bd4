"""Batch jobs on SmolLM2: single process, a local Ray cluster with 2 workers, a killed worker,
an interrupted and resumed run, the Ray Data API and the command line."""
import json
import os
import signal

import pytest

from constrained.batch.records import read_records
from constrained.batch.worker import BatchGenerator, JobSpec, build_grammar

pytestmark = pytest.mark.slow

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0,
                                                 "maximum": 9}},
          "required": ["n"], "additionalProperties": False}
N_PROMPTS = 20
PROMPTS = [f"Pick a digit for item {i} and answer in JSON." for i in range(N_PROMPTS)]


def _lines(path):
    return [json.loads(x) for x in open(path, encoding="utf-8").read().splitlines()]


def _texts(path):
    return [(x["index"], x.get("text"), x.get("error")) for x in _lines(path)]


def _spec(**changes):
    base = dict(grammar=build_grammar(schema=SCHEMA), sampling={"temperature": 0.9},
                max_new_tokens=10, seed=1234, complete_within_budget=True, num_threads=1)
    base.update(changes)
    return JobSpec(**base)


@pytest.fixture(scope="module")
def spec():
    return _spec()


@pytest.fixture(scope="module")
def prompts_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("batch") / "prompts.jsonl"
    with open(path, "w") as f:
        for i, p in enumerate(PROMPTS):
            rec = {"prompt": p, "id": f"q{i}"}
            if i == 7:
                rec["seed"] = 99
            f.write(json.dumps(rec) + "\n")
    return path


@pytest.fixture(scope="module")
def generator(spec):
    import torch
    threads = torch.get_num_threads()
    yield BatchGenerator(spec)  # sets this process to spec.num_threads
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def reference(generator, spec, prompts_file, tmp_path_factory):
    """The single-process run: the results every other runner must reproduce."""
    from constrained.batch.local import run_local
    out = tmp_path_factory.mktemp("ref") / "results.jsonl"
    summary = run_local(prompts_file, out, spec, batch_size=4, progress=False,
                        generator=generator)
    assert summary.written == N_PROMPTS and summary.errors == 0
    return out


def _check_valid(path):
    jsonschema = pytest.importorskip("jsonschema")
    lines = _lines(path)
    assert [x["index"] for x in lines] == list(range(N_PROMPTS))
    for x in lines:
        assert "error" not in x, x
        jsonschema.validate(json.loads(x["text"]), SCHEMA)
        assert x["finish_reason"] in ("stop", "length") and x["complete"]
        assert x["completion_tokens"] <= 10 and x["prompt_tokens"] > 0
        assert x["id"] == f"q{x['index']}"
        assert x["timings"]["wall_ms"] > 0
    assert lines[7]["seed"] == 99 and lines[3]["seed"] == 1234 + 3


def test_batch_single_process_outputs_valid_json(reference):
    _check_valid(reference)


def test_batch_single_process_regex_and_bad_records(generator, tmp_path):
    from constrained.batch.local import run_local
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    long_prompt = "word " * 9000  # more tokens than the model's 8192 positions
    inp.write_text("\n".join([json.dumps({"prompt": "Say a number"}), "{broken",
                              json.dumps({"prompt": long_prompt}),
                              json.dumps({"prompt": [{"role": "user", "content": "Hi"}]})]) + "\n")
    spec = _spec(grammar=build_grammar(regex="[0-9]{1,4}"), sampling={"selection": "greedy"},
                 max_new_tokens=6)
    own = BatchGenerator(spec, loaded=(generator.model, generator.tokenizer))
    summary = run_local(inp, out, spec, batch_size=4, progress=False, generator=own)
    lines = _lines(out)
    assert [x["index"] for x in lines] == [0, 1, 2, 3] and summary.errors == 2
    assert lines[0]["text"].isdigit() and lines[3]["text"].isdigit()
    assert "JSON" in lines[1]["error"] and "positions" in lines[2]["error"]


def test_batch_command_line_single_process(prompts_file, reference, tmp_path):
    """``python -m constrained batch`` (the main command line) reproduces the reference run."""
    import subprocess
    import sys
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    out = tmp_path / "cli.jsonl"
    cmd = [sys.executable, "-m", "constrained", "batch", "--input", str(prompts_file),
           "--output", str(out), "--schema", str(schema), "--sampling",
           json.dumps({"temperature": 0.9}), "--max-new-tokens", "10", "--seed", "1234",
           "--complete-within-budget", "--threads", "1", "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{N_PROMPTS} written" in done.stderr
    _check_valid(out)
    assert _texts(out) == _texts(reference)


# --------------------------------------------------------------------------- Ray

@pytest.fixture(scope="module")
def ray_session():
    import ray  # a dev dependency: these tests must run, never skip
    from constrained.batch.ray_runner import init_ray
    started = init_ray(num_cpus=2)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def runner(ray_session, spec):
    from constrained.batch.ray_runner import RayRunner
    r = RayRunner(spec, workers=2, cpus_per_worker=0.5)  # leaves a CPU for the Ray Data test
    r.start()
    yield r
    r.shutdown()


def test_batch_ray_two_workers_match_single_process(runner, prompts_file, reference, tmp_path):
    out = tmp_path / "ray.jsonl"
    summary = runner.run(prompts_file, out, batch_size=4, progress=False)
    assert summary.written == N_PROMPTS
    _check_valid(out)
    assert _texts(out) == _texts(reference)
    assert len({x["worker"] for x in _lines(out)}) == 2


def test_batch_ray_killed_worker_still_completes(runner, prompts_file, reference, tmp_path):
    out = tmp_path / "ray.jsonl"
    victim = runner.infos[0]["pid"]
    killed = []

    def kill_once(result):
        if not killed:
            killed.append(result["index"])
            os.kill(victim, signal.SIGKILL)

    summary = runner.run(prompts_file, out, batch_size=4, progress=False, on_result=kill_once)
    assert killed and summary.written == N_PROMPTS
    assert _texts(out) == _texts(reference)


class _Interrupt(Exception):
    pass


def test_batch_ray_resume_writes_no_duplicates(runner, prompts_file, reference, tmp_path):
    out = tmp_path / "ray.jsonl"
    seen = []

    def interrupt(result):
        seen.append(result["index"])
        if len(seen) == 6:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        runner.run(prompts_file, out, batch_size=4, progress=False, on_result=interrupt)
    assert len(_lines(out)) == 6
    summary = runner.run(prompts_file, out, batch_size=4, progress=False)
    assert (summary.skipped, summary.written) == (6, N_PROMPTS - 6)
    assert _texts(out) == _texts(reference)


def test_batch_ray_dataset_api(ray_session, spec, prompts_file, reference):
    from constrained.batch import generate_dataset
    ref = {x["index"]: x["text"] for x in _lines(reference)}
    rows = [{"prompt": r.prompt, "index": r.index} for r in read_records(prompts_file)][:4]
    ds = ray_session.data.from_items(rows)
    out = generate_dataset(ds, schema=SCHEMA, sampling=spec.sampling, max_new_tokens=10,
                           seed=1234, complete_within_budget=True, workers=1, batch_size=2)
    got = sorted(out.take_all(), key=lambda row: row["index"])
    assert [(row["index"], row["text"], row["error"]) for row in got] == [
        (i, ref[i], "") for i in range(4)]
