"""The command line, run as a subprocess: output on stdout, one-line errors, exit codes."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "constrained", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_decoding_cli_bad_model_path_is_one_line_error(tmp_path):
    p = _run("generate", "--model", str(tmp_path / "nope"), "--prompt", "hi", "--regex", "a+")
    assert p.returncode == 1
    assert p.stderr.strip().startswith("error: model") and "nope" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_decoding_cli_bad_grammar_is_one_line_error(tmp_path):
    p = _run("generate", "--prompt", "hi", "--regex", "a(b")
    assert p.returncode == 1 and p.stderr.startswith("error:") and "Traceback" not in p.stderr
    bad = tmp_path / "bad.lark"
    bad.write_text("start: foo\n")
    p = _run("generate", "--prompt", "hi", "--grammar", str(bad))
    assert p.returncode == 1 and p.stderr.startswith("error:") and "Traceback" not in p.stderr
    p = _run("generate", "--prompt", "hi", "--schema", str(tmp_path / "missing.json"))
    assert p.returncode == 1 and "not found" in p.stderr


@pytest.mark.slow
def test_decoding_cli_generate_with_regex():
    p = _run("generate", "--prompt", "Pick a colour and a number.", "--regex",
             r"(red|green|blue) [0-9]{1,2}", "--max-new-tokens", "8", "--seed", "1",
             "--temperature", "0.8", "--complete-within-budget", "--timings")
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"(red|green|blue) [0-9]{1,2}", p.stdout.strip()), p.stdout
    assert "ms/token" in p.stderr


def test_decoding_cli_bad_structural_tag_and_tools_are_one_line_errors(tmp_path):
    bad = tmp_path / "tag.json"
    bad.write_text('{"type": "structural_tag", "format": {"type": "nope"}}')
    p = _run("generate", "--prompt", "hi", "--structural-tag", str(bad))
    assert p.returncode == 1 and "/format/type" in p.stderr and "Traceback" not in p.stderr
    tools = tmp_path / "tools.json"
    tools.write_text('[{"type": "function", "function": {"name": "f"}}]')
    p = _run("generate", "--prompt", "hi", "--tools", str(tools))
    assert p.returncode == 1 and "/tools/0/function/parameters" in p.stderr


@pytest.mark.slow
def test_decoding_cli_structural_tag_and_tools():
    import json
    import jsonschema
    p = _run("generate", "--prompt", "What is 2 plus 3?", "--structural-tag",
             "grammars/tool_calls.structural_tag.json", "--max-new-tokens", "120", "--seed", "0",
             "--complete-within-budget")
    assert p.returncode == 0, p.stderr
    out = p.stdout[:-1]                  # print adds one newline
    assert out.startswith("<think>") and "</think>\n\n" in out, out
    p = _run("generate", "--prompt", "What is 2 plus 3?", "--tools",
             "grammars/weather_tools.json", "--tool-choice", "add", "--max-new-tokens", "60",
             "--seed", "0", "--complete-within-budget")
    assert p.returncode == 0, p.stderr
    answer = json.loads(p.stdout.strip().splitlines()[-1])
    calls = answer["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["add"]
    schema = json.loads((ROOT / "grammars" / "weather_tools.json").read_text())[1]
    jsonschema.validate(json.loads(calls[0]["function"]["arguments"]),
                        schema["function"]["parameters"])
