"""Test helper: a Lark grammar text to the project's Grammar, through Lark's own loader.

Used by the CFG tests so they do not depend on the project's front-end; Lark's loader expands
EBNF, inlines ``?rules`` and names anonymous terminals exactly as its Earley parser sees them.
"""
from __future__ import annotations

import lark

from constrained.grammar import Grammar, Terminal


# Lark's common.lark writes escaped strings with a lookbehind; the same language without it
_REGULAR = {
    r'".*?(?<!\\)(\\\\)*?"': r'"(?:[^"\\\n]|\\.)*"',
    r"'.*?(?<!\\)(\\\\)*?'": r"'(?:[^'\\\n]|\\.)*'",
}


def _regular(pattern: str) -> str:
    return _REGULAR.get(pattern, pattern)


def lark_parser(text: str, start: str = "start") -> lark.Lark:
    return lark.Lark(text, parser="earley", lexer="dynamic", start=start)


def grammar_from_lark_text(text: str, start: str = "start") -> Grammar:
    parser = lark_parser(text, start)
    rules: dict[str, list[tuple[str, ...]]] = {}
    for rule in parser.rules:
        rules.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    terminals = {t.name: Terminal(t.name, _regular(t.pattern.to_regexp()), t.priority)
                 for t in parser.terminals}
    return Grammar(start=start, rules={k: tuple(v) for k, v in rules.items()},
                   terminals=terminals, ignore=tuple(parser.ignore_tokens), source="lark",
                   text=text)
