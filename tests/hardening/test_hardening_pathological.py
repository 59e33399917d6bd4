"""Pathological inputs: each compiles within its limits or raises a typed error, never hangs."""

import numpy as np
import pytest

from constrained import (ConstrainedError, Grammar, GrammarError, LimitExceededError,
                         Vocabulary, compile_grammar)
from constrained.errors import UnsupportedSchemaError

TOKENS = [bytes([b]) for b in range(256)] + [b"ab", b'{"', b'":', b"<eos>"]
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[len(TOKENS) - 1])


def _accepts(compiled, text: str) -> bool:
    m = compiled.matcher()
    return all(m.accept_token(b) for b in text.encode()) and m.is_accepting()


def _mask(compiled) -> np.ndarray:
    out = np.zeros((VOCAB.size + 31) // 32, dtype=np.int32)
    compiled.matcher().fill_next_token_bitmask(out)
    return out


# -- regexes ---------------------------------------------------------------------------------

def test_exponential_dfa_hits_the_default_state_limit():
    with pytest.raises(LimitExceededError, match="max_states"):
        compile_grammar(Grammar.from_regex("(a|b)*a(a|b){25}"), VOCAB, cache=False)


@pytest.mark.parametrize("pattern,text", [
    ("((a+)+)+b", "aaab"), ("(a*)*b", "b"), ("(a{1,20}){1,20}", "a" * 300),
    ("(x|xx|xxx)*y", "xxxxy"),
])
def test_nested_quantifiers_compile(pattern, text):
    cg = compile_grammar(Grammar.from_regex(pattern), VOCAB, cache=False)
    assert _accepts(cg, text)


def test_huge_character_classes_compile():
    cg = compile_grammar(Grammar.from_regex("[\\u0000-\\U0010FFFF]{1,3}"), VOCAB, cache=False)
    assert _accepts(cg, "a中😀") and not _accepts(cg, "abcd")
    cg = compile_grammar(Grammar.from_regex("[^\\n]+"), VOCAB, cache=False)
    assert _accepts(cg, "é x") and not _accepts(cg, "a\nb")


def test_deeply_nested_regex_is_a_typed_error():
    with pytest.raises(GrammarError):
        compile_grammar(Grammar.from_regex("(" * 2000 + "a" + ")" * 2000), VOCAB, cache=False)


# -- schemas ---------------------------------------------------------------------------------

def _nested_objects(n: int) -> dict:
    s = {"type": "integer"}
    for _ in range(n):
        s = {"type": "object", "properties": {"a": s}, "required": ["a"],
             "additionalProperties": False}
    return s


def test_schema_nested_200_deep_compiles():
    cg = compile_grammar(Grammar.from_json_schema(_nested_objects(200), whitespace="compact"),
                         VOCAB)
    assert _accepts(cg, '{"a":' * 200 + "7" + "}" * 200)
    assert not _accepts(cg, '{"a":' * 199 + "7" + "}" * 199)


@pytest.mark.parametrize("depth", [600, 5000])
def test_schema_nested_beyond_the_limits_is_refused(depth):
    with pytest.raises(LimitExceededError):
        Grammar.from_json_schema(_nested_objects(depth))
    with pytest.raises(LimitExceededError):
        Grammar.from_json_schema("[" * 100_000 + "]" * 100_000)


def test_ten_thousand_value_enum_is_refused_at_once_and_a_smaller_one_compiles():
    with pytest.raises(LimitExceededError, match="max_enum") as err:
        Grammar.from_json_schema({"properties": {"e": {"enum": list(range(10_000))}}})
    assert "/properties/e/enum" in str(err.value)
    cg = compile_grammar(Grammar.from_json_schema({"enum": [f"v{i}" for i in range(1500)]}),
                         VOCAB)
    assert _accepts(cg, '"v1499"') and not _accepts(cg, '"v1500"')


def test_two_thousand_properties_compile():
    props = {f"p{i}": {"type": "integer"} for i in range(2000)}
    schema = {"type": "object", "properties": props, "required": ["p0", "p1999"],
              "additionalProperties": False}
    cg = compile_grammar(Grammar.from_json_schema(schema, whitespace="compact"), VOCAB)
    assert _accepts(cg, '{"p0":1,"p7":2,"p1999":3}')
    assert not _accepts(cg, '{"p0":1,"p2000":2,"p1999":3}')


def test_ref_cycles_without_content_are_empty_languages():
    for schema in ({"$ref": "#"},
                   {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                    "$ref": "#/$defs/a"}):
        with pytest.raises(GrammarError):
            compile_grammar(Grammar.from_json_schema(schema), VOCAB)


def test_recursive_refs_with_content_compile():
    schema = {"$defs": {"n": {"type": "object", "additionalProperties": False,
                              "properties": {"c": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}},
              "$ref": "#/$defs/n"}
    cg = compile_grammar(Grammar.from_json_schema(schema, whitespace="compact"), VOCAB)
    assert _accepts(cg, '{"c":[{"c":[{}]},{}]}') and not _accepts(cg, '{"c":[1]}')


def test_remote_refs_are_never_fetched():
    for ref in ("https://example.com/s.json", "http://127.0.0.1:9/x", "other.json#/a"):
        with pytest.raises(UnsupportedSchemaError):
            Grammar.from_json_schema({"$ref": ref})


def test_boolean_schemas_everywhere():
    schema = {"type": "object", "properties": {"t": True, "f": False},
              "additionalProperties": False, "required": ["t"]}
    cg = compile_grammar(Grammar.from_json_schema(schema, whitespace="compact"), VOCAB)
    assert _accepts(cg, '{"t":[1,{"x":null}]}') and not _accepts(cg, '{"t":1,"f":1}')
    cg = compile_grammar(Grammar.from_json_schema({"type": "array", "prefixItems": [True, False],
                                                   "items": False}, whitespace="compact"), VOCAB)
    assert _accepts(cg, "[]") and _accepts(cg, '["x"]') and not _accepts(cg, "[1,2]")
    assert _accepts(compile_grammar(Grammar.from_json_schema(True), VOCAB), "[true]")
    with pytest.raises(GrammarError):
        compile_grammar(Grammar.from_json_schema(False), VOCAB)


# -- grammars --------------------------------------------------------------------------------

def _chain(n: int, fmt: str) -> str:
    if fmt == "lark":
        return ("start: r0\n" + "".join(f'r{i}: r{i + 1} | "x{i}"\n' for i in range(n))
                + f'r{n}: "end"\n')
    return ("root ::= r0\n" + "".join(f'r{i} ::= r{i + 1} | "x{i}"\n' for i in range(n))
            + f'r{n} ::= "end"\n')


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_thousands_of_rules(fmt):
    text = _chain(3000, fmt)
    g = Grammar.from_lark(text) if fmt == "lark" else Grammar.from_gbnf(text)
    cg = compile_grammar(g, VOCAB)
    assert _accepts(cg, "x2999") and _accepts(cg, "end") and not _accepts(cg, "x3000")
    with pytest.raises(LimitExceededError):
        compile_grammar(g, VOCAB, max_rules=500)


def test_unreachable_and_unproductive_rules_are_dropped():
    cg = compile_grammar(Grammar.from_lark('start: "a" | b\nb: b "x"\nc: "never"\n'), VOCAB)
    assert _accepts(cg, "a") and not _accepts(cg, "x")


@pytest.mark.parametrize("text", ['start: b\nb: b "x"\n', 'start: "a" start\n'])
def test_empty_languages_are_refused(text):
    with pytest.raises(GrammarError, match="empty"):
        compile_grammar(Grammar.from_lark(text), VOCAB)


@pytest.mark.parametrize("grammar", [
    Grammar.from_lark('start: start "a" | "a"\n'), Grammar.from_lark('start: "a" start | "a"\n'),
    Grammar.from_gbnf('root ::= root "a" | "a"\n'), Grammar.from_gbnf('root ::= "a" root | "a"\n'),
])
def test_left_and_right_recursion(grammar):
    cg = compile_grammar(grammar, VOCAB)
    assert _accepts(cg, "a" * 50) and not _accepts(cg, "")


def test_deeply_nested_groups():
    cg = compile_grammar(Grammar.from_gbnf("root ::= " + "(" * 150 + '"a"' + ")" * 150 + "\n"),
                         VOCAB)
    assert _accepts(cg, "a")
    with pytest.raises(GrammarError, match="nested"):
        Grammar.from_gbnf("root ::= " + "(" * 5000 + '"a"' + ")" * 5000 + "\n")
    with pytest.raises(ConstrainedError):
        Grammar.from_lark("start: " + "(" * 5000 + '"a"' + ")" * 5000 + "\n")
