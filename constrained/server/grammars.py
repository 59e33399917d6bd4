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
    """Compiled grammars by (kind, text, reasoning budget), least recently used dropped past
    ``size``."""

    def __init__(self, vocab: Vocabulary, *, size: int = 64, max_grammar_bytes: int = 256_000,
                 compile_timeout: float = 30.0) -> None:
        self.vocab = vocab
        self.size = size
        self.max_grammar_bytes = max_grammar_bytes
        self.compile_timeout = compile_timeout
        self._cache: OrderedDict[tuple, CompiledGrammar] = OrderedDict()
        self._lock = threading.Lock()

    def compiled(self, constraint: Constraint) -> CompiledGrammar:
        """The compiled grammar of a constraint (RequestError when it is invalid)."""
        if len(constraint.text.encode("utf-8")) > self.max_grammar_bytes:
            raise RequestError(f"the {constraint.kind} is larger than the server's limit of "
                               f"{self.max_grammar_bytes} bytes", constraint.param)
        key = (constraint.kind, constraint.text, constraint.reasoning)
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
                grammar = _grammar(constraint, self.vocab)
                return compile_grammar(grammar, self.vocab)
        except LimitExceededError as exc:
            raise RequestError(f"the {constraint.kind} exceeds a server limit: {exc}",
                               constraint.param) from None
        except (ConstrainedError, RecursionError) as exc:
            raise RequestError(f"invalid {constraint.kind}: {exc}", constraint.param) from None


def _grammar(constraint: Constraint, vocab: Vocabulary) -> Grammar:
    kind, budget = constraint.kind, constraint.reasoning
    if kind == "json_schema" and budget is not None:
        # think, then the JSON answer: as a structural tag (the schema with strict properties)
        spec = {"type": "sequence", "elements": [
            {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
             "end": "</think>", "max_tokens": budget},
            {"type": "const_string", "value": "\n"},
            {"type": "json_schema", "json_schema": json.loads(constraint.text)}]}
        return Grammar.from_structural_tag(spec, vocab)
    if kind == "json_schema":
        grammar = Grammar.from_json_schema(json.loads(constraint.text))
    elif kind == "json_object":
        grammar = Grammar.from_json_schema({"type": "object"})
    elif kind == "lark":
        grammar = Grammar.from_lark(constraint.text)
    elif kind == "gbnf":
        grammar = Grammar.from_gbnf(constraint.text)
    elif kind == "regex":
        grammar = Grammar.from_regex(constraint.text)
    elif kind == "structural_tag":
        grammar = Grammar.from_structural_tag(json.loads(constraint.text), vocab)
    elif kind == "text":
        grammar = None
    else:
        raise ValueError(f"unknown constraint kind {kind!r}")
    if budget is None:
        return grammar
    from ..grammar.reasoning import with_reasoning
    return with_reasoning(grammar, budget, vocab)
