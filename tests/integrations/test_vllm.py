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


def test_vllm_logits_processor_keeps_two_requests_valid():
    python = os.environ.get("CONSTRAINED_VLLM_PYTHON", str(ROOT / ".venv-vllm" / "bin" /
                                                          "python"))
    assert Path(python).is_file(), f"vLLM's environment is missing ({python}): run " \
                                   "make test-integrations"
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
