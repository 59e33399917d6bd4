"""Random grammar text, random schemas and random token sequences into the engine: only its
typed errors may escape, and a refused token never changes a matcher's state."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrained import ConstrainedError, Grammar, GrammarError, Vocabulary, compile_grammar
from matcher_fuzz import check_token_sequence

TOKENS = [b"a", b"b", b"ab", b"x", b"1", b"12", b" ", b"\n", b'"', b"{", b"}", b"[", b"]", b",",
          b":", b'{"', b'":', b"},{", b"true", b"null", b"-", b".", b"e", b"\xc3", b"\xa9",
          "中".encode(), b"<eos>"]
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[len(TOKENS) - 1],
                                    vocab_size=len(TOKENS) + 5)
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

LARK_PIECES = ["start", ":", "a", "b", "A", "B", "|", '"x"', '"ab"', "/[0-9]+/", "/a|/", "(", ")",
               "?", "*", "+", "~", "2", "..", "3", "[", "]", "\n", "%ignore", "%import",
               "common.WS", "%declare", "->", "_b", "?a", "!", "{", "}", ".", "-", '"', " "]
GBNF_PIECES = ["root", "::=", "a", "b", "|", '"x"', '"\\n"', "[0-9]", "[^a]", "[a-]", "(", ")",
               "?", "*", "+", "{", "}", "2", ",", "5", "\n", "#", ".", "<", ">", "\\", '"', " "]


def _exercise(grammar: Grammar) -> None:
    cg = compile_grammar(grammar, VOCAB, cache=False, max_lexer_states=500, max_dfa_states=500)
    m = cg.matcher()
    out = np.zeros((VOCAB.size + 31) // 32, dtype=np.int32)
    for _ in range(4):
        m.fill_next_token_bitmask(out)
        allowed = [t for t in range(VOCAB.size) if (out[t >> 5] >> (t & 31)) & 1]
        if not allowed or m.is_terminated():
            break
        assert m.accept_token(allowed[len(allowed) // 2])


_ATOMS = st.sampled_from(['"a"', '"ab"', '"x"', '"1"', '"{"', '"}"', '","', '" "', '"中"',
                          "[a-b]", "[0-9]", "[^a]", "."])


def _grammar_text(fmt: str):
    """Random well-formed grammars (4 rules, references, groups, quantifiers) in Lark or GBNF,
    sometimes with a random piece spliced in."""
    names = ["r0", "r1", "r2", "r3"]
    ref = st.sampled_from(names[1:])
    quant = st.sampled_from(["", "", "?", "*", "+", "{2}", "{1,3}"])

    def item(inner):
        return st.one_of(_ATOMS, ref, st.tuples(inner, quant).map(lambda t: f"({t[0]}){t[1]}"))

    def alts(inner):
        return st.lists(st.lists(item(inner), min_size=1, max_size=3).map(" ".join),
                        min_size=1, max_size=3).map(" | ".join)

    body = st.recursive(_ATOMS, lambda inner: alts(inner), max_leaves=6)
    pieces = LARK_PIECES if fmt == "lark" else GBNF_PIECES

    def render(bodies, splice):
        lines = []
        for n, b in zip(names, bodies):
            if fmt == "lark":
                b = b.replace("[", "/[").replace("]", "]/").replace(".", "/./")
                b = b.replace("{2}", "~2").replace("{1,3}", "~1..3")
                lines.append(f"{'start' if n == 'r0' else n}: {b}")
            else:
                lines.append(f"{'root' if n == 'r0' else n} ::= {b}")
        text = "\n".join(lines) + "\n"
        if splice is not None:
            pos, piece = splice
            text = text[:pos % (len(text) + 1)] + piece + text[pos % (len(text) + 1):]
        return text

    splice = st.one_of(st.none(), st.none(), st.tuples(st.integers(0, 400),
                                                       st.sampled_from(pieces)))
    return st.builds(render, st.lists(body, min_size=4, max_size=4), splice)


_TEXTS = {("lark", "grammars"): _grammar_text("lark"), ("gbnf", "grammars"): _grammar_text("gbnf"),
          ("lark", "pieces"): st.lists(st.sampled_from(LARK_PIECES), max_size=24).map(" ".join),
          ("gbnf", "pieces"): st.lists(st.sampled_from(GBNF_PIECES), max_size=24).map(" ".join)}


@pytest.mark.parametrize("fmt,kind", list(_TEXTS))
@FUZZ
@given(data=st.data())
def test_random_grammar_text(fmt, kind, data):
    text = data.draw(_TEXTS[(fmt, kind)])
    try:
        grammar = Grammar.from_lark(text) if fmt == "lark" else Grammar.from_gbnf(text)
    except GrammarError as e:   # the front-end's refusals say where, briefly
        assert len(str(e)) < 700
        missing_start = "no rule named" in str(e) or "start rule 'start' is not defined" in str(e)
        assert e.line is not None or e.position is not None or missing_start, e
        return
    except ConstrainedError as e:
        assert len(str(e)) < 700
        return
    try:
        _exercise(grammar)
    except ConstrainedError:
        pass


_LEAF = st.one_of(
    st.booleans(),
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "boolean",
                                                     "null", "object", "array", "nope"])}),
    st.fixed_dictionaries({"enum": st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=3),
                                                      st.none()), max_size=4)}),
    st.fixed_dictionaries({"const": st.one_of(st.integers(), st.text(max_size=3))}),
    st.fixed_dictionaries({"type": st.just("string"),
                           "pattern": st.sampled_from(["^a+$", "[0-9]", "(", "^(a|b)$", "\\w+"]),
                           "maxLength": st.integers(-1, 70)}),
    st.fixed_dictionaries({"type": st.just("integer"), "minimum": st.integers(-50, 50),
                           "maximum": st.integers(-50, 50)}),
    st.fixed_dictionaries({"$ref": st.sampled_from(["#", "#/$defs/x", "#/nowhere",
                                                    "http://example.com/s"])}),
    st.fixed_dictionaries({"format": st.sampled_from(["date", "email", "uuid", "ipv4", "zzz"])}),
    st.fixed_dictionaries({"uniqueItems": st.booleans(), "type": st.just("array")}),
)


def _compound(children):
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("object"),
                               "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]),
                                                             children, max_size=3),
                               "required": st.lists(st.sampled_from(["a", "b", "z"]), max_size=2),
                               "additionalProperties": st.one_of(st.booleans(), children)}),
        st.fixed_dictionaries({"type": st.just("array"), "items": children,
                               "minItems": st.integers(-1, 3), "maxItems": st.integers(0, 4)}),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"not": children}),
        st.fixed_dictionaries({"$defs": st.fixed_dictionaries({"x": children}),
                               "$ref": st.just("#/$defs/x")}),
        st.fixed_dictionaries({"patternProperties": st.fixed_dictionaries({"^x": children}),
                               "propertyNames": st.sampled_from([True, {"maxLength": 2}])}),
    )


SCHEMAS = st.recursive(_LEAF, _compound, max_leaves=8)


@FUZZ
@given(SCHEMAS, st.booleans())
def test_random_schemas(schema, lenient):
    try:
        _exercise(Grammar.from_json_schema(schema, lenient=lenient))
    except ConstrainedError:
        pass


CFG_GRAMMARS = {
    "json.lark": lambda root: Grammar.from_file(root / "grammars" / "json.lark"),
    "arithmetic.gbnf": lambda root: Grammar.from_file(root / "grammars" / "arithmetic.gbnf"),
    "schema": lambda root: Grammar.from_json_schema(
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}),
}


@pytest.mark.parametrize("name", list(CFG_GRAMMARS))
def test_random_token_sequences_into_cfg_matchers(name):
    from pathlib import Path
    cg = compile_grammar(CFG_GRAMMARS[name](Path(__file__).resolve().parents[2]), VOCAB)

    @settings(max_examples=120, deadline=None, derandomize=True, database=None)
    @given(st.lists(st.integers(min_value=-3, max_value=VOCAB.size + 3), max_size=25),
           st.randoms(use_true_random=False))
    def check(tokens, rnd):
        check_token_sequence(cg.matcher(), VOCAB.size, tokens, rnd)

    check()
