"""Punctuation and whitespace between JSON tokens, per whitespace mode.

Whitespace is its own terminal placed explicitly in rules (never ignored), and at most one
whitespace symbol sits between two tokens, so the mode is enforced exactly.
"""
from __future__ import annotations

import re

from .builder import GrammarBuilder
from .options import SchemaOptions


class Layout:
    """Symbol sequences for brackets and separators of a container at nesting depth d."""

    def __init__(self, b: GrammarBuilder, opts: SchemaOptions) -> None:
        self.b, self.opts = b, opts
        self.mode = opts.whitespace
        if self.mode == "flexible":
            ws = b.terminal(f"[ \\t\\n\\r]{{1,{opts.max_whitespace}}}", "WS")
            self.ws = (b.define("ws", [(ws,), ()]),)
        else:
            self.ws = ()
        if self.mode == "compact":
            item, key = opts.separators or (",", ":")
        elif self.mode == "indented":
            item, key = ",", ": "
        else:
            item, key = ",", ":"
        self._comma = b.terminal(re.escape(item), "COMMA")
        self._colon = b.terminal(re.escape(key), "COLON")

    def _lit(self, text: str, hint: str) -> str:
        return self.b.terminal(re.escape(text), hint)

    def _nl(self, depth: int) -> str:
        return self.b.terminal("\\n" + " " * (self.opts.indent * depth), f"NL{depth}")

    def open(self, bracket: str, depth: int, distinct: bool = False) -> tuple[str, ...]:
        """``distinct``: the bracket opens an array of distinct strings (its own terminal)."""
        sym = (self.b.terminal(re.escape(bracket), "DISTINCT_LBRACK", opens_distinct=True)
               if distinct else self._lit(bracket, "LBRACE" if bracket == "{" else "LBRACK"))
        return (sym, self._nl(depth + 1)) if self.mode == "indented" else (sym,) + self.ws

    def close(self, bracket: str, depth: int) -> tuple[str, ...]:
        sym = self._lit(bracket, "RBRACE" if bracket == "}" else "RBRACK")
        return (self._nl(depth), sym) if self.mode == "indented" else self.ws + (sym,)

    def empty(self, pair: str, depth: int) -> tuple[str, ...]:
        if self.mode == "indented":
            return (self._lit(pair, "EMPTY_OBJ" if pair == "{}" else "EMPTY_ARR"),)
        return (self._lit(pair[0], "LBRACE" if pair[0] == "{" else "LBRACK"),) + self.ws + (
            self._lit(pair[1], "RBRACE" if pair[1] == "}" else "RBRACK"),)

    def item_sep(self, depth: int) -> tuple[str, ...]:
        if self.mode == "indented":
            return (self._comma, self._nl(depth + 1))
        return self.ws + (self._comma,) + self.ws

    def key_sep(self) -> tuple[str, ...]:
        return self.ws + (self._colon,) + self.ws
