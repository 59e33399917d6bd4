"""unevaluatedProperties and unevaluatedItems, rewritten into plain keywords per case.

What a schema evaluates depends on which of its in-place subschemas (allOf, anyOf, oneOf,
$ref, if/then/else, dependentSchemas) succeed. The schema is split into cases, each a
conjunction of subschemas known to succeed (their keywords, without applicators) and of
``not`` parts (which evaluate nothing); per case, the evaluated property names, patterns and
item positions are known, and the unevaluated keyword becomes one more conjunct:
``{"properties": {evaluated: true}, "patternProperties": {...: true}, "additionalProperties":
U}`` or ``{"prefixItems": [true] * n, "items": U}``. anyOf takes every non-empty subset of its
branches as a case (annotations come from all the branches that succeed). A reference cycle is
kept as an opaque part that evaluates nothing, which can only make the keyword stricter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from ...errors import UnsupportedSchemaError
from .merge import contains_conditions

if TYPE_CHECKING:
    from .converter import Converter

IN_PLACE = ("allOf", "anyOf", "oneOf", "$ref", "if", "then", "else", "not", "dependentSchemas",
            "dependencies")
KEYWORDS = ("unevaluatedProperties", "unevaluatedItems")
_KEYWORD_SET = frozenset(KEYWORDS)
MAX_CASES = 256
MAX_ANY_OF_SUBSETS = 4      # anyOf branches taken in every combination up to this many


@dataclass(frozen=True)
class Evaluated:
    """What one case of a schema evaluates."""

    names: frozenset = frozenset()
    patterns: frozenset = frozenset()
    all_properties: bool = False
    prefix: int = 0
    all_items: bool = False
    contains: tuple = field(default=())

    def join(self, other: "Evaluated") -> "Evaluated":
        return Evaluated(self.names | other.names, self.patterns | other.patterns,
                         self.all_properties or other.all_properties,
                         max(self.prefix, other.prefix), self.all_items or other.all_items,
                         self.contains + other.contains)


NOTHING = Evaluated()
Case = tuple[list, Evaluated]


def has_unevaluated(schema) -> bool:
    return isinstance(schema, dict) and not _KEYWORD_SET.isdisjoint(schema)


def resolve(cv: "Converter", schema: dict, ptr: str) -> list:
    """Schemas whose union is ``schema``, each without unevaluated keywords at its top."""
    return [_with_keywords(schema, parts, ev) for parts, ev in _cases(cv, schema, ptr,
                                                                        frozenset(), top=True)]


def _with_keywords(schema: dict, parts: list, ev: Evaluated):
    extra = []
    props = schema.get("unevaluatedProperties")
    if props is not None and props is not True and props != {} and not ev.all_properties:
        extra.append({"properties": {n: True for n in sorted(ev.names)},
                      "patternProperties": {p: True for p in sorted(ev.patterns)},
                      "additionalProperties": props})
    items = schema.get("unevaluatedItems")
    if items is not None and items is not True and items != {} and not ev.all_items:
        rest = {"anyOf": list(ev.contains) + [items]} if ev.contains else items
        extra.append({"prefixItems": [True] * ev.prefix, "items": rest})
    parts = [p for p in parts + extra if p is not True and p != {}]
    if any(p is False for p in parts):
        return False
    return parts[0] if len(parts) == 1 else {"allOf": parts} if parts else True


def _own(s: dict) -> tuple[dict, Evaluated]:
    own = {k: v for k, v in s.items() if k not in IN_PLACE and k not in KEYWORDS}
    items = own.get("items")
    return own, Evaluated(
        names=frozenset((own.get("properties") or {}).keys()),
        patterns=frozenset((own.get("patternProperties") or {}).keys()),
        all_properties="additionalProperties" in own,
        prefix=len(items) if isinstance(items, list) else len(own.get("prefixItems") or []),
        all_items=("items" in own and not isinstance(items, list)) or (
            isinstance(items, list) and "additionalItems" in own),
        contains=tuple(cond for cond, _, _ in contains_conditions(own)))


def _product(cv, a: list[Case], b: list[Case], ptr: str) -> list[Case]:
    out = [(pa + pb, ea.join(eb)) for pa, ea in a for pb, eb in b]
    if len(out) > MAX_CASES:
        raise UnsupportedSchemaError(f"unevaluated keywords need more than {MAX_CASES} cases",
                                     pointer=ptr or "#", keyword="unevaluatedProperties")
    return out


def _opaque(schema) -> list[Case]:
    return [([schema], NOTHING)]


def _cases(cv: "Converter", s, ptr: str, seen: frozenset, top: bool = False) -> list[Case]:
    """The cases of ``s``: (parts that all hold, what they evaluate)."""
    if s is True or s == {}:
        return [([], NOTHING)]
    if s is False:
        return []
    if not isinstance(s, dict):
        return _opaque(s)
    own, ev = _own(s)
    if not top and has_unevaluated(s):     # resolved where it stands; it evaluates the rest
        ev = Evaluated(all_properties="unevaluatedProperties" in s,
                       all_items="unevaluatedItems" in s)
        return [([_with_keywords(s, parts, e)], e.join(ev))
                for parts, e in _cases(cv, s, ptr, seen, top=True)]
    acc: list[Case] = [([own], ev)]
    ref = s.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            acc = _product(cv, acc, _opaque({"$ref": ref}), ptr)
        else:
            target, tptr = cv.index.resolve(ref, ptr)
            acc = _product(cv, acc, _cases(cv, target, tptr, seen | {ref}), ptr)
    for i, part in enumerate(s.get("allOf") or []):
        acc = _product(cv, acc, _cases(cv, part, f"{ptr}/allOf/{i}", seen), ptr)
    branches = list(s.get("anyOf") or [])
    if branches:
        options: list[Case] = []
        exact = len(branches) <= MAX_ANY_OF_SUBSETS
        if exact:      # exactly the branches of the subset hold
            subsets = [c for k in range(1, len(branches) + 1)
                       for c in combinations(range(len(branches)), k)]
        else:          # each branch alone, the others unknown: stricter, never weaker
            subsets = [(i,) for i in range(len(branches))]
        for subset in subsets:
            case: list[Case] = [([], NOTHING)]
            for i, b in enumerate(branches):
                if i in subset:
                    case = _product(cv, case, _cases(cv, b, f"{ptr}/anyOf/{i}", seen), ptr)
                elif exact:
                    case = _product(cv, case, _opaque({"not": b}), ptr)
            options += case
        acc = _product(cv, acc, options, ptr)
    branches = list(s.get("oneOf") or [])
    if branches:
        options = []
        for i, b in enumerate(branches):
            case = _cases(cv, b, f"{ptr}/oneOf/{i}", seen)
            for j, other in enumerate(branches):
                if j != i:
                    case = _product(cv, case, _opaque({"not": other}), ptr)
            options += case
        acc = _product(cv, acc, options, ptr)
    if "if" in s:
        cond = s["if"]
        then = _product(cv, _cases(cv, cond, ptr + "/if", seen),
                        _cases(cv, s.get("then", True), ptr + "/then", seen), ptr)
        other = _product(cv, _opaque({"not": cond}),
                         _cases(cv, s.get("else", True), ptr + "/else", seen), ptr)
        acc = _product(cv, acc, then + other, ptr)
    if "not" in s:
        acc = _product(cv, acc, _opaque({"not": s["not"]}), ptr)
    for key in ("dependentSchemas", "dependencies"):
        for name, dep in (s.get(key) or {}).items():
            if isinstance(dep, list):
                acc = _product(cv, acc, _opaque({key: {name: dep}}), ptr)
                continue
            absent = _opaque({"properties": {name: False}})
            present = _product(cv, _opaque({"required": [name]}),
                               _cases(cv, dep, f"{ptr}/{key}/{name}", seen), ptr)
            acc = _product(cv, acc, absent + present, ptr)
    return acc
