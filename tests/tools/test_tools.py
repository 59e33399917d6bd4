"""Tool calling: specs from OpenAI tools, parsing calls back, errors, SmolLM2 end to end."""
import json

import jsonschema
import pytest

from constrained import Grammar, compile_grammar, generate
from constrained.errors import GrammarError
from constrained.tools import TOOL_FORMATS, parse_tool_calls, tools_structural_tag
from constrained.vocabulary import Vocabulary

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"]}
ADD = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
       "required": ["a", "b"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "parameters": ADD}}]
SCHEMAS = {"get_weather": WEATHER, "add": ADD}
BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"], [256])
HERMES = TOOL_FORMATS["hermes"]


def _accepts(choice, text, parallel=True):
    spec = tools_structural_tag(TOOLS, choice, parallel_tool_calls=parallel)
    m = compile_grammar(Grammar.from_structural_tag(spec), BYTES).matcher()
    return m.accept_bytes(text.encode()) and m.is_accepting()


CALL = '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'


@pytest.mark.parametrize("choice, text, ok", [
    ("auto", "no call", True),
    ("auto", "sure " + CALL + " done", True),
    ("auto", "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>", False),
    ("required", CALL, True),
    ("required", "text " + CALL, False),
    ("required", CALL + "\n" + CALL, True),
    ("none", "plain text", True),
    ("none", "x <tool_call> y", False),
    ({"type": "function", "function": {"name": "add"}}, CALL, True),
    ({"type": "function", "function": {"name": "get_weather"}}, CALL, False),
])
def test_tool_choice_languages(choice, text, ok):
    assert _accepts(choice, text) is ok


def test_parallel_tool_calls_false_allows_one_call():
    assert not _accepts("required", CALL + "\n" + CALL, parallel=False)
    assert _accepts("required", CALL, parallel=False)


def test_parse_tool_calls():
    text = "Let me see. " + CALL + "\n" + CALL.replace('"a": 1', '"a": 5') + " ok"
    content, calls = parse_tool_calls(text, HERMES)
    assert content == "Let me see. \n ok"
    assert [(c.name, c.arguments) for c in calls] == [("add", {"a": 1, "b": 2}),
                                                      ("add", {"a": 5, "b": 2})]
    openai = calls[0].to_openai()
    assert openai["type"] == "function" and json.loads(openai["function"]["arguments"]) == \
        {"a": 1, "b": 2}
    assert parse_tool_calls("<tool_call>\n{broken", HERMES) == ("<tool_call>\n{broken", [])


@pytest.mark.parametrize("tools, choice, pointer", [
    ([], "auto", "/tools"),
    ([{"type": "function", "function": {"name": "f"}}], "auto", "/tools/0/function/parameters"),
    ([{"type": "retrieval"}], "auto", "/tools/0/type"),
    ([{"type": "function", "function": {"parameters": {}}}], "auto", "/tools/0/function/name"),
    (TOOLS + TOOLS[:1], "auto", "/tools/2/function/name"),
    (TOOLS, {"type": "function", "function": {"name": "nope"}}, "/tool_choice"),
    (TOOLS, "sometimes", "/tool_choice"),
])
def test_bad_tools_name_the_place(tools, choice, pointer):
    with pytest.raises(GrammarError) as info:
        tools_structural_tag(tools, choice)
    assert info.value.pointer == pointer


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "add"}}])
def test_smollm2_tool_calls_validate(smollm2, choice):
    model, tokenizer, _ = smollm2
    for seed in range(2):
        r = generate(model, tokenizer, [{"role": "user", "content": "What is 4 plus 5?"}],
                     tools=TOOLS, tool_choice=choice, max_new_tokens=70, seed=seed,
                     sampling={"temperature": 0.8}, complete_within_budget=True)
        assert r.finish_reason == "stop" and r.tool_calls, r.text
        for call in r.tool_calls:
            jsonschema.validate(call.arguments, SCHEMAS[call.name])
        if isinstance(choice, dict):
            assert [c.name for c in r.tool_calls] == ["add"]


def test_smollm2_reasoning_budget_then_json(smollm2):
    model, tokenizer, _ = smollm2
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}},
              "required": ["answer"]}
    for budget in (6, 20):
        spec = {"type": "sequence", "elements": [
            {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
             "end": "</think>", "max_tokens": budget},
            {"type": "const_string", "value": "\n"},
            {"type": "json_schema", "json_schema": schema}]}
        r = generate(model, tokenizer, [{"role": "user", "content": "2+3? Think first."}],
                     chat=True, grammar=Grammar.from_structural_tag(spec), max_new_tokens=60,
                     seed=budget, sampling={"temperature": 1.0})
        assert r.finish_reason == "stop", r.text
        think, _, answer = r.text.partition("</think>\n")
        jsonschema.validate(json.loads(answer), schema)
        # tokens after "<think>" up to and including the end
        cut = r.text.index("</think>") + len("</think>")
        n = 0
        text = ""
        for t in r.token_ids:
            text += tokenizer.decode([t])
            if len(text) > len("<think>"):
                n += 1
            if len(text) >= cut:
                break
        assert n <= budget, (n, r.text)


def test_llama3_json_calls_end_with_an_end_of_sequence_token(llama3_vocab):
    """Llama 3's calls end with <|eom_id|>, an end-of-sequence token: the grammar reads it as
    the call's end and the output ends there; the parsed call does not need it in the text.
    (The Llama 3.1 vocabulary: Llama 3's, with reserved tokens 128008 and 128010 named.)"""
    toks = list(llama3_vocab.token_bytes)
    toks[128008], toks[128010] = b"<|eom_id|>", b"<|python_tag|>"
    vocab = Vocabulary.from_token_bytes(toks, sorted(llama3_vocab.eos_token_ids | {128008}),
                                        llama3_vocab.special_token_ids)
    spec = tools_structural_tag(TOOLS, "required", tool_format_name="llama3_json")
    m = compile_grammar(Grammar.from_structural_tag(spec, vocab), vocab).matcher()
    tag = vocab.special_ids_by_text[b"<|python_tag|>"]
    eom = vocab.special_ids_by_text[b"<|eom_id|>"]
    assert m.allowed_token_ids().tolist() == [tag]
    assert m.accept_token(tag)
    assert m.accept_bytes(b'{"name": "add", "parameters": {"a": 1, "b": 2}}')
    assert eom in m.allowed_token_ids().tolist() and m.accept_token(eom)
    assert m.is_accepting()
    fmt = TOOL_FORMATS["llama3_json"]
    content, calls = parse_tool_calls(
        '<|python_tag|>{"name": "add", "parameters": {"a": 1, "b": 2}}', fmt)
    assert content == "" and [(c.name, c.arguments) for c in calls] == [("add", {"a": 1, "b": 2})]
