"""vLLM as a host: the CPU build of vLLM, in its own environment, runs SmolLM2 with
ConstrainedLogitsProcessor; two requests with different schemas in one batch both validate."""
import json
import os
import subprocess
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                      "age": {"type": "integer", "minimum": 0}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                      "tags": {"type": "array", "items": {"enum": ["a", "b"]},
                                               "maxItems": 2},
                                      "ok": {"type": "boolean"}},
     "required": ["city", "ok"], "additionalProperties": False},
]


def _vllm_python() -> str:
    python = os.environ.get("CONSTRAINED_VLLM_PYTHON", str(ROOT / ".venv-vllm" / "bin" /
                                                          "python"))
    assert Path(python).is_file(), f"vLLM's environment is missing ({python}): run " \
                                   "make test-integrations"
    return python


def test_vllm_logits_processor_keeps_two_requests_valid():
    python = _vllm_python()
    from constrained.model import hf_folder
    folder = hf_folder("smollm2")
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1")
    proc = subprocess.run([python, str(ROOT / "tests" / "integrations" / "vllm_run.py"),
                           str(folder), json.dumps(SCHEMAS), "120"], capture_output=True,
                          text=True, timeout=900, env=env, cwd=ROOT)
    lines = [line for line in proc.stdout.splitlines() if line.startswith('{"texts"')]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1])
    for text, finish, schema in zip(out["texts"], out["finish"], SCHEMAS):
        assert finish == "stop", text
        jsonschema.validate(json.loads(text), schema)


def test_vllm_openai_server_with_the_processor():
    """vLLM's OpenAI server with --logits-processors: two concurrent requests with different
    schemas (vllm_xargs) validate; a bad constraint is a 400 and the server stays up."""
    import threading
    import time
    import urllib.request

    openai = pytest.importorskip("openai")
    from constrained.model import hf_folder
    from constrained.server.process import free_port
    folder, port = str(hf_folder("smollm2")), free_port()
    proc = subprocess.Popen(
        [_vllm_python(), "-m", "vllm.entrypoints.openai.api_server", "--model", folder,
         "--port", str(port), "--max-model-len", "2048", "--gpu-memory-utilization", "0.1",
         "--logits-processors", "constrained.hosts.vllm_processor:ConstrainedLogitsProcessor"],
        env=dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1"), cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                time.sleep(1)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused",
                               max_retries=0, timeout=600)
        answers = {}

        def ask(i):
            r = client.chat.completions.create(
                model=folder, messages=[{"role": "user", "content": "Answer in JSON."}],
                max_tokens=120, temperature=0.7, seed=i,
                extra_body={"vllm_xargs": {"constrained_json_schema": json.dumps(SCHEMAS[i])}})
            answers[i] = r.choices[0]

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, schema in enumerate(SCHEMAS):
            assert answers[i].finish_reason == "stop", answers[i].message.content
            jsonschema.validate(json.loads(answers[i].message.content), schema)
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model=folder, messages=[{"role": "user", "content": "hi"}], max_tokens=4,
                extra_body={"vllm_xargs": {"constrained_regex": "(ab"}})
        assert "constrained_regex" in str(info.value)
        r = client.chat.completions.create(
            model=folder, messages=[{"role": "user", "content": "A year?"}], max_tokens=6,
            extra_body={"vllm_xargs": {"constrained_regex": "(19|20)[0-9]{2}"}})
        assert len(r.choices[0].message.content) == 4
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
