"""Public entry points: JSON Schema or Pydantic model -> Grammar."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import GrammarError
from ..grammar._grammar import Grammar
from .converter import Converter
from .options import SchemaOptions


@dataclass(frozen=True)
class SchemaGrammar(Grammar):
    """A Grammar made from a JSON Schema; ``dropped`` lists (JSON pointer, keyword) pairs that
    lenient mode did not enforce (always empty otherwise)."""

    dropped: tuple[tuple[str, str], ...] = field(default=(), compare=False)


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
    else:
        text = json.dumps(schema, sort_keys=False)
    if not isinstance(schema, (dict, bool)):
        raise GrammarError(f"a schema must be an object or a boolean, not {type(schema).__name__}",
                           pointer="#")
    cv = Converter(schema, options)
    start = cv.start()
    return SchemaGrammar(start=start, rules=dict(cv.b.rules), terminals=dict(cv.b.terminals),
                         source="json_schema", text=text, dropped=tuple(cv.dropped))


def pydantic_to_grammar(model, options: SchemaOptions | None = None, **kwargs) -> SchemaGrammar:
    """Convert a Pydantic model class (or TypeAdapter) via its JSON Schema."""
    if hasattr(model, "model_json_schema"):
        schema = model.model_json_schema()
    elif hasattr(model, "json_schema"):
        schema = model.json_schema()
    else:
        raise TypeError(f"expected a pydantic model class or TypeAdapter, not {model!r}")
    return schema_to_grammar(schema, options, **kwargs)
