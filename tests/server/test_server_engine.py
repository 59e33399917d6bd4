"""The batch engine and the service without HTTP, on the tiny random model: limits answer 503,
cancelled jobs free their rows, waiting jobs join when rows free up, and every row of a request
decodes what generate() decodes for it alone."""
import asyncio

import pytest

from constrained import Grammar, generate
from constrained.server import RequestError, ServerLimits, Service
from constrained.server.protocol import OPENAI_SAMPLING, completion_plan


def _service(tiny, **limits):
    model, vocab = tiny
    return Service(model, None, vocab, "tiny", ServerLimits(**limits))


async def _next(job, kind=None, timeout=60.0):
    while True:
        event = await asyncio.wait_for(job.queue.get(), timeout)
        if kind is None or event.kind == kind:
            return event


def test_full_server_answers_503_and_waiting_jobs_join_later(tiny):
    service = _service(tiny, max_rows=1, max_waiting=1)

    async def run():
        loop = asyncio.get_running_loop()
        long = completion_plan({"prompt": [1, 2, 3], "max_tokens": 300, "regex": "[a-z]{300}"},
                               max_n=4)
        a, _ = service.prepare(long, loop)
        service.engine.submit(a)
        await _next(a, "started")
        b, _ = service.prepare(completion_plan({"prompt": [4], "max_tokens": 5}, max_n=4), loop)
        service.engine.submit(b)                      # waits: the only row is taken
        c, _ = service.prepare(completion_plan({"prompt": [5], "max_tokens": 5}, max_n=4), loop)
        with pytest.raises(RequestError) as info:
            service.engine.submit(c)
        assert info.value.status == 503
        assert b.queue.empty()
        a.cancel()
        done = await _next(a, "done")
        assert done.result.finish_reason == "cancelled"
        finished = await _next(b, "done")
        assert finished.error is None and finished.result.n_tokens >= 1
        assert service.engine.rows_in_use == 0

    try:
        asyncio.run(run())
    finally:
        service.close()


def test_n_choices_decode_what_generate_decodes(tiny):
    model, vocab = tiny
    service = _service(tiny)
    pattern = r'\{"a": [0-9]{1,3}, "b": "[a-z]{0,8}"\}'

    async def run():
        loop = asyncio.get_running_loop()
        plan = completion_plan({"prompt": [[1, 2, 3], [7, 8]], "max_tokens": 30, "n": 3,
                                "seed": 40, "regex": pattern, "logprobs": 2}, max_n=4)
        job, lengths = service.prepare(plan, loop)
        assert lengths == [3, 3, 3, 2, 2, 2]
        service.engine.submit(job)
        results = {}
        while len(results) < 6:
            event = await _next(job, "done")
            assert event.error is None
            results[event.choice] = event.result
        return results

    try:
        results = asyncio.run(run())
    finally:
        service.close()
    for choice, prompt in enumerate([[1, 2, 3]] * 3 + [[7, 8]] * 3):
        want = generate(model, vocab, prompt, grammar=Grammar.from_regex(pattern),
                        sampling=OPENAI_SAMPLING, seed=40 + choice, max_new_tokens=30,
                        logprobs=2)
        got = results[choice]
        assert got.token_ids == want.token_ids and got.text == want.text
        assert got.token_logprobs == pytest.approx(want.token_logprobs, abs=1e-5)


def test_request_errors_name_their_field(tiny):
    service = _service(tiny, max_tokens=50, max_grammar_bytes=100)
    loop = asyncio.new_event_loop()
    cases = [({"prompt": [1], "max_tokens": 51}, "max_tokens"),
             ({"prompt": [1], "regex": "a" * 200}, "regex"),
             ({"prompt": [1], "max_tokens": 5, "suffix": "x"}, "prompt"),
             ({"prompt": [1, 9999]}, "prompt"),
             ({"prompt": [1], "grammar": "start: x"}, "grammar")]
    try:
        for body, param in cases:
            with pytest.raises(RequestError) as info:
                service.prepare(completion_plan(body, max_n=4), loop)
            assert info.value.param == param, (body, info.value.message)
    finally:
        loop.close()
        service.close()
