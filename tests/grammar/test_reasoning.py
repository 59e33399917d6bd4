"""A reasoning block before a grammar (generate(reasoning_budget=N), the server's field)."""
import pytest

from constrained import Grammar, compile_grammar
from constrained.errors import GrammarError
from constrained.grammar.reasoning import with_reasoning
from constrained.vocabulary import Vocabulary

BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"], [256])
CLOSED = {"type": "object", "properties": {"a": {"type": "integer"},
                                           "b": {"type": "object", "properties": {
                                               "c": {"type": "string"}},
                                               "additionalProperties": False}},
          "required": ["a"], "additionalProperties": False}


def _accepts(grammar, text: str) -> bool:
    m = compile_grammar(grammar, BYTES).matcher()
    return m.accept_bytes(text.encode()) and m.is_accepting()


def test_reasoning_then_a_closed_schema():
    g = with_reasoning(Grammar.from_json_schema(CLOSED), 64)
    assert g.budgets[0].max_tokens == 64 and not g.distinct_keys
    assert _accepts(g, '<think>plan: {"a": 1}</think>\n{"a": 1, "b": {"c": "x"}}')
    assert _accepts(g, '<think></think>{"a": 1}')
    assert not _accepts(g, '<think>x</think>\n{"a": 1, "a": 2}')       # still one key once
    assert not _accepts(g, '{"a": 1}')


def test_reasoning_then_free_text_or_a_grammar():
    assert _accepts(with_reasoning(None, None), "<think>a</think>\n\nanything")
    g = with_reasoning(Grammar.from_regex("(yes|no)"), 8)
    assert _accepts(g, "<think>hmm</think>\nyes") and not _accepts(g, "<think>hmm</think>maybe")


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "integer"}}},      # additionalProperties open
    {"type": "object", "properties": {"a": {}}, "additionalProperties": False},   # any value
])
def test_open_schemas_are_refused_after_reasoning(schema):
    with pytest.raises(GrammarError, match="open-ended keys"):
        with_reasoning(Grammar.from_json_schema(schema), 10)


@pytest.mark.parametrize("bad", [0, -3, True, 2.5])
def test_bad_budgets(bad):
    with pytest.raises(GrammarError, match="reasoning_budget"):
        with_reasoning(None, bad)
