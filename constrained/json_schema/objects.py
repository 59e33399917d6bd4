"""Object rules: declared properties in schema order, extra properties between them.

Commas are exact without exponential growth: ``next_i`` chooses the next declared property
present (skipping optional ones), ``rest_i`` may insert extra properties before it; after the
first member every member is preceded by the item separator.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import interegular

from . import patterns
from .builder import Piece, Symbol
from .keys import key_except, key_literal
from .strings import string_pattern

if TYPE_CHECKING:
    from .converter import Converter

_STRING_KEYWORDS = {"type", "minLength", "maxLength", "pattern", "format", "enum", "const"}


def object_piece(cv: "Converter", s: dict, ptr: str, depth: int) -> Piece:
    """The rule for objects valid under the object keywords of plain schema ``s``."""
    b, lay = cv.b, cv.layout
    props = s.get("properties") or {}
    required = [r for r in s.get("required", []) if isinstance(r, str)]
    additional = s.get("additionalProperties", not cv.opts.strict_properties)
    pprops = s.get("patternProperties") or {}
    names_schema = s.get("propertyNames", True)
    names_schema = True if names_schema == {} else names_schema
    if names_schema is False:
        return None if required else Symbol(b.rule([lay.empty("{}", depth)], "obj"))

    compiled = _compile_patterns(cv, pprops, ptr)
    entries = []  # (name, value schema, schema pointer, required)
    for name in list(props) + [r for r in dict.fromkeys(required) if r not in props]:
        sub = props[name] if name in props else None
        sptr = f"{ptr}/properties/{_esc(name)}" if name in props else f"{ptr}/required"
        extra = [pprops[p] for p, rx in compiled if rx.search(name)]
        if sub is None:
            sub = True if extra else additional
        if extra:
            sub = {"allOf": [sub] + extra}
        if names_schema is not True and not cv.validates(name, names_schema):
            sub = False
        entries.append((name, sub, sptr, name in required))

    members = []  # (key symbol, value piece, required)
    for name, sub, sptr, req in entries:
        piece = cv.value(sub, sptr, depth + 1)
        if piece is None:
            if req:
                return None
            continue
        members.append((b.terminal(key_literal(name), "KEY"), piece, req))

    extras = _extras(cv, s, ptr, depth, [e[0] for e in entries], additional, pprops, compiled,
                     names_schema)
    n_req = sum(1 for m in members if m[2])
    n_min = s.get("minProperties", 0) or 0
    nonempty = False
    if n_min > n_req:
        if n_min == 1:
            nonempty = True
        else:
            cv.refuse(ptr + "/minProperties", "minProperties",
                      "minProperties above the number of required properties")
    n_max = s.get("maxProperties")
    if n_max is not None and (extras or len(members) > n_max):
        if n_max == 0:
            return None if n_req else Symbol(b.rule([lay.empty("{}", depth)], "obj"))
        if n_max < n_req:
            return None
        cv.refuse(ptr + "/maxProperties", "maxProperties",
                  "maxProperties below the number of possible properties")

    sep, ksep = lay.item_sep(depth), lay.key_sep()
    x_sym = None
    if extras:
        x_sym = b.rule([(k,) + ksep + (b.symbol(v, "VAL"),) for k, v in extras], "extra")
    kvs = [(k,) + ksep + (b.symbol(v, "VAL"),) for k, v, _ in members]
    n = len(members)
    nxt = b.rule([()], "next")
    rest = b.rule(([sep + (x_sym, "__self__")] if x_sym else []) + [(nxt,)], "rest")
    rest = _self_ref(b, rest)
    fnext: list[tuple[str, ...]] = []
    for i in range(n - 1, -1, -1):
        kv, req = kvs[i], members[i][2]
        nxt_alts = [sep + kv + (rest,)] + ([] if req else [(nxt,)])
        fnext = [kv + (rest,)] + ([] if req else fnext)
        nxt = b.rule(nxt_alts, "next")
        rest = _self_ref(b, b.rule(([sep + (x_sym, "__self__")] if x_sym else []) + [(nxt,)],
                                   "rest"))
    first = ([(x_sym, rest)] if x_sym else []) + fnext
    alts = []
    if first:
        alts.append(lay.open("{", depth) + (b.rule(first, "members"),) + lay.close("}", depth))
    if n_req == 0 and not nonempty:
        alts.append(lay.empty("{}", depth))
    if not alts:
        return None
    return Symbol(b.rule(alts, "obj"))


def _self_ref(b, name: str) -> str:
    """Replace the placeholder ``__self__`` in a rule by the rule's own name."""
    alts = b.rules[name]
    if any("__self__" in a for a in alts):
        b.rules[name] = tuple(tuple(name if x == "__self__" else x for x in a) for a in alts)
    return name


def _compile_patterns(cv: "Converter", pprops: dict, ptr: str):
    out = []
    for p in pprops:
        try:
            out.append((p, re.compile(p)))
        except re.error as e:
            cv.refuse(f"{ptr}/patternProperties/{_esc(p)}", "patternProperties",
                      f"invalid pattern {p!r}: {e}")
    return out


def _extras(cv, s, ptr, depth, declared, additional, pprops, compiled, names_schema):
    """(key terminal, value piece) for properties beyond the declared ones."""
    b = cv.b
    out = []
    if pprops:
        ok = []
        for p, rx in compiled:
            pptr = f"{ptr}/patternProperties/{_esc(p)}"
            if any(rx.search(name) for name in declared):
                cv.refuse(pptr, "patternProperties",
                          "a patternProperties pattern also matches a declared property")
                continue
            if any(_overlap(p, q) for q, _ in ok):
                cv.refuse(pptr, "patternProperties", "overlapping patternProperties patterns")
                continue
            try:
                body = patterns.pattern_body(p)
            except patterns.PatternError as e:
                cv.refuse(pptr, "patternProperties", str(e))
                continue
            if names_schema is not True:
                cv.refuse(ptr + "/propertyNames", "propertyNames",
                          "propertyNames together with patternProperties")
                continue
            ok.append((p, rx))
            piece = cv.value(pprops[p], pptr, depth + 1)
            if piece is not None:
                out.append((b.terminal('"' + body + '"', "PKEY"), piece))
        return out
    if additional is False:
        return out
    piece = cv.value(additional, ptr + "/additionalProperties", depth + 1)
    if piece is None:
        return out
    if names_schema is not True:
        key = _names_key(cv, names_schema, ptr, declared)
        if key is None:
            return out
    else:
        key = key_except(declared)
    out.append((b.terminal(key, "XKEY"), piece))
    return out


def _names_key(cv, names_schema, ptr, declared):
    if declared or not isinstance(names_schema, dict) or set(names_schema) - _STRING_KEYWORDS \
            - {"title", "description", "$comment"}:
        cv.refuse(ptr + "/propertyNames", "propertyNames",
                  "propertyNames beyond string keywords or with declared properties")
        return None
    if "enum" in names_schema or "const" in names_schema:
        vals = names_schema["enum"] if "enum" in names_schema else [names_schema["const"]]
        vals = [v for v in vals if isinstance(v, str) and cv.validates(v, names_schema)]
        return "(?:" + "|".join(key_literal(v) for v in vals) + ")" if vals else None
    return string_pattern(names_schema, ptr + "/propertyNames", cv.opts, cv.refuse)


def _overlap(p: str, q: str) -> bool:
    """Whether two key patterns can match a common key (True when unsure)."""
    try:
        a = interegular.parse_pattern(_search_form(p)).to_fsm()
        b = interegular.parse_pattern(_search_form(q)).to_fsm()
        return not (a & b).empty()
    except Exception:
        return True


def _search_form(p: str) -> str:
    head = p[1:] if p.startswith("^") else ".*" + p
    return head[:-1] if head.endswith("$") and not head.endswith("\\$") else head + ".*"


def _esc(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")
