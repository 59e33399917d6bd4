"""Structural tags: what texts they accept, masks against the brute-force oracle, errors."""
import json
import random
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cfg"))
from cfg_oracle import Oracle  # noqa: E402
from cfg_vocab import small_vocab  # noqa: E402

from constrained import Grammar, compile_grammar  # noqa: E402
from constrained.bitmask import allowed_token_ids  # noqa: E402
from constrained.errors import GrammarError  # noqa: E402
from constrained.vocabulary import Vocabulary  # noqa: E402

BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"], [256])
POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
         "required": ["x", "y"]}
NAME = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}},
        "required": ["name"]}


def _tag(name, schema):
    return {"type": "tag", "begin": f'<call>{{"name": "{name}", "args": ',
            "content": {"type": "json_schema", "json_schema": schema}, "end": "}</call>"}


TRIGGERED = {"type": "triggered_tags", "triggers": ["<call>"],
             "tags": [_tag("point", POINT), _tag("person", NAME)]}
FUNCTION = {"regex": "<function=[a-z]+>"}
REGEX_TRIGGERED = {"type": "triggered_tags", "triggers": [FUNCTION], "tags": [
    {"type": "tag", "begin": FUNCTION, "content": {"type": "json_schema", "json_schema": POINT},
     "end": "</function>"}]}
THINK = {"type": "sequence", "elements": [
    {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
    {"type": "const_string", "value": "\n"},
    {"type": "json_schema", "json_schema": POINT}]}


def _accepts(spec, text: str, vocab=BYTES) -> bool:
    m = compile_grammar(Grammar.from_structural_tag(spec), vocab).matcher()
    return m.accept_bytes(text.encode()) and m.is_accepting()


@pytest.mark.parametrize("text, ok", [
    ("", True),
    ("just text", True),
    ('hi <call>{"name": "point", "args": {"x": 1, "y": 2}}</call> bye', True),
    ('<call>{"name": "person", "args": {"name": "Ann"}}</call><call>{"name": "point", '
     '"args": {"x": 1, "y": -2}}</call>', True),
    ('text <call> not a call', False),                       # a trigger starts a call
    ('<call>{"name": "point", "args": {"x": 1}}</call>', False),
    ('<call>{"name": "nobody", "args": {}}</call>', False),
    ('<call>{"name": "person", "args": {"name": "Annabelle!"}}</call>', False),   # maxLength
    ("a <cal", True),                                       # a trigger's prefix may end it
])
def test_triggered_tags_accept_exactly_their_texts(text, ok):
    assert _accepts({"type": "structural_tag", "format": TRIGGERED}, text) is ok


@pytest.mark.parametrize("text, ok", [
    ('<think>any </thin text</think>\n{"x": 1, "y": 2}', True),
    ('<think></think>\n{"x": 1, "y": 2}', True),
    ('<think>a</think>b</think>\n{"x": 1, "y": 2}', False),    # the end ends the text
    ('<think>a\n{"x": 1, "y": 2}', False),
])
def test_tag_with_free_text_ends_at_its_end_string(text, ok):
    assert _accepts(THINK, text) is ok


def test_stop_after_first_and_at_least_one():
    one = dict(TRIGGERED, stop_after_first=True, at_least_one=True)
    call = '<call>{"name": "point", "args": {"x": 1, "y": 2}}</call>'
    assert _accepts(one, "so " + call)
    assert not _accepts(one, "so " + call + call)
    assert not _accepts(one, "no call at all")
    sep = {"type": "tags_with_separator", "tags": TRIGGERED["tags"], "separator": ",",
           "at_least_one": True}
    assert _accepts(sep, call + "," + call) and not _accepts(sep, "") \
        and not _accepts(sep, call + call)


@pytest.mark.parametrize("text, ok", [
    ("no call", True),
    ('hi <function=move>{"x": 1, "y": 2}</function> ok', True),
    ('<function=a>{"x": 1, "y": 2}</function><function=b>{"x": 3, "y": 4}</function>', True),
    ("<function=move> then text", False),        # a match of the trigger starts a call
    ("<function=Move> is not a match", True),
    ('<function=move>{"x": 1}</function>', False),
])
def test_regex_triggers(text, ok):
    assert _accepts(REGEX_TRIGGERED, text) is ok


def test_any_text_excludes():
    spec = {"type": "any_text", "excludes": ["<call>"]}
    assert _accepts(spec, "free <cal l> text") and not _accepts(spec, "x <call> y")


@pytest.mark.parametrize("spec", [TRIGGERED, THINK, REGEX_TRIGGERED],
                         ids=["triggered", "think", "regex_triggered"])
@pytest.mark.parametrize("seed", [0, 1])
def test_masks_equal_the_oracle_and_outputs_validate(spec, seed):
    """Random walks: the engine's masks equal the brute-force oracle's on a small vocabulary;
    walks that end are parsed into their parts, each part valid under its schema."""
    grammar = Grammar.from_structural_tag(spec)
    docs = ['hey <call>{"name": "point", "args": {"x": 12, "y": 3}}</call> ok '
            '<call>{"name": "person", "args": {"name": "Bo"}}</call>',
            '<think>so </thi it</think>\n{"x": 1, "y": 2}',
            '<function=go>{"x": 1, "y": 2}</function> <func <function=ab>']
    vocab = small_vocab("<call> </call> <think> </think>", docs, seed=seed,
                        extra=(b"<call>", b"</call>", b"<think>", b"</think>", b"l>{",
                               b'"}}</call>', b"}</", b"<ca", b"ll>", b"<function=",
                               b"</function>", b"go>{", b"n=", b"}</function>"))
    compiled = compile_grammar(grammar, vocab)
    oracle = Oracle(grammar)
    eos = min(vocab.eos_token_ids)
    rng = random.Random(seed)
    ended = 0
    for _ in range(6):
        m, st, out = compiled.matcher(), oracle.initial, b""
        for k in range(80):
            words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
            m.fill_next_token_bitmask(words)
            got = set(allowed_token_ids(words, vocab.size).tolist())
            assert got == oracle.allowed(st, vocab), out
            steps = sorted(got - {eos})
            if not steps or (eos in got and rng.random() < 0.3):
                assert m.accept_token(eos)
                _check_parts(spec, out.decode())
                ended += 1
                break
            # prefer the documents' pieces so walks reach calls, and closers later on
            pieces = [t for t in steps if len(vocab.token_bytes[t]) > 1]
            closers = [t for t in steps if vocab.token_bytes[t] in _CLOSERS]
            if closers and k > 12 and rng.random() < 0.5:
                tid = rng.choice(closers)
            else:
                tid = rng.choice(pieces if pieces and rng.random() < 0.8 else steps)
            assert m.accept_token(tid)
            out += vocab.token_bytes[tid]
            st = oracle.feed(st, vocab.token_bytes[tid])
    assert ended


_CLOSERS = {b"</think>", b"</call>", b'"}}</call>', b"}</", b"}", b"\n", b"1", b'"',
            b'"}', b" 2}", b"call>", b"}</function>", b"</function>"}


def _check_parts(spec, text: str) -> None:
    if spec is REGEX_TRIGGERED:
        import re
        for m in re.finditer(r"<function=[a-z]+>", text):
            obj, end = json.JSONDecoder().raw_decode(text, m.end())
            assert text.startswith("</function>", end)
            jsonschema.validate(obj, POINT)
        return
    if spec is THINK:
        head, _, doc = text.partition("</think>\n")
        assert head.startswith("<think>") and "</think>" not in head
        jsonschema.validate(json.loads(doc), POINT)
        return
    rest = text
    while "<call>" in rest:
        _, _, rest = rest.partition("<call>")
        obj, end = json.JSONDecoder().raw_decode(rest)
        assert rest[end:].startswith("</call>")
        rest = rest[end + len("</call>"):]
        schema = {"point": POINT, "person": NAME}[obj["name"]]
        jsonschema.validate(obj["args"], schema)


def test_special_tokens_in_literals_are_tokens(llama3_vocab):
    spec = {"type": "sequence", "elements": [
        {"type": "const_string", "value": "<|start_header_id|>assistant<|end_header_id|>\n"},
        {"type": "json_schema", "json_schema": POINT}]}
    vocab = llama3_vocab
    m = compile_grammar(Grammar.from_structural_tag(spec, vocab), vocab).matcher()
    start = vocab.special_ids_by_text[b"<|start_header_id|>"]
    assert set(m.allowed_token_ids().tolist()) == {start}
    assert m.accept_token(start)
    for piece in (b"assistant",):
        assert m.accept_bytes(piece)
    assert set(m.allowed_token_ids().tolist()) == {vocab.special_ids_by_text[b"<|end_header_id|>"]}
    # without the vocabulary the same literal is plain text
    g = Grammar.from_structural_tag(spec)
    assert not g.has_token_refs


@pytest.mark.parametrize("spec, pointer, message", [
    ({"type": "nope"}, "/type", "unknown element type"),
    ({"type": "triggered_tags", "triggers": [{"regex": "a*"}], "tags": [
        {"type": "tag", "begin": {"regex": "a*"}, "content": {"type": "any_text"}, "end": "."}]},
     "/triggers/0", "empty string"),
    ({"type": "triggered_tags", "triggers": [{"regex": "(a"}], "tags": [
        {"type": "tag", "begin": {"regex": "(a"}, "content": {"type": "any_text"}, "end": "."}]},
     "/triggers/0", "invalid trigger regex"),
    ({"type": "sequence", "elements": []}, "/elements", "non-empty list"),
    ({"type": "tag", "begin": "<a>", "end": "</a>"}, "#", "'content' is missing"),
    ({"type": "triggered_tags", "triggers": ["<f>", "<f>x"], "tags": [
        {"type": "tag", "begin": "<f>", "content": {"type": "any_text"}, "end": "</f>"}]},
     "/triggers/1", "can never fire"),
    ({"type": "triggered_tags", "triggers": ["<f>", "<g>"], "tags": [
        {"type": "tag", "begin": "<f>", "content": {"type": "any_text"}, "end": "</f>"}]},
     "/triggers/1", "starts no tag"),
    ({"type": "triggered_tags", "triggers": ["<f>"], "tags": [
        {"type": "tag", "begin": "<g>", "content": {"type": "any_text"}, "end": "</g>"}]},
     "/tags/0/begin", "none of the triggers"),
    ({"type": "json_schema", "json_schema": {"type": "object", "additionalProperties":
                                             {"type": "string"}}},
     "/json_schema", "repeats"),
    ({"type": "json_schema", "json_schema": {"type": "object", "properties": {
        "a": {"type": "strnig"}}}}, "/json_schema/properties/a/type", "."),
    ({"type": "sequence", "elements": [{"type": "any_text"}, {"type": "regex",
                                                                "pattern": "a"}]},
     "/elements/1", "followed by a const_string or a tag"),
    ({"type": "grammar", "lark": "start: a"}, "/lark", "."),
    ({"type": "const_string", "value": "a", "extra": 1}, "#", "unknown field"),
])
def test_bad_specs_name_the_place(spec, pointer, message):
    with pytest.raises(GrammarError, match=message) as info:
        Grammar.from_structural_tag({"type": "structural_tag", "format": spec})
    expected = "/format" + (pointer if pointer != "#" else "")
    assert info.value.pointer == expected, info.value


def test_json_text_spec_and_bad_json():
    assert _accepts(json.dumps({"type": "const_string", "value": "ok"}), "ok")
    with pytest.raises(GrammarError, match="not JSON"):
        Grammar.from_structural_tag("{nope")


def test_hostile_specs_raise_typed_errors():
    from constrained.errors import LimitExceededError
    deep = {"type": "const_string", "value": "x"}
    for _ in range(3000):
        deep = {"type": "sequence", "elements": [deep]}
    with pytest.raises(LimitExceededError, match="nests deeper"):
        Grammar.from_structural_tag(deep)
    with pytest.raises(LimitExceededError, match="nests deeper"):
        Grammar.from_structural_tag("[" * 100_000 + "]" * 100_000)
    wide = {"type": "or", "elements": [{"type": "const_string", "value": "a"}] * 200_000}
    with pytest.raises(GrammarError, match="more than"):
        Grammar.from_structural_tag(wide)
