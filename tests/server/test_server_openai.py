"""The OpenAI-compatible server, driven by the official openai client over 127.0.0.1.

Outputs are judged by independent parts: jsonschema for JSON Schema outputs, Lark's own parser
for Lark grammars, re.fullmatch for regexes; logprobs are compared with generate() on the same
request in this process."""
import json
import re
import threading
import time
import urllib.request
from pathlib import Path

import pytest

openai = pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")
lark = pytest.importorskip("lark")

pytestmark = pytest.mark.slow
GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"
PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 20},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "email": {"type": "string", "format": "email"},
    "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3}},
    "required": ["name", "age"], "additionalProperties": False}
PERSON_FORMAT = {"type": "json_schema",
                 "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
ASK = [{"role": "user", "content": "Describe a person as JSON."}]


def _health(server) -> dict:
    with urllib.request.urlopen(server + "/health", timeout=10) as r:
        return json.loads(r.read())


def _person(client, seed, **extra):
    r = client.chat.completions.create(
        model="smollm2", messages=ASK, response_format=PERSON_FORMAT, max_tokens=80, seed=seed,
        extra_body={"complete_within_budget": True, **extra})
    return r


def test_models_and_health(client, server):
    assert [m.id for m in client.models.list().data] == ["smollm2"]
    assert _health(server)["status"] == "ok"


def test_json_schema_outputs_validate(client):
    for seed in range(4):
        r = _person(client, seed)
        choice = r.choices[0]
        assert choice.finish_reason == "stop", choice.message.content
        jsonschema.validate(json.loads(choice.message.content), PERSON)
        assert r.usage.completion_tokens > 0 and r.usage.prompt_tokens > 0


def test_json_object_outputs_are_json_objects(client):
    r = client.chat.completions.create(model="smollm2", messages=ASK, max_tokens=60, seed=3,
                                       response_format={"type": "json_object"},
                                       extra_body={"complete_within_budget": True})
    assert isinstance(json.loads(r.choices[0].message.content), dict)


def test_lark_and_regex_outputs_parse(client):
    text = (GRAMMARS / "arithmetic.lark").read_text()
    parser = lark.Lark(text, parser="earley")
    for seed in range(3):
        r = client.completions.create(model="smollm2", prompt="Compute: ", max_tokens=24,
                                      seed=seed, extra_body={"grammar": text,
                                                             "complete_within_budget": True})
        assert r.choices[0].finish_reason == "stop"
        parser.parse(r.choices[0].text)
    gbnf = (GRAMMARS / "json.gbnf").read_text()
    r = client.completions.create(model="smollm2", prompt="JSON: ", max_tokens=40, seed=1,
                                  extra_body={"grammar": gbnf, "complete_within_budget": True})
    json.loads(r.choices[0].text)
    pattern = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-[0-3][0-9]"
    r = client.completions.create(model="smollm2", prompt="The date was ", max_tokens=12, n=3,
                                  seed=7, extra_body={"regex": pattern})
    assert len(r.choices) == 3
    for choice in r.choices:
        assert re.fullmatch(pattern, choice.text), choice.text


def test_streaming_reassembles_to_the_non_streaming_text(client):
    for chat in (True, False):
        kwargs = dict(model="smollm2", max_tokens=40, seed=11, temperature=0.9)
        if chat:
            whole = client.chat.completions.create(messages=ASK, response_format=PERSON_FORMAT,
                                                   **kwargs)
            chunks = list(client.chat.completions.create(
                messages=ASK, response_format=PERSON_FORMAT, stream=True,
                stream_options={"include_usage": True}, **kwargs))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            want = whole.choices[0].message.content
        else:
            whole = client.completions.create(prompt="Once upon a time", **kwargs)
            chunks = list(client.completions.create(prompt="Once upon a time", stream=True,
                                                    stream_options={"include_usage": True},
                                                    **kwargs))
            text = "".join(c.choices[0].text for c in chunks if c.choices)
            want = whole.choices[0].text
        assert text == want
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices
                    and c.choices[0].finish_reason]
        assert finishes == [whole.choices[0].finish_reason]
        assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_logprobs_match_generate_on_the_same_request(client, smollm2):
    from constrained import Grammar, generate
    from constrained.server.protocol import OPENAI_SAMPLING
    model, tokenizer, vocab = smollm2
    pattern = r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?"
    r = client.completions.create(model="smollm2", prompt="A name:", max_tokens=10, seed=5,
                                  logprobs=3, extra_body={"regex": pattern,
                                                          "return_tokens_as_token_ids": True})
    lp = r.choices[0].logprobs
    ids = [int(t.split(":")[1]) for t in lp.tokens]
    want = generate(model, tokenizer, "A name:", grammar=Grammar.from_regex(pattern),
                    sampling=OPENAI_SAMPLING, seed=5, max_new_tokens=10, logprobs=3)
    assert ids == want.token_ids and r.choices[0].text == want.text
    assert lp.token_logprobs == pytest.approx(want.token_logprobs, abs=1e-4)
    for got, exp in zip(lp.top_logprobs, want.top_logprobs):
        assert {int(k.split(":")[1]): v for k, v in got.items()} == pytest.approx(exp, abs=1e-4)
    # chat logprobs: one entry per token, the top alternatives included
    c = client.chat.completions.create(model="smollm2", messages=ASK, max_tokens=8, seed=2,
                                       logprobs=True, top_logprobs=2)
    content = c.choices[0].logprobs.content
    assert "".join(t.token for t in content) == c.choices[0].message.content
    assert all(len(t.top_logprobs) <= 2 and t.logprob <= 0 for t in content)


def test_logit_bias_bans_and_forces_tokens(client):
    base = dict(model="smollm2", prompt="The capital of France is", max_tokens=1,
                temperature=0, extra_body={"return_tokens_as_token_ids": True}, logprobs=1)
    first = client.completions.create(**base).choices[0].logprobs.tokens[0]
    greedy = int(first.split(":")[1])
    banned = client.completions.create(**base, logit_bias={str(greedy): -100})
    assert int(banned.choices[0].logprobs.tokens[0].split(":")[1]) != greedy
    for token in (1000, 4567):
        forced = client.completions.create(**{**base, "temperature": 1.0, "seed": token},
                                           logit_bias={str(token): 100})
        assert int(forced.choices[0].logprobs.tokens[0].split(":")[1]) == token


def test_suffix_infill_returns_a_middle(client):
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "age": {"type": "integer"},
                                               "city": {"type": "string"}},
              "required": ["name", "age", "city"], "additionalProperties": False}
    prefix, suffix = '{"name": "Ann", "age": ', ', "city": "Oslo"}'
    for seed in range(3):
        r = client.completions.create(
            model="smollm2", prompt=prefix, suffix=suffix, max_tokens=16, seed=seed,
            extra_body={"complete_within_budget": True, "response_format": {
                "type": "json_schema", "json_schema": {"name": "s", "schema": schema}}})
        middle = r.choices[0].text
        assert r.choices[0].finish_reason == "stop"
        jsonschema.validate(json.loads(prefix + middle + suffix), schema)


@pytest.mark.parametrize("request_kwargs, status, param", [
    (dict(temperature=-1), 400, "temperature"),
    (dict(top_p=2.0), 400, "top_p"),
    (dict(extra_body={"min_p": "x"}), 400, "min_p"),
    (dict(extra_body={"mirostat": 3}), 400, "mirostat"),
    (dict(extra_body={"samplers": ["nope"]}), 400, "samplers"),
    (dict(extra_body={"frobnicate": 1}), 400, "frobnicate"),
    (dict(n=1000), 400, "n"),
    (dict(max_tokens=10 ** 6), 400, "max_tokens"),
    (dict(logit_bias={"12": 500}), 400, "logit_bias"),
    (dict(response_format={"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object", "properties": {"a": {"type": "frob"}}}}}),
     400, "response_format.json_schema.schema"),
    (dict(response_format={"type": "yaml"}), 400, "response_format.type"),
    (dict(extra_body={"grammar": "start: a\na: \"x\" b\n"}), 400, "grammar"),
    (dict(extra_body={"grammar": "root ::= \"a\" (\n"}), 400, "grammar"),
    (dict(extra_body={"regex": "(ab"}), 400, "regex"),
    (dict(extra_body={"regex": "a", "grammar": "start: \"a\""}), 400, "regex"),
    (dict(max_tokens=None, max_completion_tokens=10 ** 6), 400, "max_completion_tokens"),
    (dict(model="gpt-9"), 404, "model"),
    (dict(tools=[{"type": "function", "function": {"name": "f"}}]),
     400, "tools[0].function.parameters"),
    (dict(tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
          tool_choice={"type": "function", "function": {"name": "g"}}), 400, "tool_choice"),
    (dict(tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
          response_format={"type": "json_object"}), 400, "tools"),
    (dict(tools=[{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "strnig"}}}}}]),
     400, "tools[0].function.parameters.properties.a.type"),
    (dict(messages=[{"role": "robot", "content": "x"}]), 400, "messages[0].role"),
    (dict(max_tokens=3, extra_body={"regex": "[a-z]{30}", "complete_within_budget": True}),
     400, "max_tokens"),
])
def test_bad_requests_get_an_error_naming_the_field(client, request_kwargs, status, param):
    kwargs = dict(model="smollm2", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
    kwargs.update(request_kwargs)
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(**kwargs)
    assert info.value.status_code == status
    assert info.value.body["param"] == param, info.value.body
    assert info.value.body["message"]


def test_grammar_errors_name_the_line_and_the_schema_pointer(client):
    with pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="smollm2", prompt="x", max_tokens=4,
                                  extra_body={"grammar": "start: \"a\"\n  | b\n"})
    assert "line 2" in info.value.body["message"]
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="smollm2", messages=ASK, max_tokens=4,
                                       response_format={"type": "json_schema", "json_schema": {
                                           "name": "x", "schema": {"type": "object", "properties": {
                                               "a": {"type": "string", "pattern": "(?=a)"}}}}})
    assert "/properties/a" in info.value.body["message"]


def test_malformed_bodies_are_refused(server):
    def post(data: bytes):
        req = urllib.request.Request(server + "/v1/completions", data=data,
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=30)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())
        raise AssertionError("accepted")
    code, body = post(b'{"prompt": "x",')
    assert code == 400 and "line 1" in body["error"]["message"]
    code, body = post(b'[1, 2]')
    assert code == 400
    code, body = post(b'{"prompt": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert code == 400 and "nested" in body["error"]["message"]
    code, body = post(b'{"prompt": "x", "pad": "' + b"y" * 2_100_000 + b'"}')
    assert code == 413


def test_sixteen_concurrent_clients_all_get_valid_outputs(client, server):
    results, errors = {}, []

    def one(i):
        try:
            r = _person(client, 100 + i)
            results[i] = r.choices[0]
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(results) == list(range(16))
    for choice in results.values():
        assert choice.finish_reason == "stop"
        jsonschema.validate(json.loads(choice.message.content), PERSON)
    assert _health(server)["rows"] == 0


def test_concurrent_rows_decode_what_they_decode_alone(client):
    """Continuous batching changes nothing a request sees (greedy: same text alone or not)."""
    prompts = ["Tell me about cats.", "Write a haiku.", "List three colors.", "Say hi."]
    alone = [client.chat.completions.create(
        model="smollm2", messages=[{"role": "user", "content": p}], max_tokens=12,
        temperature=0).choices[0].message.content for p in prompts]
    together = [None] * len(prompts)

    def one(i):
        time.sleep(0.15 * i)   # join the batch at different steps
        together[i] = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": prompts[i]}],
            max_tokens=12, temperature=0).choices[0].message.content

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert together == alone


def test_a_client_that_goes_away_frees_its_row(client, server):
    stream = client.chat.completions.create(model="smollm2", messages=ASK, max_tokens=400,
                                            stream=True, temperature=1.0, seed=1)
    for i, _ in enumerate(stream):
        if i == 3:
            break
    stream.close()
    deadline = time.monotonic() + 30
    while _health(server)["rows"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _health(server)["rows"] == 0


def test_logprob_recovery_through_the_openai_client(client, smollm2):
    """The recovery module against this server: the top tokens of the next-token distribution,
    recovered from top-5 answers under logit biases, match the model's exact logprobs."""
    from constrained.logprobs import (openai_argmax_oracle, openai_top_logprobs_oracle,
                                      recover_by_bisection, recover_top_n)
    from constrained.logprobs.completion import Completer, true_logprobs
    model, tokenizer, vocab = smollm2
    ids = tokenizer.encode("The capital of France is", add_special_tokens=False)
    truth = true_logprobs(Completer(model, tokenizer, vocab=vocab), ids)
    oracle = openai_top_logprobs_oracle(client, "smollm2", ids, k=5)
    got = recover_top_n(oracle, vocab.size, 12)
    known = got.known_ids()
    assert len(known) == 12 and got.calls <= 4
    assert set(known) == set(truth.argsort()[::-1][:12].tolist())
    assert got.logprobs[known] == pytest.approx(truth[known], abs=1e-4)
    # argmax only: bisection on the biases recovers log-odds against the top token
    top3 = truth.argsort()[::-1][:3].tolist()
    argmax = recover_by_bisection(openai_argmax_oracle(client, "smollm2", ids), vocab.size,
                                  token_ids=top3, tol=1e-3)
    odds = argmax.logprobs[top3] - argmax.logprobs[top3[0]]
    assert odds == pytest.approx(truth[top3] - truth[top3[0]], abs=1e-2)


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
ADD = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
       "required": ["a", "b"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "parameters": ADD}}]
TOOL_SCHEMAS = {"get_weather": WEATHER, "add": ADD}


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "add"}}])
def test_tool_calls_come_back_parsed_and_valid(client, choice):
    for seed in range(2):
        r = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": "What is 4 plus 5?"}],
            tools=TOOLS, tool_choice=choice, max_tokens=70, seed=seed,
            extra_body={"complete_within_budget": True})
        choice0 = r.choices[0]
        assert choice0.finish_reason == "tool_calls", choice0.message
        calls = choice0.message.tool_calls
        assert calls and choice0.message.content is None
        for call in calls:
            assert call.type == "function" and call.id
            jsonschema.validate(json.loads(call.function.arguments),
                                TOOL_SCHEMAS[call.function.name])
        if isinstance(choice, dict):
            assert [c.function.name for c in calls] == ["add"]


def test_tool_calls_stream_and_history(client):
    chunks = list(client.chat.completions.create(
        model="smollm2", messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=TOOLS, tool_choice="required", max_tokens=70, seed=1, stream=True,
        parallel_tool_calls=False, extra_body={"complete_within_budget": True}))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    calls = [tc for d in deltas for tc in (d.tool_calls or [])]
    assert len(calls) == 1
    jsonschema.validate(json.loads(calls[0].function.arguments),
                        TOOL_SCHEMAS[calls[0].function.name])
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    # the call and its result go back in the history; "none" then answers in text
    history = [{"role": "user", "content": "Weather in Oslo?"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": calls[0].id, "type": "function",
                    "function": {"name": calls[0].function.name,
                                 "arguments": calls[0].function.arguments}}]},
               {"role": "tool", "tool_call_id": calls[0].id, "content": "12 degrees"}]
    r = client.chat.completions.create(model="smollm2", messages=history, tools=TOOLS,
                                       tool_choice="none", max_tokens=20, seed=0)
    assert r.choices[0].message.tool_calls is None
    assert "<tool_call>" not in r.choices[0].message.content


def test_reasoning_budget_then_schema(client):
    r = client.chat.completions.create(
        model="smollm2", messages=ASK, response_format=PERSON_FORMAT, max_tokens=120, seed=2,
        extra_body={"reasoning_budget": 16, "complete_within_budget": True})
    text = r.choices[0].message.content
    assert text.startswith("<think>") and "</think>" in text, text
    jsonschema.validate(json.loads(text.split("</think>", 1)[1]), PERSON)
