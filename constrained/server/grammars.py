"""Compiling a request's constraint, with a bounded cache shared by all requests.

Serving sees the same schemas and grammars again and again: compiled grammars are immutable and
shared by every matcher, so the cache keys them by (kind, text). Errors become 400 responses
naming the request field, with the grammar's line and column or the schema's JSON pointer.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict

from ..compiler import CompiledGrammar, compile_grammar
from ..deadline import compile_deadline
from ..errors import ConstrainedError, LimitExceededError
from ..grammar import Grammar
from ..vocabulary import Vocabulary
from .protocol import Constraint, RequestError


class GrammarCache:
    """Compiled grammars by (kind, text), least recently used dropped past ``size``."""

    def __init__(self, vocab: Vocabulary, *, size: int = 64, max_grammar_bytes: int = 256_000,
                 compile_timeout: float = 30.0) -> None:
        self.vocab = vocab
        self.size = size
        self.max_grammar_bytes = max_grammar_bytes
        self.compile_timeout = compile_timeout
        self._cache: OrderedDict[tuple[str, str], CompiledGrammar] = OrderedDict()
        self._lock = threading.Lock()

    def compiled(self, constraint: Constraint) -> CompiledGrammar:
        """The compiled grammar of a constraint (RequestError when it is invalid)."""
        if len(constraint.text.encode("utf-8")) > self.max_grammar_bytes:
            raise RequestError(f"the {constraint.kind} is larger than the server's limit of "
                               f"{self.max_grammar_bytes} bytes", constraint.param)
        key = (constraint.kind, constraint.text)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        compiled = self._compile(constraint)
        with self._lock:
            self._cache[key] = compiled
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return compiled

    def _compile(self, constraint: Constraint) -> CompiledGrammar:
        try:
            with compile_deadline(self.compile_timeout):
                grammar = _grammar(constraint)
                return compile_grammar(grammar, self.vocab)
        except LimitExceededError as exc:
            raise RequestError(f"the {constraint.kind} exceeds a server limit: {exc}",
                               constraint.param) from None
        except (ConstrainedError, RecursionError) as exc:
            raise RequestError(f"invalid {constraint.kind}: {exc}", constraint.param) from None


def _grammar(constraint: Constraint) -> Grammar:
    kind = constraint.kind
    if kind == "json_schema":
        return Grammar.from_json_schema(json.loads(constraint.text))
    if kind == "json_object":
        return Grammar.from_json_schema({"type": "object"})
    if kind == "lark":
        return Grammar.from_lark(constraint.text)
    if kind == "gbnf":
        return Grammar.from_gbnf(constraint.text)
    if kind == "regex":
        return Grammar.from_regex(constraint.text)
    raise ValueError(f"unknown constraint kind {kind!r}")
