"""$ref resolution: absolute URIs, embedded resources ($id), anchors and JSON pointers.

The schema is copied once with every ``$ref`` rewritten to an absolute URI, so subschemas can
be moved around (merged by allOf) without losing what their references mean.
"""
from __future__ import annotations

import copy
from typing import Union
from urllib.parse import unquote, urljoin, urldefrag

from ...errors import UnsupportedSchemaError

DEFAULT_BASE = "https://schema.invalid/root.json"
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
                "dependencies")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = ("additionalProperties", "additionalItems", "items", "contains", "not", "if",
               "then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
               "contentSchema")
_CHILD_KEYWORDS = frozenset(_SCHEMA_MAPS + _SCHEMA_LISTS + _SCHEMA_ONE)


def join(base: str, ref: str) -> str:
    """Resolve ``ref`` against ``base`` (works for urn: bases too)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    if ":" in ref.split("/")[0]:
        return ref
    return urljoin(base, ref)


class SchemaIndex:
    """The root schema with absolute $refs, and where each resource and anchor lives."""

    def __init__(self, schema, owned: bool = False, refers: bool = True) -> None:
        """``owned``: ``schema`` is a private copy (from JSON text) that may be rewritten;
        ``refers`` False: it holds no reference (``may_refer``), so nothing is resolved and
        the subschemas need not be indexed."""
        self.root = schema if owned else copy.deepcopy(schema)
        self.resources: dict[str, tuple[object, str]] = {}
        self.anchors: dict[str, tuple[object, str]] = {}
        base = DEFAULT_BASE
        if isinstance(self.root, dict) and isinstance(self.root.get("$id"), str):
            base = join(DEFAULT_BASE, self.root["$id"])
        self.base = urldefrag(base)[0]
        self.resources[self.base] = (self.root, "")
        self.resources.setdefault(DEFAULT_BASE, (self.root, ""))
        if refers:
            self._walk(self.root, self.base, "")

    def _walk(self, s, base: str, at: Place) -> None:
        if not isinstance(s, dict):
            return
        sid = s.get("$id", s.get("id") if isinstance(s.get("id"), str) and "$ref" not in s else None)
        if isinstance(sid, str) and at:
            if sid.startswith("#"):  # draft-4 style plain-name id
                self.anchors[urldefrag(base)[0] + sid] = (s, place_pointer(at))
            else:
                base = urldefrag(join(base, sid))[0]
                self.resources[base] = (s, place_pointer(at))
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(s.get(key), str):
                self.anchors.setdefault(base + "#" + s[key], (s, place_pointer(at)))
        if isinstance(s.get("$ref"), str):
            s["$ref"] = join(base, s["$ref"])
        if s.keys().isdisjoint(_CHILD_KEYWORDS):        # a leaf (most subschemas)
            return
        for k in _SCHEMA_MAPS:
            if isinstance(s.get(k), dict):
                for name, sub in s[k].items():
                    self._walk(sub, base, ((at, k), name))
        for k in _SCHEMA_LISTS + ("items",):
            if isinstance(s.get(k), list):
                for i, sub in enumerate(s[k]):
                    self._walk(sub, base, ((at, k), i))
        for k in _SCHEMA_ONE:
            if isinstance(s.get(k), (dict, bool)):
                self._walk(s[k], base, (at, k))

    def resolve(self, uri: str, pointer: str):
        """The schema a (absolute) $ref names, and its JSON pointer from the root."""
        if uri in self.anchors:
            return self.anchors[uri]
        doc, frag = urldefrag(uri)
        if doc not in self.resources:
            raise UnsupportedSchemaError(f"$ref to an unknown or remote schema {uri!r}",
                                         pointer=pointer + "/$ref")
        target, tptr = self.resources[doc]
        if not frag:
            return target, tptr
        if not frag.startswith("/"):
            raise UnsupportedSchemaError(f"$ref to an unknown anchor {uri!r}",
                                         pointer=pointer + "/$ref")
        for part in frag[1:].split("/"):
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise UnsupportedSchemaError(f"$ref {uri!r} points nowhere",
                                             pointer=pointer + "/$ref")
            tptr += "/" + pointer_escape(part)
        return target, tptr


def may_refer(text: str) -> bool:
    """Whether JSON text may hold a reference keyword (``$ref``, ``$dynamicRef``,
    ``$recursiveRef``): False only when none can be spelt in it, escapes included."""
    return 'ref"' in text or 'Ref"' in text or "\\u" in text


def pointer_escape(name) -> str:
    """``name`` as one JSON-pointer segment (``~`` and ``/`` escaped)."""
    return str(name).replace("~", "~0").replace("/", "~1")


# a place in a document: "" (the root) or (parent place, key or index); walks carry places and
# write a JSON pointer only where one is kept or reported
Place = Union[str, tuple]


def place_pointer(at: Place) -> str:
    """The JSON pointer of a place."""
    parts = []
    while at:
        at, key = at
        parts.append(pointer_escape(key))
    return "".join("/" + p for p in reversed(parts))
