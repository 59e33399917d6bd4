"""``not`` over the universal object keywords: at least one member that breaks them.

The complement of ``additionalProperties``, ``patternProperties`` or ``propertyNames`` says
that some member exists: one whose key is outside the declared names and patterns and whose
value fails ``additionalProperties``; one whose key matches a pattern and whose value fails
its schema; one whose key fails ``propertyNames``. algebra.negate writes these as a ``not``
of the universal keyword alone (standard JSON Schema, so validators read it too), and the
object rules then require a witness member: a member of the object (declared or extra) whose
key lies in the witness's key language and whose value also satisfies the witness's value
schema.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import patterns
from .chars import ANY_STRING, UNCOMMON_STRING
from .keys import key_literal
from .merge import ANNOTATIONS

# without "type": the body holds for every non-object, so its ``not`` allows objects only
_KEYWORDS = {"properties", "patternProperties", "additionalProperties", "propertyNames"}


@dataclass(frozen=True)
class Witness:
    """A member that must exist: its key is a full match of ``key`` and of no regex of
    ``key_exclude``, and also satisfies ``accepts_name`` (decoded); its value satisfies
    ``value``."""

    key: str
    key_exclude: tuple[str, ...]
    value: object
    names: tuple[str, ...] = ()           # declared names outside the key language
    patterns: tuple[str, ...] = ()        # patterns whose matches are outside it
    pattern: str | None = None            # a pattern every key of the language matches
    name_schema: object = None            # a propertyNames schema the keys fail

    def accepts_name(self, name: str, validates) -> bool:
        """Whether the property name lies in the witness's key language."""
        if name in self.names or any(re.search(p, name) for p in self.patterns):
            return False
        if self.pattern is not None and not re.search(self.pattern, name):
            return False
        return self.name_schema is None or not validates(name, self.name_schema)


def witness(body) -> Witness | None:
    """The witness a ``not`` body asks for, when it is one universal object keyword."""
    if not isinstance(body, dict) or set(body) - ANNOTATIONS - _KEYWORDS:
        return None
    props = body.get("properties") or {}
    pats = body.get("patternProperties") or {}
    if "additionalProperties" in body and all(v is True or v == {} for v in props.values()) \
            and all(v is True or v == {} for v in pats.values()) \
            and "propertyNames" not in body:
        keys = tuple(key_literal(n) for n in props)
        bodies = tuple('"' + b + '"' for b in map(_body, pats) if b is not None)
        if len(bodies) != len(pats):
            return None
        return Witness(ANY_STRING, keys + bodies + (UNCOMMON_STRING,) * bool(keys),
                       {"not": body["additionalProperties"]}, tuple(props), tuple(pats))
    if set(body) - ANNOTATIONS == {"patternProperties"} and len(pats) == 1:
        (pattern, sub), = pats.items()
        b = _body(pattern)
        if b is None:
            return None
        return Witness('"' + b + '"', (), {"not": sub}, pattern=pattern)
    if set(body) - ANNOTATIONS == {"propertyNames"}:
        return Witness(ANY_STRING, (), True, name_schema=body["propertyNames"])
    return None


def _body(pattern: str) -> str | None:
    try:
        return patterns.pattern_body(pattern)
    except patterns.PatternError:
        return None
