"""Public entry points: JSON Schema or Pydantic model -> Grammar."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import GrammarError, LimitExceededError
from ..grammar._grammar import Grammar
from .converter import Converter
from .options import SchemaOptions
from .refs import pointer_escape


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
    text = schema
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as e:
            raise GrammarError(f"schema is not valid JSON: {e.msg}", line=e.lineno,
                               column=e.colno) from None
        except RecursionError:
            raise LimitExceededError("the schema text nests too deeply to read") from None
    _check_size(schema, options)   # before anything recurses into the document
    if not isinstance(text, (str, bytes)):
        try:
            text = json.dumps(schema, sort_keys=False)
        except RecursionError:
            raise LimitExceededError("the schema nests too deeply to convert") from None
    if not isinstance(schema, (dict, bool)):
        raise GrammarError(f"a schema must be an object or a boolean, not {type(schema).__name__}",
                           pointer="#")
    try:
        cv = Converter(schema, options)
        start = cv.start()
    except RecursionError:
        raise LimitExceededError("the schema nests too deeply to convert (Python's "
                                 "recursion limit)") from None
    return SchemaGrammar(start=start, rules=dict(cv.b.rules), terminals=dict(cv.b.terminals),
                         source="json_schema", text=text, dropped=tuple(cv.dropped),
                         format_annotations=tuple(cv.format_annotations))


def _check_size(schema, opts: SchemaOptions) -> None:
    """LimitExceededError, naming the place, when the schema document nests deeper than
    ``max_schema_depth`` or an enum holds more than ``max_enum`` values (checked without
    recursion, before the converter recurses)."""
    stack = [(schema, "", 0)]
    while stack:
        node, ptr, depth = stack.pop()
        if depth > opts.max_schema_depth:
            raise LimitExceededError(f"the schema nests deeper than max_schema_depth="
                                     f"{opts.max_schema_depth} (at {ptr or '#'})")
        if isinstance(node, dict):
            enum = node.get("enum")
            if isinstance(enum, list) and len(enum) > opts.max_enum:
                raise LimitExceededError(f"enum with {len(enum)} values, more than max_enum="
                                         f"{opts.max_enum} (at {ptr}/enum)")
            stack.extend((v, f"{ptr}/{pointer_escape(k)}", depth + 1) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{ptr}/{i}", depth + 1) for i, v in enumerate(node))


def pydantic_to_grammar(model, options: SchemaOptions | None = None, **kwargs) -> SchemaGrammar:
    """Convert a Pydantic model class (or TypeAdapter) via its JSON Schema."""
    if hasattr(model, "model_json_schema"):
        schema = model.model_json_schema()
    elif hasattr(model, "json_schema"):
        schema = model.json_schema()
    else:
        raise TypeError(f"expected a pydantic model class or TypeAdapter, not {model!r}")
    return schema_to_grammar(schema, options, **kwargs)
