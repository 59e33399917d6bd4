"""Schema algebra: ``not``, ``if``/``then``/``else``, ``oneOf`` and dependencies as unions.

Every keyword that is not a plain constraint on one value is rewritten into an ``anyOf`` of
schemas built from the positive keywords, so the converter only ever turns plain schemas into
rules. The complement of a schema (``negate``) is exact: an instance fails a schema iff its
type is not allowed or one of the schema's constraints for its type fails, and each of those
failures is again a plain schema. Complements of scalar constraints (string lengths, patterns,
numeric bounds, enums of scalars) stay as a ``not`` whose body only names scalar keywords
(``scalar_not``): the converter turns those into terminals minus the excluded language.

``format`` is an assertion where the converter enforces it and an annotation for the
standard's validators; a ``not`` around a format therefore treats the format as satisfied,
which is sound under both readings.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from ...errors import UnsupportedSchemaError
from .merge import ANNOTATIONS, contains_conditions, type_set
from .witnesses import Witness, witness

if TYPE_CHECKING:
    from .converter import Converter

STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
SCALAR_KEYWORDS = frozenset(STRING_KEYWORDS + NUMBER_KEYWORDS + ("type", "enum", "const"))
MAX_DISJUNCTS = 256
MAX_PREFIX_CASES = 4
_TYPES = ("null", "boolean", "object", "array", "string", "number")
_ALL_TYPES = frozenset(_TYPES) | {"integer"}
_LITERAL_KEYWORDS = frozenset({"enum", "const", "required", "dependentRequired", "dependencies",
                               "type", "pattern", "format"})
_NAME_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})


def atomic_not(body) -> tuple[list[dict], list[Witness]] | None:
    """A ``not`` the converter takes as it is: the scalar bodies (see scalar_not) and the
    object witnesses it asks for (a body, or an anyOf of bodies as merging two ``not``
    writes it), or None when the body needs the full algebra."""
    bodies = body["anyOf"] if isinstance(body, dict) and set(body) - ANNOTATIONS == {"anyOf"} \
        else [body]
    scalars, found = [], []
    for sub in bodies:
        if isinstance(sub, dict) and set(sub) - ANNOTATIONS == {"anyOf"}:
            inner = atomic_not(sub)
            if inner is None:
                return None
            scalars += inner[0]
            found += inner[1]
        elif scalar_not(sub) is not None:
            scalars.append(sub)
        elif witness(sub) is not None:
            found.append(witness(sub))
        else:
            return None
    return scalars, found


def scalar_not(body) -> list[dict] | None:
    """``[body]`` when a ``not`` body only constrains scalars, else None."""
    if not isinstance(body, dict) or set(body) - ANNOTATIONS - SCALAR_KEYWORDS:
        return None
    values = [body["const"]] if "const" in body else body.get("enum", [])
    if not isinstance(values, list) or any(isinstance(v, (list, dict)) for v in values):
        return None
    return [body]


def _all(x) -> bool:
    return x is True or x == {}


def _branch(*parts):
    """The conjunction of schemas, without trivial parts."""
    parts = [p for p in parts if not _all(p)]
    if any(p is False for p in parts):
        return False
    if not parts:
        return True
    return parts[0] if len(parts) == 1 else {"allOf": list(parts)}


def _object(**kw) -> dict:
    return {"type": "object", **kw}


def _array(**kw) -> dict:
    return {"type": "array", **kw}


def expand(cv: "Converter", s: dict, ptr: str) -> list | None:
    """Branches whose union accepts what the flattened schema ``s`` accepts, when ``s`` has a
    keyword of the algebra at its top (None otherwise). One keyword is rewritten per call; the
    branches are converted again, so the others follow."""
    rest = dict(s)
    if "not" in s and atomic_not(s["not"]) is None:
        body = rest.pop("not")
        try:
            disjuncts = negate(cv, body, ptr + "/not", _Facts.of_context(rest))
        except UnsupportedSchemaError as e:
            if not cv.opts.lenient:
                raise
            cv.dropped.append((e.pointer or "#", e.keyword or "not"))
            return [rest]        # lenient: the complement is dropped
        return [_branch(rest, d) for d in disjuncts]
    if "if" in s:
        cond, then, other = rest.pop("if"), rest.pop("then", True), rest.pop("else", True)
        return [_branch(rest, cond, then), _branch(rest, {"not": cond}, other)]
    deps = dependencies(s, ptr)
    if deps:
        for key in ("dependentRequired", "dependentSchemas", "dependencies"):
            rest.pop(key, None)
        (name, required, schema), others = deps[0], deps[1:]
        if others:
            rest["dependentSchemas"] = {n: _branch({"required": r}, sub) for n, r, sub in others}
        present = _branch({"required": [name] + required}, schema)
        return [_branch(rest, {"properties": {name: False}}), _branch(rest, present)]
    return None


def dependencies(s: dict, ptr: str) -> list[tuple[str, list[str], object]]:
    """(property, names it requires, schema it brings) from dependentRequired,
    dependentSchemas and draft-07 ``dependencies``, one entry per property."""
    out: dict[str, tuple[list[str], list]] = {}
    for key in ("dependentRequired", "dependentSchemas", "dependencies"):
        value = s.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise UnsupportedSchemaError(f"{key} must be an object", pointer=f"{ptr}/{key}",
                                         keyword=key)
        for name, dep in value.items():
            req, schemas = out.setdefault(name, ([], []))
            if isinstance(dep, list):
                if key == "dependentSchemas":
                    raise UnsupportedSchemaError("a dependentSchemas value must be a schema",
                                                 pointer=f"{ptr}/{key}", keyword=key)
                req += [r for r in dep if isinstance(r, str) and r not in req]
            elif key == "dependentRequired":
                raise UnsupportedSchemaError("a dependentRequired value must be a list of names",
                                             pointer=f"{ptr}/{key}", keyword=key)
            elif not _all(dep):
                schemas.append(dep)
    return [(n, r, _branch(*sch)) for n, (r, sch) in out.items() if r or sch]


def negate(cv: "Converter", schema, ptr: str, context: "_Facts | None" = None) -> list:
    """Schemas whose union accepts exactly the instances ``schema`` rejects, among the
    instances of ``context`` (what the caller intersects the union with): disjuncts that
    provably contradict the context are left out."""
    if _all(schema):
        return []
    if schema is False:
        return [True]
    s = cv._flatten(schema, ptr, frozenset())
    if s is False:
        return [True]
    if _all(s):
        return []
    if scalar_not(s) is not None or witness(s) is not None:
        return [{"not": s}]
    rest = dict(s)
    out: list = []
    if "anyOf" in rest:
        branches = rest.pop("anyOf")
        out += _conjunction(cv, [negate(cv, b, f"{ptr}/anyOf/{i}", context)
                                 for i, b in enumerate(branches)], ptr + "/anyOf", context)
    if "oneOf" in rest:
        branches = rest.pop("oneOf")
        out += _conjunction(cv, [negate(cv, b, f"{ptr}/oneOf/{i}", context)
                                 for i, b in enumerate(branches)], ptr + "/oneOf", context)
        out += [_branch(x, y) for x, y in combinations(branches, 2)]
    if "not" in rest:
        out.append(rest.pop("not"))
    if "if" in rest:
        cond = rest.pop("if")
        if "then" in rest:
            out.append(_branch(cond, {"not": rest["then"]}))
        if "else" in rest:
            out.append(_branch({"not": cond}, {"not": rest["else"]}))
    rest.pop("then", None)
    rest.pop("else", None)
    for name, required, sub in dependencies(rest, ptr):
        out += [_object(required=[name], properties={r: False}) for r in required]
        if not _all(sub):
            out.append(_branch(_object(required=[name]), {"not": sub}))
    for key in ("dependentRequired", "dependentSchemas", "dependencies"):
        rest.pop(key, None)
    out += _negate_plain(cv, rest, ptr)
    out = [d for d in out if d is not False]
    if context is not None:
        out = [d for d in out if context.join(_Facts.of(d)) is not None]
    if len(out) > MAX_DISJUNCTS:
        raise UnsupportedSchemaError(f"the complement has more than {MAX_DISJUNCTS} branches",
                                     pointer=ptr or "#", keyword="not")
    return out


def _conjunction(cv, alternatives: list[list], ptr: str,
                 context: "_Facts | None" = None) -> list:
    """The disjuncts of a conjunction of disjunctions (their product), without the
    combinations that provably admit no instance (types that exclude each other, a member
    both required and absent, a member failing a schema the context makes it satisfy), and
    without combinations that contain another one (they add no instance)."""
    acc: list[tuple[frozenset, list, _Facts]] = [(frozenset(), [], context or _Facts())]
    for alts in alternatives:
        typed = [(d, _canonical(d), _Facts.of(d)) for d in alts]
        grown: dict[frozenset, tuple[frozenset, list, _Facts]] = {}
        for keys, parts, facts in acc:
            for d, key, f in typed:
                joint = facts.join(f)
                if joint is None:
                    continue
                nk = keys | {key}
                if nk not in grown:
                    grown[nk] = (nk, parts if key in keys else parts + [d], joint)
        ordered = sorted(grown.values(), key=lambda e: len(e[0]))
        acc = []
        for entry in ordered:
            if not any(kept[0] < entry[0] for kept in acc):
                acc.append(entry)
        if len(acc) > MAX_DISJUNCTS:
            raise UnsupportedSchemaError(f"the complement has more than {MAX_DISJUNCTS} branches",
                                         pointer=ptr or "#", keyword="not")
    return [_branch(*parts) for _, parts, _ in acc]


def _canonical(schema) -> str:
    """The schema as text, without annotations (equal texts: equal schemas)."""
    return json.dumps(_without_annotations(schema), sort_keys=True, default=repr)


def _without_annotations(s):
    if isinstance(s, list):
        return [_without_annotations(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k in ANNOTATIONS:
            continue
        if k in _LITERAL_KEYWORDS:
            out[k] = v
        elif k in _NAME_MAPS and isinstance(v, dict):
            out[k] = {n: _without_annotations(x) for n, x in v.items()}
        else:
            out[k] = _without_annotations(v)
    return out


def _fact_key(schema) -> str | None:
    """The canonical text of a member's schema, or None when equal texts need not mean equal
    schemas ($refs are absolute by now; dynamic references depend on where they are
    evaluated)."""
    text = _canonical(schema)
    return None if "$dynamicRef" in text or "$recursiveRef" in text else text


@dataclass(frozen=True)
class _Facts:
    """What schemas say about an instance as far as their tops show: its types, members that
    must be present or absent, members that fail a schema (``failing``) or satisfy one
    (``holding``) when present, and the only names members may have (``names``, None: any).
    ``join`` is None when the facts contradict each other: no instance has them all."""

    types: frozenset | None = None
    present: frozenset = frozenset()
    absent: frozenset = frozenset()
    failing: frozenset = frozenset()     # (name, canonical schema)
    holding: frozenset = frozenset()     # (name, canonical schema)
    names: frozenset | None = None

    @staticmethod
    def of(d) -> "_Facts":
        """The facts of one disjunct (an allOf of disjuncts joins its parts' facts)."""
        if isinstance(d, dict) and set(d) == {"allOf"}:
            out: _Facts | None = _Facts()
            for part in d["allOf"]:
                out = out.join(_Facts.of(part)) if out is not None else None
            return out if out is not None else _Facts(types=frozenset())
        types = _types_of(d)
        if not isinstance(d, dict) or types != frozenset({"object"}):
            return _Facts(types=types)
        present, absent, failing = set(), set(), set()
        for name, sub in (d.get("properties") or {}).items():
            if sub is False:
                absent.add(name)
            elif isinstance(sub, dict) and set(sub) == {"not"}:
                key = _fact_key(sub["not"])
                if key is not None:
                    failing.add((name, key))                     # if present, it fails
        present.update(r for r in d.get("required") or [] if isinstance(r, str))
        return _Facts(types=types, present=frozenset(present), absent=frozenset(absent),
                      failing=frozenset(failing))

    @staticmethod
    def of_context(s) -> "_Facts | None":
        """The facts of the (flattened) schema a complement is intersected with."""
        if not isinstance(s, dict):
            return None
        props = s.get("properties") or {}
        required = frozenset(r for r in s.get("required") or [] if isinstance(r, str))
        closed = s.get("additionalProperties") is False and not s.get("patternProperties")
        return _Facts(types=_types_of(s), present=required,
                      absent=frozenset(n for n, v in props.items() if v is False),
                      holding=frozenset((n, k) for n, k in
                                        ((n, _fact_key(v)) for n, v in props.items())
                                        if k is not None),
                      names=frozenset(props) if closed else None)

    def join(self, other: "_Facts") -> "_Facts | None":
        types = _meet(self.types, other.types)
        if types == frozenset():
            return None
        present, absent = self.present | other.present, self.absent | other.absent
        failing, holding = self.failing | other.failing, self.holding | other.holding
        names = other.names if self.names is None else self.names if other.names is None \
            else self.names & other.names
        if present & absent or names is not None and present - names or any(
                n in present for n, _ in failing & holding):
            # member facts bind objects only: contradicting ones leave the other types
            types = (_ALL_TYPES if types is None else types) - {"object"}
            if not types:
                return None
        return _Facts(types, present, absent, failing, holding, names)


def _meet(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    return b if a is None else a if b is None else a & b


def _types_of(d) -> frozenset | None:
    """The types a disjunct allows, as far as its top says (None: any)."""
    if d is False:
        return frozenset()
    if not isinstance(d, dict):
        return None
    if "allOf" in d and set(d) == {"allOf"}:
        out = None
        for part in d["allOf"]:
            out = _meet(out, _types_of(part))
        return out
    if "enum" in d and isinstance(d["enum"], list):
        kinds = {_type_of(v) for v in d["enum"]}
        return frozenset(kinds | ({"integer"} if "number" in kinds else set()))
    ts = type_set(d)
    return None if ts is None else frozenset(ts)


def _refuse(ptr: str, key: str) -> None:
    raise UnsupportedSchemaError(f"the complement of {key} cannot be enforced",
                                 pointer=f"{ptr}/{key}", keyword="not")


def _negate_plain(cv: "Converter", p: dict, ptr: str) -> list:
    """The complement of a schema with no applicator at its top, as plain disjuncts."""
    for key in ("$dynamicRef", "$recursiveRef", "uniqueItems", "unevaluatedProperties",
                "unevaluatedItems"):
        if key in p and not (key == "uniqueItems" and p[key] is False):
            _refuse(ptr, key)
    types = type_set(p)
    allowed = set(_TYPES) | {"integer"} if types is None else types
    out: list = []
    for t in _TYPES:
        if t == "number" and "integer" in allowed and "number" not in allowed:
            out.append({"type": "number", "not": {"type": "integer"}})
        elif t not in allowed and not (t == "number" and "integer" in allowed):
            out.append({"type": t})
    live = [t for t in _TYPES if t in allowed or t == "number" and "integer" in allowed]
    numeric = "number" if "number" in allowed else "integer"
    if "enum" in p or "const" in p:
        values = [p["const"]] if "const" in p else list(p.get("enum") or [])
        fails = [v for v in values if not cv.validates(v, p)]
        if fails:
            out.append({"enum": fails})
        for t in live:
            mine = [v for v in values if _type_of(v) == t]
            if t == "null":
                if not mine:
                    out.append({"type": "null"})
            elif t == "boolean":
                left = [b for b in (True, False) if b not in mine]
                if left:
                    out.append({"enum": left})
            elif t == "string":
                out.append({"type": "string", "not": {"enum": mine}} if mine
                           else {"type": "string"})
            elif t == "number":
                out.append({"type": numeric, "not": {"enum": mine}} if mine
                           else {"type": numeric})
            elif mine:        # differs from each listed value: one difference per value
                out += _conjunction(cv, [_other_than(v) for v in mine], ptr + "/enum")
            else:
                out.append({"type": t})
        return out
    if "string" in live:
        kw = {k: p[k] for k in STRING_KEYWORDS[:3] if k in p}
        if kw:
            out.append({"type": "string", "not": {"type": "string", **kw}})
    if "number" in live:
        kw = {k: p[k] for k in NUMBER_KEYWORDS if k in p}
        if kw:
            out.append({"type": numeric, "not": {"type": numeric, **kw}})
    if "object" in live:
        out += _negate_object(p, ptr)
    if "array" in live:
        out += _negate_array(p, ptr)
    return out


def _other_than(value) -> list:
    """Disjuncts for the objects (or arrays) of the same type that differ from ``value``:
    a missing, extra or different member (a different length or item)."""
    if isinstance(value, dict):
        out = [_object(**{"not": {"properties": {k: True for k in value},
                                  "additionalProperties": False}})]
        out += [_object(properties={k: False}) for k in value]
        out += [_object(required=[k], properties={k: {"not": {"const": v}}})
                for k, v in value.items()]
        return out
    out = [_array(maxItems=len(value) - 1)] if value else []
    out.append(_array(minItems=len(value) + 1))
    out += [_array(minItems=i + 1, prefixItems=[True] * i + [{"not": {"const": v}}])
            for i, v in enumerate(value)]
    return out


def _negate_object(p: dict, ptr: str) -> list:
    """A member breaks a universal keyword (a witness), or a named constraint fails."""
    out = []
    props, pats = p.get("properties") or {}, p.get("patternProperties") or {}
    if "additionalProperties" in p and not _all(p["additionalProperties"]):
        out.append(_object(**{"not": {"properties": {n: True for n in props},
                                      "patternProperties": {q: True for q in pats},
                                      "additionalProperties": p["additionalProperties"]}}))
    for q, sub in pats.items():
        if not _all(sub):
            out.append(_object(**{"not": {"patternProperties": {q: sub}}}))
    if "propertyNames" in p and not _all(p["propertyNames"]):
        out.append(_object(**{"not": {"propertyNames": p["propertyNames"]}}))
    for name in dict.fromkeys(r for r in p.get("required") or [] if isinstance(r, str)):
        out.append(_object(properties={name: False}))
    for name, sub in props.items():
        if not _all(sub):
            out.append(_object(required=[name], properties={name: {"not": sub}}))
    if _count(p.get("minProperties")) > 0:
        out.append(_object(maxProperties=_count(p["minProperties"]) - 1))
    if p.get("maxProperties") is not None:
        out.append(_object(minProperties=_count(p["maxProperties"]) + 1))
    return out


def _negate_array(p: dict, ptr: str) -> list:
    out = []
    items = p.get("items", True)
    if isinstance(items, list):
        prefix, rest, rest_key = items, p.get("additionalItems", True), "additionalItems"
    else:
        prefix, rest, rest_key = list(p.get("prefixItems") or []), items, "items"
    for i, sub in enumerate(prefix):
        if not _all(sub):
            out.append(_array(minItems=i + 1, prefixItems=[True] * i + [{"not": sub}]))
    if rest is False:
        out.append(_array(minItems=len(prefix) + 1))
    elif not _all(rest):
        # an item past the prefix fails: with the prefix positions that fail too, say P,
        # at least len(P) + 1 items fail
        if len(prefix) > MAX_PREFIX_CASES:
            _refuse(ptr, rest_key)
        for k in range(len(prefix) + 1):
            for failing in combinations(range(len(prefix)), k):
                out.append(_array(prefixItems=[{"not": rest} if i in failing else rest
                                               for i in range(len(prefix))],
                                  contains={"not": rest}, minContains=k + 1))
    if _count(p.get("minItems")) > 0:
        out.append(_array(maxItems=_count(p["minItems"]) - 1))
    if p.get("maxItems") is not None:
        out.append(_array(minItems=_count(p["maxItems"]) + 1))
    for cond, least, most in contains_conditions(p):     # one condition fails
        if least > 0:
            out.append(_array(contains=cond, minContains=0, maxContains=least - 1))
        if most is not None:
            out.append(_array(contains=cond, minContains=most + 1))
    return out


def _count(v) -> int:
    return int(v or 0)


def _type_of(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]
