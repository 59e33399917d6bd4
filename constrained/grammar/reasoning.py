"""A reasoning block before a grammar: ``<think>`` free text ``</think>``, then the answer.

``with_reasoning(grammar, max_tokens)`` is what ``generate(reasoning_budget=N)`` and the
server's ``reasoning_budget`` build: the block (special tokens where the vocabulary has them),
up to two newlines, then the grammar; the budget rides on the grammar as a RegionBudget, which
the decode loop enforces (constrained.decoding.region_budget).
"""
from __future__ import annotations

import json
from dataclasses import replace

from ..errors import GrammarError
from ._analysis import clean_rules
from ._grammar import Grammar, RegionBudget
from .json_schema.open_keys import may_repeat_keys
from .structural_tag import GrammarBuilder


def with_reasoning(grammar: Grammar | None, max_tokens: int | None, vocab=None,
                   begin: str = "<think>", end: str = "</think>") -> Grammar:
    """A reasoning block (``begin``, free text, ``end``; at most ``max_tokens`` tokens from the
    start until ``end`` when given), up to two newlines, then ``grammar`` (free text when
    None)."""
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                   or max_tokens < 1):
        raise GrammarError(f"reasoning_budget must be a positive integer, not {max_tokens!r}")
    builder = GrammarBuilder(vocab)
    symbols = builder.literal(begin) + builder.free_text([end], "/")
    gap = builder.rule([[builder.terminal("\\n\\n?")], []], "gap")
    body = [builder.embed(grammar)] if grammar is not None else builder.free_text(None, "/")
    if grammar is not None and (grammar.distinct_keys or grammar.distinct_arrays):
        if not _keys_fixed(grammar):
            raise GrammarError(
                "a JSON Schema whose objects take open-ended keys cannot follow a reasoning "
                "block (its keys are checked for repeats over the whole text): set "
                '"additionalProperties": false on its objects, or write a structural tag '
                "(a reasoning tag with max_tokens, then a json_schema element, which is "
                "compiled with strict properties)")
        grammar = replace(grammar, distinct_keys=False)
    builder.rules["start"] = [tuple(symbols) + (gap,) + tuple(body)]
    rules = {k: tuple(v) for k, v in builder.rules.items()}
    rules, terminals, _ = clean_rules(rules, builder.terminals, "start", builder.ignore)
    budgets = () if max_tokens is None else \
        (RegionBudget(begin, end, max_tokens, builder.end_is_token(end, "/")),)
    return Grammar(start="start", rules=rules, terminals=terminals, ignore=tuple(builder.ignore),
                   source="structural_tag", max_ignored_whitespace=builder.max_ignored_whitespace,
                   budgets=budgets)


def _keys_fixed(grammar: Grammar) -> bool:
    """Whether a JSON Schema grammar can never repeat a key: its schema gives every object
    fixed properties (so its key checks can be dropped)."""
    if grammar.source != "json_schema" or grammar.distinct_arrays:
        return False
    try:
        schema = json.loads(grammar.text)
    except ValueError:
        return False
    return not may_repeat_keys(schema, {"strict_properties": False,
                                         "property_order": "schema"}, closed=True)


