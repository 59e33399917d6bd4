"""Public entry points: JSON Schema or Pydantic model -> Grammar."""
from __future__ import annotations

import gc
import json
from contextvars import copy_context
from dataclasses import dataclass, field

from ...deadline import compile_deadline
from ...gc_pause import gc_paused
from ...errors import GrammarError, LimitExceededError
from ...lru import LRUCache
from .._grammar import Grammar
from .converter import ChunkEveryString, Converter
from .deep_stack import call_with_deep_stack
from .long_strings import union_meets_long_string
from .metaschema import check_schema
from .options import SchemaOptions
from .refs import may_refer


@dataclass(frozen=True)
class SchemaGrammar(Grammar):
    """A Grammar made from a JSON Schema; ``dropped`` lists (JSON pointer, keyword) pairs that
    lenient mode did not enforce (always empty otherwise); ``format_annotations`` lists
    (JSON pointer, format) for the formats taken as annotations (any string)."""

    dropped: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    format_annotations: tuple[tuple[str, str], ...] = field(default=(), compare=False)


def schema_to_grammar(schema, options: SchemaOptions | None = None, **kwargs) -> SchemaGrammar:
    """Convert a JSON Schema (dict, bool or JSON text) into a grammar of its valid JSON texts.

    Keyword arguments are SchemaOptions fields (whitespace, separators, lenient, ...).
    Raises UnsupportedSchemaError (with the keyword's JSON pointer) for keywords that cannot be
    enforced unless lenient, and LimitExceededError when a configured limit is exceeded.
    """
    if options is None:
        options = SchemaOptions(**kwargs)
    elif kwargs:
        raise TypeError("pass either options or keyword options, not both")
    text = _schema_text(schema)
    key = (text, options) if text is not None and len(text) <= _MAX_CACHED_TEXT else None
    try:
        hash(key)
    except TypeError:           # options holding unhashable values: no cache
        key = None
    if key is not None:
        hit = _CONVERTED.get(key)
        if hit is not None:
            return hit
    with gc_paused():
        grammar = _convert_limited(schema, options, text)
    return _CONVERTED.put(key, grammar) if key is not None else grammar


# converted schemas by (JSON text, options): grammars are immutable, so a schema met again (a
# tool of every request, a response format reused) is converted once per process. The text
# keeps the schema's member order: the order of ``properties`` is the order of the output's
# keys (property_order="schema")
_CONVERTED = LRUCache(512)
_MAX_CACHED_TEXT = 1 << 20


def _schema_text(schema) -> str | None:
    """The schema as JSON text, members in their order (None when it is not JSON data or
    nests too deeply to serialize, a cycle included: such a schema is converted without the
    cache, and its depth is refused there)."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, bytes):
        return None
    try:
        return _ENCODE(schema)
    except (TypeError, ValueError, RecursionError):
        return None


# json.dumps without its record of the containers being written: a cycle recurses until
# RecursionError instead of raising ValueError, which ends alike, and every schema is
# written about a fifth faster
_ENCODE = json.JSONEncoder(check_circular=False).encode


def _convert_limited(schema, options: SchemaOptions, text: str | None = None) -> SchemaGrammar:
    with compile_deadline(options.compile_timeout):
        try:
            return _convert(schema, options, text)
        except RecursionError:
            pass
        # the failed attempt left a deep, cyclic object graph; the collector is paused
        gc.collect(0)    # made during the pause: all of it is in the youngest generation
        deadline = copy_context()     # the deep-stack thread keeps the time limit
        try:
            return call_with_deep_stack(lambda: deadline.run(_convert, schema, options, text))
        except RecursionError:
            pass
        # raised outside the handler: the error keeps no context (the deep stack's frames)
        raise LimitExceededError("the schema nests or refers too deeply to convert")


def _convert(schema, options: SchemaOptions, dumped: str | None = None) -> SchemaGrammar:
    """Parse (when text), check against the metaschema, convert (``dumped``: the schema's
    JSON text when already serialized)."""
    text = schema
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as e:
            raise GrammarError(f"schema is not valid JSON: {e.msg}", line=e.lineno,
                               column=e.colno) from None
        except UnicodeDecodeError as e:
            raise GrammarError(f"schema text is not UTF-8 ({e.reason})",
                               position=e.start) from None
        except RecursionError:
            raise LimitExceededError(f"the schema text nests deeper than JSON parsing allows "
                                     f"(max_schema_depth={options.max_schema_depth})") from None
    # before anything recurses into the document
    check_schema(schema, max_depth=options.max_schema_depth, max_enum=options.max_enum)
    if not isinstance(text, (str, bytes)):
        text = dumped if dumped is not None else json.dumps(schema, sort_keys=False)
        schema = json.loads(text)       # a private copy, faster than copying the objects
    refers = not isinstance(text, str) or may_refer(text)
    # a union meeting a long string would stop the first conversion and start it again
    chunk = (isinstance(text, str) and 'Length"' in text
             and ('"anyOf"' in text or '"oneOf"' in text)
             and union_meets_long_string(schema, options.max_string_length))
    cv = Converter(schema, options, owned=True, refers=refers, chunk_strings=chunk)
    try:
        start = cv.start()
    except ChunkEveryString:    # (a fresh copy: a conversion may rewrite its schema)
        cv = Converter(json.loads(text), options, owned=True, refers=refers, chunk_strings=True)
        start = cv.start()
    return SchemaGrammar(start=start, rules=dict(cv.b.rules), terminals=dict(cv.b.terminals),
                         source="json_schema", text=text, distinct_keys=True,
                         distinct_arrays=tuple(cv.b.distinct_arrays),
                         dropped=tuple(cv.dropped),
                         format_annotations=tuple(cv.format_annotations))


def pydantic_to_grammar(model, options: SchemaOptions | None = None, **kwargs) -> SchemaGrammar:
    """Convert a Pydantic model class (or TypeAdapter) via its JSON Schema."""
    if hasattr(model, "model_json_schema"):
        schema = model.model_json_schema()
    elif hasattr(model, "json_schema"):
        schema = model.json_schema()
    else:
        raise TypeError(f"expected a pydantic model class or TypeAdapter, not {model!r}")
    return schema_to_grammar(schema, options, **kwargs)
