"""JSON Schema -> Grammar: the recursive conversion of schemas into pieces and rules."""
from __future__ import annotations

import itertools
import json
import re
from functools import lru_cache

from ...deadline import check_deadline
from ...lru import LRUCache
from ...errors import (EmptyLanguageError, GrammarError, LimitExceededError,
                      UnsupportedSchemaError)
from .._analysis import productive_symbols
from .arrays import array_piece
from .builder import GrammarBuilder, Piece, Regular, Symbol
from .chars import ANY_STRING, literal_string
from .formats import format_body
from .json_equality import enum_contains
from .layout import Layout
from .long_strings import NOT_STRINGS, bounds_past, chunked_string
from .merge import ANNOTATIONS, for_validator, merge, type_set
from .multiples import multiple_pattern
from .numbers import NUMBER, bounds, integer_pattern, number_pattern, outside
from .objects import drop_unwritable_members, object_piece
from . import algebra, scalar_not, unevaluated
from .oneof import disjoint
from .options import SchemaOptions
from .quick_validity import quick_validity
from .refs import DEFAULT_BASE, SchemaIndex
from .scalar_not import holds_for_all, number_exclusions, string_exclusions
from .strings import string_language

_ALL_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")

# keywords of schemas converted once per process (Converter._scalar): those of strings, numbers
# and finite values, and annotations (which their pieces do not depend on)
_SCALAR_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "example",
                                 "$comment", "readOnly", "writeOnly", "deprecated"})
_SCALAR_KEYWORDS = _SCALAR_ANNOTATIONS | {
    "type", "enum", "const", "minLength", "maxLength", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_SCALAR_TYPES = frozenset({"null", "boolean", "number", "string", "integer"})
# (options id, chunk_strings or None for a type that is no string, depth, schema text) ->
# (piece,), for texts up to _MAX_SCALAR_TEXT characters
_SCALAR_PIECES = LRUCache(4096)
_MAX_SCALAR_TEXT = 2048


def _sorted_text_encoder():
    """A function giving compact JSON text with sorted members, like
    ``json.dumps(x, sort_keys=True, separators=(",", ":"))``, without making an encoder per
    call (scalar cache keys are many). The schemas it reads come from JSON text, so they hold
    no cycle; one that recursed too deep raises RecursionError as json.dumps does."""
    make = json.encoder.c_make_encoder
    if make is None:
        return json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
    encode = make(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None,
                  ":", ",", True, False, True)
    join = "".join
    return lambda value: join(encode(value, 0))


_SORTED_TEXT = _sorted_text_encoder()


_OPTIONS_IDS: dict[SchemaOptions, int] = {}
_NEXT_OPTIONS_ID = itertools.count()


def _options_id(opts: SchemaOptions) -> int:
    """A small number for equal options (numbers are never reused)."""
    got = _OPTIONS_IDS.get(opts)
    if got is None:
        if len(_OPTIONS_IDS) >= 1024:
            _OPTIONS_IDS.clear()
        got = _OPTIONS_IDS.setdefault(opts, next(_NEXT_OPTIONS_ID))
    return got


def _enforced_format(fmt) -> bool:
    return isinstance(fmt, str) and format_body(fmt) is not None


def _scalar_types(types) -> bool:
    """Whether a ``type`` value admits only scalars (None: no type, admits any)."""
    if isinstance(types, str):
        return types in _SCALAR_TYPES
    return isinstance(types, list) and all(t in _SCALAR_TYPES for t in types)


class ChunkEveryString(Exception):
    """Raised by a conversion that must start again with ``chunk_strings`` (see
    Converter.__init__)."""


class Converter:
    """Holds the builder, the reference index and what lenient mode dropped."""

    def __init__(self, schema, opts: SchemaOptions, owned: bool = False,
                 refers: bool = True, chunk_strings: bool = False) -> None:
        """``owned``: ``schema`` is a private copy the conversion may rewrite; ``refers``
        False: it holds no reference (refs.may_refer of its text); ``chunk_strings``: strings
        without an upper bound are lexed in chunks too.

        A string longer than ``max_string_length`` is lexed in chunks of 32 characters
        (long_strings), whose border is exact only where no other candidate terminal goes on
        past it. In a union (anyOf, oneOf, expanded applicators) another branch may read an
        unbounded string at the same place (a member of any value, say): greedy lexing would
        take the longer lexeme and lose the chunked reading. A conversion that meets this
        stops there (ChunkEveryString) and is done again with ``chunk_strings``: chunked
        alike, both end their lexeme at the border (strings with a pattern or format, and items
        of arrays of distinct strings, stay one terminal each)."""
        self.opts = opts
        self.index = SchemaIndex(schema, owned, refers)
        self.b = GrammarBuilder(opts.max_rules)
        self.layout = Layout(self.b, opts)
        self.dropped: list[tuple[str, str]] = []
        self.format_annotations: list[tuple[str, str]] = []
        self._refs: dict[tuple[str, int], str] = {}
        self._any: dict[tuple[int, bool], str] = {}
        self._negations: dict[tuple[str, int], str] = {}
        self._open = 0      # value() calls in progress: subschemas and $refs being converted
        self._empty_at: str | None = None   # the first subschema found to admit no instance
        self._cyclic = False                # some rule refers to itself (through $ref or not)
        # (object rule, declared members, rebuild) of objects whose members are counted
        self.counted_objects: list = []
        self._validator = None
        # id(schema) -> (schema, its validator): schemas are never modified, and keeping each
        # one alive keeps its id unique
        self._validators: dict[int, tuple] = {}
        self._options_id = _options_id(opts)
        self.chunk_strings = chunk_strings
        self._long_strings = 0          # chunked strings written so far
        # rule of a $ref's target or a complement -> whether it holds chunked strings
        self._holds_long: dict[str, bool] = {}
        self._first_pass = not chunk_strings    # (the only one unless ChunkEveryString)

    def _make_validator(self):
        validator = _validator_class()      # raises when jsonschema is missing
        import referencing                  # a dependency of jsonschema
        import referencing.jsonschema
        resource = referencing.jsonschema.DRAFT202012.create_resource(self.index.root)
        registry = referencing.Registry().with_resources(
            [(self.index.base, resource), (DEFAULT_BASE, resource)])
        return lambda schema: validator(schema, registry=registry)

    # -- errors -------------------------------------------------------------------------------
    def refuse(self, pointer: str, keyword: str, message: str) -> None:
        """Raise UnsupportedSchemaError, or in lenient mode record (pointer, keyword)."""
        if self.opts.lenient:
            self.dropped.append((pointer or "#", keyword))
            return
        raise UnsupportedSchemaError(message, pointer=pointer or "#", keyword=keyword)

    def validates(self, instance, schema) -> bool:
        """Whether ``instance`` is valid under ``schema`` (refs resolve against the root)."""
        simple = quick_validity(instance, schema, self._resolved)
        if simple is not None:
            return simple
        entry = self._validators.get(id(schema))
        if entry is None:
            if self._validator is None:
                self._validator = self._make_validator()
            try:
                check = self._validator(for_validator(schema))
            except Exception:  # noqa: BLE001 - an unusable schema fragment: be conservative
                check = None
            entry = self._validators[id(schema)] = (schema, check)
        if entry[1] is None:
            return False
        try:
            return entry[1].is_valid(instance)
        except Exception:  # noqa: BLE001 - an unusable schema fragment: be conservative
            return False

    def _resolved(self, uri: str):
        """The schema a (absolute) ``$ref`` names."""
        return self.index.resolve(uri, "")[0]

    # -- conversion ---------------------------------------------------------------------------
    def start(self) -> str:
        try:
            piece = self.value(self.index.root, "", 0)
            self.b.define("start", [(self.b.symbol(piece, "VALUE"),)])
            maybe_empty = piece is None or self._cyclic or "never" in self.b.rules
            while maybe_empty and self.counted_objects and drop_unwritable_members(
                    self, productive_symbols(self.b.rules, self.b.terminals)
                    | set(self.b.terminals)):
                pass
        finally:
            # their builders refer back to the converter: dropped, a converter (refused or
            # not) forms no reference cycle and is freed at once, not by a later collection
            self.counted_objects = []
        if maybe_empty and "start" not in productive_symbols(self.b.rules, self.b.terminals):
            raise EmptyLanguageError("the schema admits no instance" + (
                "" if not self._empty_at else " (the first part found to admit none is "
                "pointed at)"), pointer=self._empty_at or "")
        return "start"

    def value(self, schema, ptr: str, depth: int) -> Piece:
        """The piece for instances of ``schema`` found at nesting ``depth``."""
        if self._open >= 4 * self.opts.max_schema_depth:
            raise LimitExceededError(f"subschemas and $refs lead more than 4 x max_schema_depth"
                                     f"={self.opts.max_schema_depth} levels deep (at "
                                     f"{ptr or '#'})")
        self._open += 1
        check_deadline("converting the JSON Schema")
        try:
            piece = self._value_at(schema, ptr, depth)
        finally:
            self._open -= 1
        if piece is None and schema is not False and self._empty_at is None:
            self._empty_at = ptr
        return piece

    def _value_at(self, schema, ptr: str, depth: int) -> Piece:
        if self.opts.whitespace != "indented":
            depth = 0
        elif depth > self.opts.max_depth:
            return Symbol(self.b.never())
        if schema is True:
            return self.any_value(depth)
        if schema is False:
            return None
        if not isinstance(schema, dict):
            raise GrammarError(f"a schema must be an object or a boolean, not {schema!r}",
                               pointer=ptr or "#")
        if "$ref" in schema and not any(k in schema for k in _constraint_keys(schema)):
            return self._ref(schema["$ref"], ptr, depth)
        if "not" in schema:    # complements may lead back to the same schema: one rule each
            key = (json.dumps(schema, sort_keys=True, default=str), depth)
            if key in self._negations and self._negations[key] not in self.b.rules:
                self._cyclic = True
            if key not in self._negations:
                name = self.b.reserve("not")
                self._negations[key] = name
                before = self._long_strings
                piece = self._value(schema, ptr, depth)
                self._holds_long[name] = self._long_strings > before
                self.b.define(name, [(self.b.symbol(piece, "VALUE"),)])
            else:   # (as a reference met again: it holds the chunked strings it holds)
                self._long_strings += self._holds_long.get(self._negations[key], True)
            return Symbol(self._negations[key])
        if (schema.keys() <= _SCALAR_KEYWORDS and _scalar_types(schema.get("type"))
                and ("format" not in schema or _enforced_format(schema["format"]))):
            return self._scalar(schema, ptr, depth)
        return self._value(schema, ptr, depth)

    def _scalar(self, schema: dict, ptr: str, depth: int) -> Piece:
        """``_value`` of a schema of scalar keywords only, shared by every conversion with
        the same options: its piece is one regular language (or none) that depends on nothing
        else (annotations aside). Kept only when converting it recorded nothing (no keyword
        dropped: a record names the place), so a hit leaves out no such record; formats that
        are only annotated (one record per place) do not come here."""
        try:
            text = _SORTED_TEXT({k: v for k, v in schema.items() if k not in _SCALAR_ANNOTATIONS}
                                if not _SCALAR_ANNOTATIONS.isdisjoint(schema) else schema)
        except (TypeError, ValueError, RecursionError):
            return self._value(schema, ptr, depth)
        if len(text) > _MAX_SCALAR_TEXT:    # (a long enum: the cache stays small)
            return self._value(schema, ptr, depth)
        # only a string's piece depends on whether unbounded strings are chunked: a number's
        # is shared by both readings (and by a conversion done again with every string chunked)
        types = schema.get("type")
        chunked = None if types.__class__ is str and types in NOT_STRINGS else self.chunk_strings
        key = (self._options_id, chunked, depth, text)
        hit = _SCALAR_PIECES.get(key)
        if hit is not None:
            return hit[0]
        records = len(self.dropped)
        piece = self._value(schema, ptr, depth)
        if (piece is None or piece.__class__ is Regular) and len(self.dropped) == records:
            _SCALAR_PIECES.put(key, (piece,))
        return piece

    def _value(self, schema: dict, ptr: str, depth: int) -> Piece:
        if unevaluated.has_unevaluated(schema):
            return self._branches([(b, ptr) for b in unevaluated.resolve(self, schema, ptr)],
                                  depth)
        values = self._finite_values(schema, 0)
        if values is not None:  # a finite set: keep the values the whole schema accepts
            return self._literals([v for v in values if self.validates(v, schema)])
        s = self._flatten(schema, ptr, frozenset())
        if not isinstance(s, dict):
            return self.value(s, ptr, depth)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self._union_of(s, key, ptr, depth)
        branches = algebra.expand(self, s, ptr)
        if branches is not None:
            return self._branches([(b, ptr) for b in branches], depth)
        return self._plain(s, ptr, depth)

    def _branches(self, branches: list, depth: int) -> Piece:
        """The union of the pieces of (schema, pointer) ``branches``: texts of several schemas
        are read at once, so a chunked string in one branch may meet another branch's string
        at the same place (see __init__), unless that branch holds no string at
        all (null, booleans, numbers: a regular piece without a quote)."""
        pieces, chunked = [], []
        for x, p in branches:
            before = self._long_strings
            pieces.append(self.value(x, p, depth))
            chunked.append(self._long_strings > before)
        if any(chunked) and self._first_pass and sum(
                1 for piece in pieces if piece is not None and (
                    not isinstance(piece, Regular) or '"' in piece.pattern)) > 1:
            raise ChunkEveryString      # (converted again whole: nothing more to learn here)
        return self.union(pieces)

    def _finite_values(self, schema, depth: int) -> list | None:
        """The enum/const values that bound a schema (at its top or in an allOf part)."""
        if not isinstance(schema, dict) or depth > 8:
            return None
        if "const" in schema:
            return [schema["const"]]
        if isinstance(schema.get("enum"), list):
            return schema["enum"]
        parts = list(schema.get("allOf") or [])
        if isinstance(schema.get("$ref"), str):
            try:
                parts.append(self.index.resolve(schema["$ref"], "")[0])
            except UnsupportedSchemaError:
                return None
        for part in parts:
            values = self._finite_values(part, depth + 1)
            if values is not None:
                return values
        return None

    def _ref(self, uri: str, ptr: str, depth: int) -> Piece:
        key = (uri, depth)
        if key not in self._refs:
            name = self.b.reserve("ref")
            self._refs[key] = name
            target, tptr = self.index.resolve(uri, ptr)
            before = self._long_strings
            piece = self.value(target, tptr, depth)
            self._holds_long[name] = self._long_strings > before
            self.b.define(name, [(self.b.symbol(piece, "VALUE"),)])
        else:
            if self._refs[key] not in self.b.rules:
                self._cyclic = True       # a rule that refers to itself may derive nothing
            # (a reference met again holds the chunked strings its target holds; one still
            # being converted may hold some)
            self._long_strings += self._holds_long.get(self._refs[key], True)
        return Symbol(self._refs[key])

    def _flatten(self, s, ptr: str, seen: frozenset):
        """``s`` without $ref or allOf at its top: referenced and allOf schemas merged in."""
        if not isinstance(s, dict):
            return s
        if unevaluated.has_unevaluated(s):   # resolved before it meets other schemas
            return {"anyOf": unevaluated.resolve(self, s, ptr)}
        s = dict(s)
        if "$ref" in s:
            uri = s.pop("$ref")
            if uri in seen:
                raise UnsupportedSchemaError("a $ref cycle through allOf/$ref siblings",
                                             pointer=ptr or "#", keyword="$ref")
            target, tptr = self.index.resolve(uri, ptr)
            s = merge(self._flatten(target, tptr, seen | {uri}), s, ptr)
        if isinstance(s, dict) and "allOf" in s:
            parts = s.pop("allOf")
            for i, part in enumerate(parts):
                s = merge(s, self._flatten(part, f"{ptr}/allOf/{i}", seen), ptr + "/allOf")
                if s is False:
                    break
        if isinstance(s, dict) and ("$ref" in s or "allOf" in s):
            return self._flatten(s, ptr, seen)
        return s

    def _union_of(self, s: dict, key: str, ptr: str, depth: int) -> Piece:
        """anyOf: the union of the branches, each with the rest of ``s``; oneOf: the same with
        each branch also outside the branches it may overlap (exactly one holds)."""
        rest = {k: v for k, v in s.items() if k != key}
        subs = list(s[key])
        branches = []
        if key == "oneOf":
            flat = [self._flatten(sub, f"{ptr}/oneOf/{i}", frozenset())
                    for i, sub in enumerate(subs)]
            for i, sub in enumerate(subs):
                others = [{"not": subs[j]} for j in range(len(subs))
                          if j != i and not disjoint(flat[i], flat[j], self, within=rest)]
                branches.append(({"allOf": [sub] + others} if others else sub,
                                 f"{ptr}/oneOf/{i}"))
        else:
            branches = [(sub, f"{ptr}/anyOf/{i}") for i, sub in enumerate(subs)]
        if any(k in rest for k in _constraint_keys(rest)):
            branches = [(merge(rest, self._flatten(sub, bptr, frozenset()), bptr), bptr)
                        for sub, bptr in branches]
        return self._branches(branches, depth)

    def union(self, pieces: list[Piece]) -> Piece:
        """One piece accepting what any of ``pieces`` accepts (regular ones merged)."""
        pieces = [p for p in pieces if p is not None]
        if len(pieces) == 1:
            return pieces[0]
        regs = list(dict.fromkeys(p.pattern for p in pieces
                                  if isinstance(p, Regular) and not p.exclude))
        syms = list(dict.fromkeys(p.name for p in pieces if isinstance(p, Symbol)))
        syms += list(dict.fromkeys(self.b.symbol(p, "VALUE") for p in pieces
                                   if isinstance(p, Regular) and p.exclude))
        reg = None
        if regs:
            reg = Regular(regs[0] if len(regs) == 1 else "(?:" + "|".join(regs) + ")")
        if not syms:
            return reg
        alts = [(n,) for n in syms] + ([(self.b.symbol(reg, "VALUE"),)] if reg else [])
        if len(alts) == 1 and syms[0] in self.b.rules:
            return Symbol(syms[0])
        return Symbol(self.b.rule(alts, "union"))

    def _plain(self, s: dict, ptr: str, depth: int) -> Piece:
        """A schema without applicators at its top: one piece per type it allows."""
        for kw in ("$dynamicRef", "$recursiveRef"):
            if kw in s:
                self.refuse(f"{ptr}/{kw}", kw, f"{kw} cannot be enforced")
        s = dict(s)
        for kw in ("then", "else"):   # without "if" they have no effect
            s.pop(kw, None)
        if "enum" in s or "const" in s:
            return self._enum(s, ptr)
        nots, witnesses = algebra.atomic_not(s["not"]) if "not" in s else ([], [])
        types = type_set(s)
        types = set(_ALL_TYPES) if types is None else types
        if witnesses:          # non-objects satisfy every universal object keyword
            types &= {"object"}
        if s.get("multipleOf") == 1 and "number" in types:
            types = (types - {"number"}) | {"integer"}
        multiple = None
        if "multipleOf" in s and s["multipleOf"] != 1 and types & {"number", "integer"}:
            multiple = multiple_pattern(s["multipleOf"], self._fraction)
            if multiple is None:
                self.refuse(ptr + "/multipleOf", "multipleOf",
                            "multipleOf is enforced for small integer divisors only")
        if nots:
            for t in ("null", "boolean", "string", "array", "object"):
                if any(holds_for_all(self, body, t) for body in nots):
                    types.discard(t)
            numeric = "number" if "number" in types else "integer"
            if any(holds_for_all(self, body, numeric) for body in nots):
                types -= {"number", "integer"}
        pieces: list[Piece] = []
        if "null" in types:
            pieces.append(Regular("null"))
        if "boolean" in types:
            kept = [v for v in (True, False)
                    if not any(self.validates(v, body) for body in nots)]
            pieces.append(self._literals(kept))
        if multiple is not None and types & {"number", "integer"}:
            pieces += [Regular(multiple, tuple(dict.fromkeys(outside(*bounds(s)) + excl)))
                       for excl in number_exclusions(self, nots, ptr + "/not")]
        elif "number" in types or "integer" in types:
            lo, lo_x, hi, hi_x = bounds(s)
            if "number" in types:
                pat = number_pattern(lo, lo_x, hi, hi_x)
            else:
                pat = integer_pattern(lo, lo_x, hi, hi_x, self._fraction)
            if pat is not None:
                pieces += [Regular(pat, excl)
                           for excl in number_exclusions(self, nots, ptr + "/not")]
        if "string" in types:
            self._check_format(s, ptr)
            long = self._long_string(s, nots)
            language = None if long else string_language(s, ptr, self.opts, self.refuse)
            if long:
                pieces.append(chunked_string(self, *long))
                self._long_strings += 1
            elif language is not None:
                pat, exclude = language
                pieces += [Regular(pat, tuple(dict.fromkeys(exclude + excl)))
                           for excl in string_exclusions(self, nots, ptr + "/not")]
        if "array" in types:
            pieces.append(array_piece(self, s, ptr, depth))
        if "object" in types:
            pieces.append(object_piece(self, s, ptr, depth, tuple(witnesses)))
        return self.union(pieces)

    def _long_string(self, s: dict, nots: list) -> tuple[int, int | None] | None:
        """(minLength, maxLength) of a plain string whose bounds exceed max_string_length:
        written in chunks (long_strings) instead of one counted terminal."""
        lo = int(s.get("minLength", 0) or 0)
        hi = s.get("maxLength")
        hi = None if hi is None else int(hi)
        limit = self.opts.max_string_length
        if not (bounds_past(lo, hi, limit) or hi is None and self.chunk_strings):
            return None
        fmt = s.get("format")
        if "pattern" in s or isinstance(fmt, str) and format_body(fmt) is not None:
            return None
        if any(scalar_not.applies(body, "string") for body in nots):
            return None
        return lo, hi

    def _check_format(self, s: dict, ptr: str) -> None:
        """A format the converter does not enforce is an annotation (listed), or refused
        with ``strict_formats``."""
        fmt = s.get("format")
        if not isinstance(fmt, str) or format_body(fmt) is not None:
            return
        if self.opts.strict_formats:
            self.refuse(ptr + "/format", "format", f"format {fmt!r} is not enforced")
        elif (ptr or "#", fmt) not in self.format_annotations:
            self.format_annotations.append((ptr or "#", fmt))

    @property
    def _fraction(self) -> str:
        """The zeros an integer's optional fraction may have (integer_spelling)."""
        if self.opts.integer_spelling == "literal":
            return ""
        return f"{{1,{self.opts.max_fraction_zeros}}}"

    def _enum(self, s: dict, ptr: str) -> Piece:
        values = [s["const"]] if "const" in s else list(s.get("enum") or [])
        rest = {k: v for k, v in s.items() if k not in ("enum", "const")}
        check = any(k in rest for k in _constraint_keys(rest))
        return self._literals([v for v in values if not check or self.validates(v, rest)])

    def _literals(self, kept: list) -> Piece:
        pats = list(dict.fromkeys(self._literal(v) for v in kept))
        if not pats:
            return None
        return Regular(pats[0] if len(pats) == 1 else "(?:" + "|".join(pats) + ")")

    def _literal(self, v) -> str:
        if isinstance(v, str):
            return literal_string(v)
        if isinstance(v, bool) or v is None:
            return json.dumps(v)
        if isinstance(v, (int, float)):
            if float(v).is_integer():
                return re.escape(str(int(v))) + r"(?:\.0+)?"
            return re.escape(repr(v))
        if self.opts.whitespace == "compact":
            seps = self.opts.separators or (",", ":")
        else:
            seps = (", ", ": ")
        return re.escape(json.dumps(v, separators=seps))

    def any_value(self, depth: int) -> Piece:
        """Any JSON value (the empty schema)."""
        key = (depth, self.chunk_strings)
        if key not in self._any:
            b, lay = self.b, self.layout
            name = b.reserve("json")
            self._any[key] = name
            inner = self.value(True, "", depth + 1)
            inner_sym = b.symbol(inner)
            string = b.terminal(ANY_STRING, "STRING")
            sep, ksep = lay.item_sep(depth), lay.key_sep()
            kv = (string,) + ksep + (inner_sym,)
            members = b.reserve("json_members")
            b.define(members, [kv, kv + sep + (members,)])
            values = b.reserve("json_items")
            b.define(values, [(inner_sym,), (inner_sym,) + sep + (values,)])
            value = b.symbol(chunked_string(self, 0, None)) if self.chunk_strings else string
            b.define(name, [(value,), (b.terminal(NUMBER, "NUMBER"),),
                            (b.terminal("true|false|null", "LITERAL"),),
                            lay.open("{", depth) + (members,) + lay.close("}", depth),
                            lay.empty("{}", depth),
                            lay.open("[", depth) + (values,) + lay.close("]", depth),
                            lay.empty("[]", depth)])
        return Symbol(self._any[key])


def _constraint_keys(s: dict):
    return [k for k in s if k not in ANNOTATIONS and k != "$ref"]


@lru_cache(maxsize=1)
def _validator_class():
    """The jsonschema validator class the converter checks instances with (made once per
    process: making a validator class costs about a millisecond)."""
    try:
        import jsonschema
        from jsonschema.exceptions import ValidationError
    except ImportError as e:  # pragma: no cover - jsonschema is a dependency
        raise ImportError("the JSON Schema front-end needs the jsonschema package "
                          "(pip install jsonschema)") from e

    def enum(validator, enums, instance, schema):
        # the package compares against every value: N values checked against their own
        # enum would cost N * N comparisons
        if not isinstance(enums, list) or not enum_contains(enums, instance):
            yield ValidationError("the value is not one of the enum's values")

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"enum": enum})
