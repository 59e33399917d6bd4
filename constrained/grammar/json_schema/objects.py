"""Object rules: declared properties in schema order, extra properties between them (or, with
``property_order="any"``, small objects' declared properties in any order).

Commas are exact without exponential growth: ``next_i`` chooses the next declared property
present (skipping optional ones), ``rest_i`` may insert extra properties before it; after the
first member every member is preceded by the item separator.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING

from ...automata.byte_dfa import dfas_intersect, regex_to_byte_dfa
from ...lru import LRUCache
from . import patterns
from .builder import Piece, Symbol
from .chars import UNCOMMON_STRING
from .keys import key_except, key_literal
from .merge import ANNOTATIONS
from .refs import pointer_escape
from .strings import count_json_strings, language_dfa, string_language

if TYPE_CHECKING:
    from .converter import Converter

_STRING_KEYWORDS = {"type", "minLength", "maxLength", "pattern", "format", "enum", "const"}


@dataclass
class _Extra:
    """A class of members beyond the declared ones: key terminal, value schema and piece."""

    key: str
    value: Piece
    schema: object
    ptr: str
    pattern: str | None = None      # the patternProperties pattern (None: additional keys)
    unbounded: bool = False         # infinitely many keys, known without reading the automaton


def object_piece(cv: "Converter", s: dict, ptr: str, depth: int,
                 witnesses: tuple = ()) -> Piece:
    """The rule for objects valid under the object keywords of plain schema ``s`` that also
    have a member for each of ``witnesses`` (witnesses.Witness)."""
    b, lay = cv.b, cv.layout
    props = s.get("properties") or {}
    required = [r for r in s.get("required", []) if isinstance(r, str)]
    additional = s.get("additionalProperties", not cv.opts.strict_properties)
    pprops = s.get("patternProperties") or {}
    names_schema = cv._flatten(s.get("propertyNames", True), ptr + "/propertyNames",
                               frozenset())
    names_schema = True if names_schema == {} else names_schema
    if names_schema is False:
        if required or witnesses:
            return None
        return Symbol(b.rule([lay.empty("{}", depth)], "obj"))

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

    sep, ksep = lay.item_sep(depth), lay.key_sep()
    members = []  # (key-value symbols, required, witness variants: [(witness bit, symbols)])
    for name, sub, sptr, req in entries:
        piece = cv.value(sub, sptr, depth + 1)
        if piece is None:
            if req:
                return None
            continue
        key = b.terminal(key_literal(name), "KEY")
        variants = []     # the member as a witness of each set of witnesses it can serve
        for bits in range(1, 1 << len(witnesses)):
            chosen = [w for j, w in enumerate(witnesses) if bits >> j & 1]
            if all(w.accepts_name(name, cv.validates) for w in chosen):
                wp = cv.value({"allOf": [sub] + [w.value for w in chosen]}, sptr, depth + 1)
                if wp is not None:
                    variants.append((bits, (key,) + ksep + (b.symbol(wp, "VAL"),)))
        members.append(((key,) + ksep + (b.symbol(piece, "VAL"),), req, variants))

    declared = [e[0] for e in entries]
    extras = _extras(cv, s, ptr, depth, declared, additional, pprops, compiled, names_schema)
    n_req = sum(1 for m in members if m[1])
    n_min = int(s.get("minProperties", 0) or 0)
    n_max = s.get("maxProperties")
    n_max = None if n_max is None else int(n_max)
    if n_max is not None and not extras and len(members) <= n_max:
        n_max = None  # cannot be exceeded
    if n_min <= n_req:
        n_min = 0  # implied by the required properties
    if n_max is not None and n_max < n_req:
        return None
    cap = n_max + 1 if n_max is not None else n_min
    if cap and (len(members) + 1) * (cap + 1) > cv.opts.max_repeat * 4:
        cv.refuse(ptr + ("/maxProperties" if n_max is not None else "/minProperties"),
                  "maxProperties" if n_max is not None else "minProperties",
                  "property counts too large to expand")
        cap, n_min, n_max = 0, 0, None
    x_sym = None
    if extras:
        x_sym = b.rule([(e.key,) + ksep + (b.symbol(e.value, "VAL"),) for e in extras], "extra")
    x_variants = []
    for bits in range(1, 1 << len(witnesses)):
        chosen = [w for j, w in enumerate(witnesses) if bits >> j & 1]
        alts = []
        for e in extras:
            key = _witness_key(cv, chosen, e, declared, names_schema, ptr)
            piece = None if key is None else cv.value(
                {"allOf": [e.schema] + [w.value for w in chosen]}, e.ptr, depth + 1)
            if piece is not None:
                alts.append((key,) + ksep + (b.symbol(piece, "VAL"),))
        if alts:
            x_variants.append((bits, b.rule(alts, "witness")))
    mode = "schema"
    if cv.opts.property_order == "any" and len(members) > 1:
        if not witnesses:
            mode = "count"
        elif len(members) <= cv.opts.max_any_order_properties:
            mode = "subset"
    x_limit = _extra_key_count(cv, extras, ptr) if extras else 0
    full = (1 << len(witnesses)) - 1

    def build(chosen: list) -> list:
        """The object's alternatives with these declared members."""
        made = _counted_chain(b, sep, chosen, x_sym, n_min, n_max, cap, x_limit) \
            if mode == "count" else None
        if made is None or made is _TOO_LARGE:
            chain = None if made is _TOO_LARGE else _MemberChain(
                b, sep, chosen, x_sym, x_variants, n_min, n_max, cap, full, mode, x_limit)
            if chain is None or chain.too_large:
                cv.refuse(ptr + "/properties", "properties", f"{len(chosen)} properties in "
                          f"any order with these counts need more than {_MAX_CHAIN_STATES} "
                          "grammar states")
                chain = _MemberChain(b, sep, chosen, x_sym, x_variants, n_min, n_max, cap,
                                     full, "schema", x_limit)
            made = chain.first(), chain.empty_allowed()
        first, empty = made
        alts = []
        if first:
            alts.append(lay.open("{", depth) + (first,) + lay.close("}", depth))
        if empty:
            alts.append(lay.empty("{}", depth))
        return alts

    alts = build(members)
    if not alts:
        return None
    name = b.rule(alts, "obj")
    if mode == "count":
        cv.counted_objects.append((name, members, build))
    return Symbol(name)


def drop_unwritable_members(cv: "Converter", productive: set) -> bool:
    """Objects whose members are counted (any order) assume each declared member can be
    written: a member whose value has no instance would let a count be reached only by
    repeating keys. Rebuild such objects without those members (no instance at all when one
    is required). Whether anything changed (``productive`` is then stale)."""
    changed = False
    keep = []
    for name, members, build in cv.counted_objects:
        ok = [m for m in members if all(sym in productive for sym in m[0])]
        if len(ok) == len(members):
            keep.append((name, members, build))
            continue
        changed = True
        alts = [] if any(m[1] for m in members if m not in ok) else build(ok)
        cv.b.define(name, alts or [(cv.b.never(),)])
        if alts:
            keep.append((name, ok, build))
    cv.counted_objects = keep
    return changed


_MAX_CHAIN_STATES = 20_000


class _MemberChain:
    """The members of an object as a small automaton turned into rules.

    A state is (position, members written (capped), witnesses seen, extra members written).
    The position depends on the mode: "schema", the next declared member that may still come;
    "subset", the set of declared members written; "count", the numbers of required and of
    optional declared members written: any declared member may come at any time, and the
    matcher keeps keys distinct (Grammar.distinct_keys), so a count is a count of distinct
    members. Optional and extra members are counted when their keys can run out (no extra
    members, or finitely many extra keys: ``x_limit``), so that a separator is offered only
    while an unused key remains. Since the classes of keys are disjoint, an unused key
    remains iff fewer members than keys were written, so "count" then keeps the number of
    required members and the number of all members (``by_total``), and offers a member
    outside the required ones only while fewer of them were written than there are such keys
    (the other states hold no text with distinct keys); a member of a class whose keys are
    all used is refused by the matcher, which keeps keys distinct across the classes (a key
    text is allowed iff some completion of it is an unused key). Every member after the first is preceded by the separator,
    so a state has a rule for the members from the first one on and one for the members
    after at least one; optional declared members may be skipped (schema order). Only
    states from which the object can still end get rules."""

    def __init__(self, b, sep, members, x_sym, x_variants, n_min, n_max, cap, full, mode,
                 x_limit):
        self.b, self.sep, self.members = b, sep, members
        self.x_sym, self.x_variants = x_sym, x_variants
        self.n_min, self.n_max, self.cap, self.full = n_min, n_max, cap, full
        self.mode = mode
        self.x_limit = x_limit          # distinct extra keys when finite, else None
        self.must = sum(1 << i for i in range(len(members)) if members[i][1])
        self.n_req = sum(1 for m in members if m[1])
        self.n_opt = len(members) - self.n_req
        self.bounded = x_limit is not None     # every key class can run out: count all
        # (a capped count of extra keys keeps counting extra members apart: the cap holds)
        self.by_total = mode == "count" and self.bounded and x_limit < _MAX_EXTRA_KEYS
        self.total = len(members) + (x_limit or 0)
        if mode == "count":
            self.req = b.rule([m[0] for m in members if m[1]], "req") if self.n_req else None
            self.opt = b.rule([m[0] for m in members if not m[1]], "opt") \
                if self.n_opt else None
        self._rules: dict = {}
        self.too_large = False
        # reached states are numbered (the start is 0): per number, its moves and skips with
        # the numbers they lead to, and whether the object may end there
        self._succ: list = []
        self._ending: list = []
        linear = (mode == "schema" and not full and not x_variants and n_max is None
                  and not n_min and not cap and (x_sym is None or x_limit is None)
                  and not any(m[2] for m in members))
        self._live = self._linear_states() if linear else self._live_states()

    def _start(self):
        return ((0, 0) if self.mode == "count" else 0, 0, 0, 0)

    def _count(self, state) -> int:
        """Members written (capped at ``cap`` unless every class is counted)."""
        pos, c, w, x = state
        if self.by_total:
            return pos[1]
        if self.mode == "count" and self.bounded:
            return pos[0] + pos[1] + x
        return c

    def _moves(self, state):
        """(symbols of one member, next state) from ``state``."""
        pos, c, w, x = state
        if self.n_max is not None and self._count(state) + 1 > self.n_max:
            return []
        nc = 0 if self.mode == "count" and self.bounded else min(c + 1, self.cap)
        if self.by_total:           # pos: (required members, all members)
            r, t = pos
            out = [((self.req,), ((r + 1, t + 1), nc, w, x))] if r < self.n_req else []
            if t - r < self.total - self.n_req:      # a key outside the required ones is left
                out += [((sym,), ((r, t + 1), nc, w, x)) for sym in (self.x_sym, self.opt)
                        if sym]
            return out
        out = []
        if self.x_sym and (self.x_limit is None or x < self.x_limit):
            nx = x + 1 if self.x_limit is not None else 0
            out.append(((self.x_sym,), (pos, nc, w, nx)))
            out += [((sym,), (pos, nc, w | bit, nx)) for bit, sym in self.x_variants]
        if self.mode == "count":
            r, o = pos
            if r < self.n_req:
                out.append(((self.req,), ((r + 1, o), nc, w, x)))
            if self.n_opt and (not self.bounded or o < self.n_opt):
                out.append(((self.opt,), ((r, o + 1 if self.bounded else 0), nc, w, x)))
            return out
        for i, (kv, _, variants) in enumerate(self.members):
            if self.mode == "subset":
                if pos >> i & 1:
                    continue
                nxt = pos | 1 << i
            elif i != pos:
                continue
            else:
                nxt = pos + 1
            out.append((kv, (nxt, nc, w, x)))
            out += [(sym, (nxt, nc, w | bit, x)) for bit, sym in variants]
        return out

    def _skips(self, state):
        """States reached without a member: past an optional declared one (schema order)."""
        pos, c, w, x = state
        if self.mode != "schema" or pos >= len(self.members) or self.members[pos][1]:
            return []
        return [(pos + 1, c, w, x)]

    def _ends(self, state) -> bool:
        pos, c, w, x = state
        if self.mode == "count":
            done = pos[0] == self.n_req
        elif self.mode == "subset":
            done = (pos & self.must) == self.must
        else:
            done = pos == len(self.members)
        return done and self._count(state) >= self.n_min and w == self.full

    def _linear_states(self) -> bytearray:
        """``_live_states`` of the commonest chain, found without a search: schema order, no
        counts, no witnesses, extra members (if any) without end. State i is the position
        before member i (numbered as the search numbers it); every state is live."""
        n = len(self.members)
        x = (self.x_sym,) if self.x_sym else None
        succ = self._succ
        for i, (kv, req, _) in enumerate(self.members):
            succ.append(([(x, i), (kv, i + 1)] if x else [(kv, i + 1)], [] if req else [i + 1]))
        succ.append(([(x, n)] if x else [], []))
        self._ending = [False] * n + [True]
        return bytearray(b"\1" * (n + 1))

    def _live_states(self) -> bytearray:
        """Per reached state number, 1 where an end is reachable."""
        start = self._start()
        ids, states, back = {start: 0}, [start], [[]]
        succ = self._succ      # kept for _rule: it reads the live states' moves again
        moves_of, skips_of = self._moves, self._skips

        def reach(nx) -> int:
            """The number of state ``nx``, reached from state number i."""
            j = ids.get(nx)
            if j is None:
                j = ids[nx] = len(states)
                states.append(nx)
                back.append([])
            back[j].append(i)
            return j

        i = 0
        while i < len(states):
            st = states[i]
            succ.append(([(syms, reach(nx)) for syms, nx in moves_of(st)],
                         [reach(nx) for nx in skips_of(st)]))
            if len(states) > _MAX_CHAIN_STATES:
                self.too_large = True
                return bytearray(1)
            i += 1
        ends_at = self._ends
        self._ending = ending = [ends_at(st) for st in states]
        live = bytearray(len(states))
        todo = [j for j, end in enumerate(ending) if end]
        for j in todo:
            live[j] = 1
        while todo:
            for prev in back[todo.pop()]:
                if not live[prev]:
                    live[prev] = 1
                    todo.append(prev)
        return live

    def _rule(self, state: int, more: bool) -> str | None:
        """The rule for the members from state number ``state`` on (``more``: after a first
        member); the rules it needs are defined too (iteratively: member lists may be long)."""
        if not self._live[state]:
            return None
        key = (state, more)
        if key in self._rules:
            return self._rules[key]
        b = self.b
        self._rules[key] = top = b.reserve("more" if more else "members")
        todo = [key]
        live, rules, succ, sep, ending = self._live, self._rules, self._succ, self.sep, self._ending
        while todo:
            state, more = todo.pop()
            alts = [()] if more and ending[state] else []
            moves, skips = succ[state]
            for syms, nx in moves:
                if not live[nx]:
                    continue
                target = rules.get((nx, True))
                if target is None:
                    target = rules[(nx, True)] = b.reserve("more")
                    todo.append((nx, True))
                alts.append((*sep, *syms, target) if more else (*syms, target))
            for nx in skips:
                if not live[nx]:
                    continue
                target = rules.get((nx, more))
                if target is None:
                    target = rules[(nx, more)] = b.reserve("more" if more else "members")
                    todo.append((nx, more))
                alts.append((target,))
            b.define_tuples(rules[(state, more)], tuple(alts))
        return top

    def first(self) -> str | None:
        """The rule for a non-empty member list, or None when none can be written."""
        name = self._rule(0, False)
        return name if name and self.b.rules[name] else None

    def empty_allowed(self) -> bool:
        state = self._start()
        while not self._ends(state):
            skips = self._skips(state)
            if not skips:
                return False
            state = skips[0]
        return True


# A counted member chain's rules depend only on its counts, not on its symbols: their shape is
# found once per process and written out with each object's symbols (objects of the same
# counts recur across schemas)
_CHAIN_SHAPES = LRUCache(1024)
_TOO_LARGE = ("too large",)     # a shape past _MAX_CHAIN_STATES (the caller refuses it)


class _ShapeRecorder:
    """Stands in for the builder while a _MemberChain of placeholder symbols defines its
    rules: keeps the hints of the names reserved and the alternatives defined, in order."""

    def __init__(self) -> None:
        self.rules: dict = {}
        self.hints: list[str] = []

    def reserve(self, hint: str) -> str:
        self.hints.append(hint)
        return f"\0r{len(self.hints) - 1}"

    def define_tuples(self, name: str, alts: tuple) -> str:
        self.rules[name] = alts
        return name

    def rule(self, alts, hint: str) -> str:
        return "\0" + hint         # the rules of the required and of the optional members


def _counted_chain(b, sep: tuple, members: list, x_sym, n_min: int, n_max, cap: int,
                   x_limit) -> tuple:
    """``(first, empty_allowed)`` of ``_MemberChain`` in mode "count" (no witnesses), its rules
    defined in ``b`` from the shape of its counts; ``_TOO_LARGE`` when the chain is too large
    (the caller refuses it)."""
    n_req = sum(1 for m in members if m[1])
    key = (n_req, len(members) - n_req, x_sym is not None, x_limit, n_min, n_max, cap,
           len(sep))
    shape = _CHAIN_SHAPES.get(key)
    if shape is None:
        rec = _ShapeRecorder()
        marks = tuple(f"\0s{i}" for i in range(len(sep)))
        fake = [((f"\0m{i}",), i < n_req, []) for i in range(len(members))]
        chain = _MemberChain(rec, marks, fake, "\0x" if x_sym is not None else None, [], n_min,
                             n_max, cap, 0, "count", x_limit)
        if chain.too_large:
            return _CHAIN_SHAPES.put(key, _TOO_LARGE)
        first, empty = chain.first(), chain.empty_allowed()
        slots = marks + ("\0req", "\0opt", "\0x") + tuple(
            f"\0r{i}" for i in range(len(rec.hints)))
        at = {name: i for i, name in enumerate(slots)}
        # each alternative as a getter of its symbols from the slots (a slice getter returns
        # a tuple whatever the alternative's length)
        defined = tuple((at[name], tuple(_symbols_getter([at[s] for s in alt]) for alt in alts))
                        for name, alts in rec.rules.items())
        shape = _CHAIN_SHAPES.put(key, (tuple(rec.hints), defined,
                                        None if first is None else at[first], empty))
    if shape is _TOO_LARGE:
        return shape
    hints, defined, first_at, empty = shape
    req = b.rule([m[0] for m in members if m[1]], "req") if n_req else None
    opt = b.rule([m[0] for m in members if not m[1]], "opt") if len(members) > n_req else None
    slots = sep + (req, opt, x_sym) + b.reserve_all(hints)
    rules = b.rules
    for name_at, getters in defined:
        rules[slots[name_at]] = tuple([get(slots) for get in getters])
    return (None if first_at is None else slots[first_at]), empty


def _symbols_getter(positions: list[int]):
    """A function of a slots tuple giving the tuple of its items at ``positions``."""
    if len(positions) > 1:
        return itemgetter(*positions)
    return itemgetter(slice(positions[0], positions[0] + 1) if positions else slice(0, 0))


def _witness_key(cv, chosen: list, extra: _Extra, declared, names_schema,
                 ptr: str) -> str | None:
    """The key terminal of the members of an extra class that are witnesses of every one of
    ``chosen`` (their key languages intersected with the class's)."""
    t = cv.b.terminals[extra.key]
    pattern, exclude, matching = t.pattern, t.exclude, extra.pattern
    for w in chosen:
        if w.pattern is not None:                          # keys matching a pattern
            if matching == w.pattern:
                continue
            if matching is not None or names_schema is not True:
                cv.refuse(ptr + "/patternProperties", "not", "the complement of "
                          "patternProperties beside other key patterns or propertyNames")
                return None
            pattern, matching = w.key, w.pattern           # the class: all but the declared
            exclude += tuple(key_literal(n) for n in declared) + (UNCOMMON_STRING,)
        elif w.name_schema is None:                        # keys outside names and patterns
            exclude += w.key_exclude
        else:                                              # keys failing propertyNames
            language = _names_key(cv, cv._flatten(w.name_schema, ptr, frozenset()), ptr, [])
            if language is None:
                continue                                   # every key fails it
            key, excluded = language
            if excluded:
                cv.refuse(ptr + "/propertyNames", "not", "the complement of propertyNames "
                          "with lengths beside a pattern")
                return None
            exclude += (key, UNCOMMON_STRING)
    if pattern == t.pattern and exclude == t.exclude:
        return extra.key
    return cv.b.terminal(pattern, "WKEY", tuple(dict.fromkeys(exclude)))


def _compile_patterns(cv: "Converter", pprops: dict, ptr: str):
    out = []
    for p in pprops:
        try:
            out.append((p, re.compile(p)))
        except re.error as e:
            cv.refuse(f"{ptr}/patternProperties/{pointer_escape(p)}", "patternProperties",
                      f"invalid pattern {p!r}: {e}")
    return out


def _extras(cv, s, ptr, depth, declared, additional, pprops, compiled,
            names_schema) -> list[_Extra]:
    """The classes of properties beyond the declared ones."""
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
                out.append(_Extra(b.terminal(key, "PKEY",
                                             shadowed + (UNCOMMON_STRING,) * bool(shadowed)),
                                  piece, pprops[p], pptr, p))
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
    else:       # (its automaton is built from the names' trie when a lexer needs it)
        key, exclude = key_except(declared), ()
    # any key but finitely many names (and no pattern's keys) is infinitely many keys
    unbounded = names_schema is True and not excluded
    out.append(_Extra(b.terminal(key, "XKEY", tuple(dict.fromkeys(tuple(excluded) + exclude))),
                      piece, additional, ptr + "/additionalProperties", unbounded=unbounded))
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


_MAX_EXTRA_KEYS = 256


def _extra_key_count(cv, extras: list[_Extra], ptr: str) -> int | None:
    """How many distinct keys the extra members may use: None when infinitely many (the usual
    case: any key but the declared ones). Finitely many keys run out, so the grammar counts
    extra members up to their number; past _MAX_EXTRA_KEYS it counts to that bound, which
    then caps the extra members of one object (documented on SchemaOptions)."""
    if any(e.unbounded for e in extras):
        return None
    # the cheapest languages first (one infinite language answers): automata built already,
    # then regexes, then differences of languages
    terms = sorted((cv.b.terminals[e.key] for e in extras),
                   key=lambda t: (bool(t.exclude), t.automaton is None))
    return count_json_strings((language_dfa(t.pattern, t.exclude, t.automaton) for t in terms),
                              _MAX_EXTRA_KEYS)
