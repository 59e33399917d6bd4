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


# -- grammars sized against the front-ends' and the compiler's limits ------------------------

def _shape(kind: str, n: int, fmt: str) -> str:
    """``chain``: r0 -> r1 -> ... -> "x"; ``wide``: start -> r0 | ... | r<n-1>, each a
    literal; ``nest``: r<i> -> "(" r<i+1> ")"."""
    start, arrow = ("start", ":") if fmt == "lark" else ("root", " ::=")
    if kind == "wide":
        return (f"{start}{arrow} " + " | ".join(f"r{i}" for i in range(n)) + "\n"
                + "".join(f'r{i}{arrow} "x{i}"\n' for i in range(n)))
    body = '"(" r{} ")"' if kind == "nest" else "r{}"
    return (f"{start}{arrow} r0\n"
            + "".join(f"r{i}{arrow} {body.format(i + 1)}\n" for i in range(n - 1))
            + f'r{n - 1}{arrow} "x"\n')


def _read(text: str, fmt: str, **limits) -> Grammar:
    return Grammar.from_lark(text, **limits) if fmt == "lark" else Grammar.from_gbnf(text, **limits)


def _allowed(compiled) -> set[int]:
    mask = _mask(compiled)
    return {t for t in range(VOCAB.size) if (mask[t >> 5] >> (t & 31)) & 1}


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
@pytest.mark.parametrize("kind,first,text", [
    ("chain", "x", "x"), ("wide", "x", "x9999"), ("nest", "(", "((("),
])
def test_ten_thousand_rules_compile_without_recursion(kind, first, text, fmt):
    g = _read(_shape(kind, 10_000, fmt), fmt)
    cg = compile_grammar(g, VOCAB, cache=False)
    assert _allowed(cg) == {ord(first)}
    m = cg.matcher()
    assert all(m.accept_token(b) for b in text.encode())
    assert m.is_accepting() == (kind != "nest")
    if kind == "nest":   # "x" only at depth 10,000
        assert set(m.allowed_token_ids()) == {ord("(")}
    else:
        assert not m.accept_token(ord("x"))


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_hundred_thousand_flat_rules_are_refused_by_the_front_end(fmt):
    text = _shape("wide", 100_000, fmt)
    with pytest.raises(LimitExceededError, match="max_rules=100000"):
        _read(text, fmt)
    with pytest.raises(LimitExceededError, match="max_rules=500"):
        _read(_shape("wide", 300, fmt), fmt, max_rules=500)
    with pytest.raises(LimitExceededError, match="max_grammar_bytes=100000"):
        _read(text, fmt, max_grammar_bytes=100_000)
    assert "r299" in _read(_shape("wide", 300, fmt), fmt, max_rules=600).rules


@pytest.mark.parametrize("text,error,fragment", [
    ("start: " + " ".join(f'"a{i}"?' for i in range(25)) + "\n", LimitExceededError,
     "rule 'start' .line 1. expands to more than max_rules"),
    ('start: ("a" | "b" | "c")~40\n', LimitExceededError, "max_rules"),
    ("start: T0\n" + "".join(f"T{i}: T{i + 1} T{i + 1}\n" for i in range(40)) + 'T40: "x"\n',
     LimitExceededError, "more than 20000 items"),
    ("start: T0\n" + "".join(f"T{i}: T{i + 1}\n" for i in range(2000)) + 'T2000: "x"\n',
     GrammarError, "nested deeper than 50"),
    ("start: " + "[" * 300 + '"a"' + "]" * 300 + "\n", GrammarError, "nested deeper than 100"),
    ('start: t{"a"}\nt{x}: x | t{t{x}}\n', GrammarError, "ever larger arguments"),
])
def test_lark_texts_lark_would_expand_without_bound_are_refused(text, error, fragment):
    with pytest.raises(error, match=fragment):
        Grammar.from_lark(text)


def test_long_chains_of_unused_lark_rules_are_dropped():
    text = 'start: "a"\n' + "".join(f"u{i}: u{i + 1}\n" for i in range(10_000)) + 'u10000: "b"\n'
    g = Grammar.from_lark(text)
    assert list(g.rules) == ["start"]
