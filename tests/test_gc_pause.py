"""The collector pause: nesting, overlapping threads, and the collector's state afterwards."""
from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

from constrained import gc_pause
from constrained.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def _collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.skipif(not gc_pause.ENABLED, reason="CONSTRAINED_PAUSE_GC=0 in this environment")
def test_nested_pauses_resume_once_at_the_outermost_end():
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_exception_still_resumes_the_collector():
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError("inside")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.skipif(not gc_pause.ENABLED, reason="CONSTRAINED_PAUSE_GC=0 in this environment")
def test_overlapping_pauses_across_threads_resume_when_the_last_ends():
    inside = threading.Barrier(3)
    release = threading.Event()
    states = []

    def worker():
        with gc_paused():
            inside.wait()
            release.wait()
        states.append(gc.isenabled())

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()                      # both threads hold a pause
    assert not gc.isenabled()
    release.set()
    for t in threads:
        t.join()
    assert gc.isenabled()
    assert len(states) == 2


def test_the_environment_variable_turns_the_pause_off():
    code = ("import gc; from constrained.gc_pause import gc_paused\n"
            "with gc_paused(): print(gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"CONSTRAINED_PAUSE_GC": "0", "PATH": ""}, check=True)
    assert out.stdout.strip() == "True"


def test_converting_and_compiling_resume_the_collector():
    from constrained import Grammar, compile_grammar
    from constrained.vocabulary import Vocabulary
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)], eos_token_ids=[255])
    grammar = Grammar.from_json_schema({"type": "object", "$comment": "gc pause"})
    assert gc.isenabled()
    compile_grammar(grammar, vocab, cache=False)
    assert gc.isenabled()


def test_a_successful_conversion_and_compile_leave_no_cyclic_garbage():
    """What the pause relies on: reference counting frees everything a conversion, a compile
    and its masks leave behind, so nothing waits for the collector."""
    from constrained import Grammar, compile_grammar
    from constrained.vocabulary import Vocabulary
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b'{"', b'":'],
                                        eos_token_ids=[255])

    def schema(tag: str) -> dict:
        return {"type": "object", "$comment": tag, "minProperties": 1,
                "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {
                    "type": "object", "properties": {"c": {"type": "string"}}}}},
                "required": ["a"], "additionalProperties": {"type": "boolean"}}

    def run(tag: str, order: str) -> None:
        compiled = compile_grammar(Grammar.from_json_schema(schema(tag), property_order=order),
                                   vocab)
        matcher = compiled.matcher()
        for data in (b'{', b'"a"', b': 1', b'}'):
            assert len(matcher.allowed_token_ids())      # masks on the way
            assert matcher.accept_bytes(data)
        assert matcher.is_accepting()

    run("warm", "any")          # per-vocabulary tables are built once, outside the count
    gc.collect()
    gc.disable()
    try:
        for tag in ("one", "two"):
            for order in ("any", "schema"):
                run(tag, order)
        assert gc.collect() == 0
    finally:
        gc.enable()
