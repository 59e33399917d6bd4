"""Lark's reader of grammar files, set up once per process from a parse table kept on disk.

Lark reads a grammar text with an LALR parser of its own meta-grammar, built on first use by
a grammar analysis (10-20 ms in a fresh process, a good part of a first Lark grammar's
compile). The table that analysis produces depends only on the installed Lark, so it is kept
in the disk cache (keyed by Lark's version and its meta-grammar) and later processes build the
reader from it. With
``interegular`` installed, Lark would also compare every pair of its own meta-grammar's
terminals while building the reader's lexer, only to log warnings; that check is skipped.

Everything here touches Lark internals; when they are not as expected, Lark builds its reader
itself, as it would without this module.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np

from ..automata.disk_cache import cache_name, load_arrays, save_arrays


def prepare_lark_reader() -> None:
    """Sets up Lark's grammar-file reader for this process (once)."""
    try:
        from lark import __version__
        from lark import lexer as lark_lexer
        from lark import load_grammar as lark_load
    except ImportError:      # pragma: no cover - lark is a dependency
        return
    if hasattr(lark_load._get_parser, "cache"):
        return
    checks = getattr(lark_lexer, "has_interegular", False)
    lark_lexer.has_interegular = False
    try:
        try:
            parts = _reader_parts(lark_load)
            name = cache_name("larkreader", "v1", __version__, _meta_grammar_digest(lark_load))
            table = _load_table(name, parts)
            if table is None:
                table = _analyse(parts)
                save_arrays(name, {"table": np.frombuffer(_table_bytes(table, parts["rules"]),
                                                          dtype=np.uint8)})
            frontend = _frontend(parts, table)
        except Exception:    # another Lark layout: Lark builds its reader itself
            lark_load._get_parser()
            return
        lark_load._get_parser.cache = frontend
    finally:
        lark_lexer.has_interegular = checks


def _meta_grammar_digest(lark_load) -> str:
    text = repr(sorted(lark_load.TERMINALS.items())) + repr(sorted(lark_load.RULES.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def _reader_parts(lark_load) -> dict:
    """The configuration Lark's ``_get_parser`` makes for its reader, without the analysis."""
    import re

    from lark.common import LexerConf, ParserConf
    from lark.grammar import NonTerminal, Rule, RuleOptions
    from lark.lexer import PatternRE, TerminalDef
    from lark.parse_tree_builder import ParseTreeBuilder

    terminals = [TerminalDef(name, PatternRE(value))
                 for name, value in lark_load.TERMINALS.items()]
    named = [(name.lstrip("?"), alternatives, RuleOptions(expand1=name.startswith("?")))
             for name, alternatives in lark_load.RULES.items()]
    rules = [Rule(NonTerminal(origin), [lark_load.symbol_from_strcase(s) for s in x.split()],
                  i, None, options)
             for origin, alternatives, options in named for i, x in enumerate(alternatives)]
    callback = ParseTreeBuilder(rules, lark_load.ST).create_callback()
    lexer_conf = LexerConf(terminals, re, ["WS", "COMMENT", "BACKSLASH"])
    parser_conf = ParserConf(rules, callback, ["start"])
    lexer_conf.lexer_type = "basic"
    parser_conf.parser_type = "lalr"
    return {"rules": rules, "lexer_conf": lexer_conf, "parser_conf": parser_conf}


def _analyse(parts: dict):
    """The meta-grammar's LALR table, by Lark's own analysis."""
    from lark.parsers.lalr_analysis import LALR_Analyzer
    analysis = LALR_Analyzer(parts["parser_conf"])
    analysis.compute_lalr()
    return analysis.parse_table


def _table_bytes(table, rules: list) -> bytes:
    """The table as JSON: per state, [terminal, 0, next state] for shifts and
    [terminal, 1, rule index] for reductions."""
    from lark.grammar import Rule
    index = {id(rule): i for i, rule in enumerate(rules)}
    states = {}
    for state, actions in table.states.items():
        states[str(state)] = [[term, 1, index[id(arg)]] if isinstance(arg, Rule)
                              else [term, 0, int(arg)]
                              for term, (_, arg) in actions.items()]
    return json.dumps({"states": states, "start": table.start_states,
                       "end": table.end_states}).encode()


def _load_table(name: str, parts: dict):
    """The table saved under ``name``, or None (missing, or not a table of these rules)."""
    from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
    data = load_arrays(name)
    if data is None or "table" not in data:
        return None
    rules = parts["rules"]
    try:
        raw = json.loads(data["table"].tobytes())
        states = {int(s): {term: ((Reduce, rules[arg]) if kind == 1 else (Shift, int(arg)))
                           for term, kind, arg in actions}
                  for s, actions in raw["states"].items()}
        start = {k: int(v) for k, v in raw["start"].items()}
        end = {k: int(v) for k, v in raw["end"].items()}
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    targets = {arg for actions in states.values() for action, arg in actions.values()
               if action is Shift}
    if not (targets | set(start.values()) | set(end.values())) <= set(states):
        return None
    return IntParseTable(states, start, end)


def _frontend(parts: dict, table):
    """Lark's parsing front-end for its reader, with ``table`` as its LALR table."""
    from lark.parser_frontends import ParsingFrontend
    from lark.parsers.lalr_parser import LALR_Parser, _Parser
    parser_conf = parts["parser_conf"]
    parser = LALR_Parser.__new__(LALR_Parser)
    parser._parse_table = table
    parser.parser_conf = parser_conf
    parser.parser = _Parser(table, parser_conf.callbacks, False)
    return ParsingFrontend(parts["lexer_conf"], parser_conf, None, parser=parser)
