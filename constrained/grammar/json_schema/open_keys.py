"""Whether a JSON Schema's texts could repeat an object key (without a matcher checking keys).

JSON Schema grammars leave "no key twice in one object" to their matcher, which scans the whole
text as JSON. Where a schema is embedded in other text (a tool call, after a reasoning block),
that scan cannot run, so the schema is accepted only when its grammar can never repeat a key:
every object has fixed properties in schema order.
"""
from __future__ import annotations

from typing import Any

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalItems", "not", "if", "then", "else", "contains",
               "unevaluatedItems")
_SHAPED = ("type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "properties")
_OPEN_KEYS = ("patternProperties", "propertyNames", "unevaluatedProperties",
              "additionalProperties")


def may_repeat_keys(schema: Any, options: dict, closed: bool = False) -> bool:
    """Whether a JSON text of the schema's grammar could repeat an object key: some object
    takes keys beyond its fixed properties (open-ended key keywords, or a subschema that
    allows any value, such as ``{}``), or properties come in any order. ``closed``: every
    object must say ``"additionalProperties": false`` itself (else a missing keyword counts as
    open unless ``strict_properties``)."""
    if options.get("property_order", "schema") != "schema":
        return True
    strict = options.get("strict_properties", False) and not closed
    todo = [schema]
    while todo:
        node = todo.pop()
        if node is True:
            return True
        if not isinstance(node, dict):
            continue
        if not any(k in node for k in _SHAPED):
            return True               # any value at all: objects with any keys
        for key in _OPEN_KEYS:
            if key in node and node[key] is not False:
                return True
        is_object = node.get("type") == "object" or "properties" in node or (
            isinstance(node.get("type"), list) and "object" in node["type"])
        if is_object and "additionalProperties" not in node and not strict:
            return True
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                todo.extend(node[key].values())
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                todo.extend(node[key])
        for key in _SCHEMA_ONE:
            if key in node:
                todo.append(node[key])
    return False
