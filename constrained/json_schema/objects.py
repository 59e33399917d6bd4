"""Object rules: declared properties in schema order, extra properties between them (or, with
``property_order="any"``, small objects' declared properties in any order).

Commas are exact without exponential growth: ``next_i`` chooses the next declared property
present (skipping optional ones), ``rest_i`` may insert extra properties before it; after the
first member every member is preceded by the item separator.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from ..automata.byte_dfa import dfas_intersect, regex_to_byte_dfa
from . import patterns
from .builder import Piece, Symbol
from .chars import UNCOMMON_STRING
from .merge import ANNOTATIONS
from .keys import key_except, key_except_automaton, key_literal
from .refs import pointer_escape
from .strings import string_language

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
    names_schema = cv._flatten(s.get("propertyNames", True), ptr + "/propertyNames",
                               frozenset())
    names_schema = True if names_schema == {} else names_schema
    if names_schema is False:
        return None if required else Symbol(b.rule([lay.empty("{}", depth)], "obj"))

    compiled = _compile_patterns(cv, pprops, ptr)
    entries = []  # (name, value schema, schema pointer, required)
    for name in list(props) + [r for r in dict.fromkeys(required) if r not in props]:
        sub = props[name] if name in props else None
        sptr = f"{ptr}/properties/{pointer_escape(name)}" if name in props else f"{ptr}/required"
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
    n_min = int(s.get("minProperties", 0) or 0)
    n_max = s.get("maxProperties")
    n_max = None if n_max is None else int(n_max)
    if n_max is not None and not extras and len(members) <= n_max:
        n_max = None  # cannot be exceeded
    if n_min <= n_req:
        n_min = 0  # implied by the required properties
    if n_max is not None and n_max < n_req:
        return None
    cap = n_max if n_max is not None else n_min
    if (len(members) + 1) * (cap + 1) > cv.opts.max_repeat * 4:
        cv.refuse(ptr + ("/maxProperties" if n_max is not None else "/minProperties"),
                  "maxProperties" if n_max is not None else "minProperties",
                  "property counts too large to expand")
        cap, n_min, n_max = 0, 0, None

    sep, ksep = lay.item_sep(depth), lay.key_sep()
    x_sym = None
    if extras:
        x_sym = b.rule([(k,) + ksep + (b.symbol(v, "VAL"),) for k, v in extras], "extra")
    kvs = [(k,) + ksep + (b.symbol(v, "VAL"),) for k, v, _ in members]
    n = len(members)
    if cv.opts.property_order == "any" and 1 < n <= cv.opts.max_any_order_properties:
        return _any_order(cv, kvs, [m[2] for m in members], x_sym, n_min, n_max, depth)

    def room(c: int) -> bool:  # may one more member be written after c of them
        return n_max is None or c + 1 <= n_max

    def up(c: int) -> int:
        return min(c + 1, cap)

    # next[i][c]: the next declared member present is i or later, c members so far (capped);
    # rest[i][c]: as next, but extra members may come first
    nxt: dict = {}
    rest: dict = {}
    for i in range(n, -1, -1):
        for c in range(cap, -1, -1):
            if i == n:
                alts = [()] if c >= n_min else []
            else:
                alts = []
                if room(c) and rest.get((i + 1, up(c))):
                    alts.append(sep + kvs[i] + (rest[(i + 1, up(c))],))
                if not members[i][2] and nxt.get((i + 1, c)):
                    alts.append((nxt[(i + 1, c)],))
            nxt[(i, c)] = b.rule(alts, "next") if alts else None
            alts = []
            if x_sym and room(c):
                target = "__self__" if up(c) == c else rest.get((i, up(c)))
                if target:
                    alts.append(sep + (x_sym, target))
            if nxt[(i, c)]:
                alts.append((nxt[(i, c)],))
            rest[(i, c)] = _self_ref(b, b.rule(alts, "rest")) if alts else None
    first = []
    if x_sym and room(0) and rest.get((0, up(0))):
        first.append((x_sym, rest[(0, up(0))]))
    for i in range(n):
        if room(0) and rest.get((i + 1, up(0))):
            first.append(kvs[i] + (rest[(i + 1, up(0))],))
        if members[i][2]:
            break
    alts = []
    if first:
        alts.append(lay.open("{", depth) + (b.rule(first, "members"),) + lay.close("}", depth))
    if n_req == 0 and n_min == 0:
        alts.append(lay.empty("{}", depth))
    if not alts:
        return None
    return Symbol(b.rule(alts, "obj"))


def _any_order(cv: "Converter", kvs: list, required: list[bool], x_sym: str | None,
               n_min: int, n_max: int | None, depth: int) -> Piece:
    """Declared members in any order, each at most once, extra members anywhere: one rule per
    (set of declared members written, members written so far, capped where the counts stop
    mattering), so 2**n rules times the count bound: only for small n."""
    b, lay = cv.b, cv.layout
    sep = lay.item_sep(depth)
    n = len(kvs)
    must = sum(1 << i for i in range(n) if required[i])
    cap = n_max + 1 if n_max is not None else n_min
    if not x_sym:                  # declared members alone count themselves
        cap = 0 if n_min == 0 and n_max is None else cap
    rest: dict[tuple[int, int], str | None] = {}

    def count(used: int, c: int) -> int:
        return min(c, cap) if x_sym else min(bin(used).count("1"), cap)

    for used in range((1 << n) - 1, -1, -1):   # supersets first
        for c in range(cap, -1, -1):
            if not x_sym and c != count(used, c):
                continue
            if n_max is not None and c > n_max:
                rest[(used, c)] = None
                continue
            alts = []
            for i in range(n):
                nxt = (used | 1 << i, count(used | 1 << i, c + 1))
                if not used >> i & 1 and rest.get(nxt):
                    alts.append(sep + kvs[i] + (rest[nxt],))
            if used & must == must and c >= n_min:
                alts.append(())
            if x_sym:
                nc = count(used, c + 1)
                if nc == c:
                    alts.append(sep + (x_sym, "__self__"))
                elif rest.get((used, nc)):
                    alts.append(sep + (x_sym, rest[(used, nc)]))
            if not alts or alts == [sep + (x_sym, "__self__")]:
                rest[(used, c)] = None     # no way to end from here
                continue
            rest[(used, c)] = _self_ref(b, b.rule(alts, "rest"))
    first = []
    for i in range(n):
        nxt = (1 << i, count(1 << i, 1))
        if rest.get(nxt) and (n_max is None or n_max >= 1):
            first.append(kvs[i] + (rest[nxt],))
    if x_sym and rest.get((0, count(0, 1))) and (n_max is None or n_max >= 1):
        first.append((x_sym, rest[(0, count(0, 1))]))
    alts = []
    if first:
        alts.append(lay.open("{", depth) + (b.rule(first, "members"),) + lay.close("}", depth))
    if not must and n_min == 0:
        alts.append(lay.empty("{}", depth))
    return Symbol(b.rule(alts, "obj")) if alts else None


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
            cv.refuse(f"{ptr}/patternProperties/{pointer_escape(p)}", "patternProperties",
                      f"invalid pattern {p!r}: {e}")
    return out


def _extras(cv, s, ptr, depth, declared, additional, pprops, compiled, names_schema):
    """(key terminal, value piece) for properties beyond the declared ones."""
    b = cv.b
    out = []
    excluded: list[str] = []    # key terminals of the patterns, taken out of additional keys
    if pprops:
        ok = []
        exact = True    # every pattern became a key terminal
        for p, rx in compiled:
            pptr = f"{ptr}/patternProperties/{pointer_escape(p)}"
            # declared names the pattern matches are members of their own (their schema
            # includes this pattern's): the pattern's keys leave them out
            shadowed = tuple(key_literal(n) for n in declared if rx.search(n))
            if any(_overlap(p, q) for q, _ in ok):
                cv.refuse(pptr, "patternProperties", "overlapping patternProperties patterns")
                exact = False
                continue
            try:
                body = patterns.pattern_body(p)
            except patterns.PatternError as e:
                cv.refuse(pptr, "patternProperties", str(e))
                exact = False
                continue
            if body is None:
                continue
            if names_schema is not True:
                cv.refuse(ptr + "/propertyNames", "propertyNames",
                          "propertyNames together with patternProperties")
                return out
            ok.append((p, rx))
            key = '"' + body + '"'
            excluded.append(key)
            piece = cv.value(pprops[p], pptr, depth + 1)
            if piece is not None:
                out.append((b.terminal(key, "PKEY", shadowed + (UNCOMMON_STRING,) * bool(shadowed)),
                            piece))
        if len(compiled) != len(pprops) or not exact:
            return out      # keys of a dropped pattern must not pass as additional ones
    if additional is False:
        return out
    piece = cv.value(additional, ptr + "/additionalProperties", depth + 1)
    if piece is None:
        return out
    if names_schema is not True:
        language = _names_key(cv, names_schema, ptr, declared)
        if language is None:
            return out
        key, exclude = language
        automaton = None
    else:
        key, exclude = key_except(declared), ()
        automaton = key_except_automaton(declared, key)
    out.append((b.terminal(key, "XKEY", tuple(dict.fromkeys(tuple(excluded) + exclude)),
                           automaton), piece))
    return out


def _names_key(cv, names_schema, ptr, declared) -> tuple[str, tuple[str, ...]] | None:
    """The keys propertyNames allows beyond the declared names: a regex and the regexes
    excluded from it."""
    if not isinstance(names_schema, dict) or set(names_schema) - _STRING_KEYWORDS - ANNOTATIONS:
        cv.refuse(ptr + "/propertyNames", "propertyNames",
                  "propertyNames beyond string keywords")
        return None
    if "enum" in names_schema or "const" in names_schema:
        vals = names_schema["enum"] if "enum" in names_schema else [names_schema["const"]]
        vals = [v for v in vals if isinstance(v, str) and cv.validates(v, names_schema)
                and v not in declared]
        return ("(?:" + "|".join(key_literal(v) for v in vals) + ")", ()) if vals else None
    language = string_language(names_schema, ptr + "/propertyNames", cv.opts, cv.refuse)
    if language is None:
        return None
    key, exclude = language
    if declared:
        exclude += tuple(key_literal(n) for n in declared) + (UNCOMMON_STRING,)
    return key, exclude


@lru_cache(maxsize=1024)
def _overlap(p: str, q: str) -> bool:
    """Whether two patternProperties patterns can match a common key (True when unsure):
    the key terminals the converter would build for them share a string."""
    try:
        a, b = patterns.pattern_body(p), patterns.pattern_body(q)
        if a is None or b is None:
            return False
        return dfas_intersect(regex_to_byte_dfa(f'"{a}"'), regex_to_byte_dfa(f'"{b}"'))
    except Exception:  # noqa: BLE001 - unreadable or too large: assume they overlap
        return True
