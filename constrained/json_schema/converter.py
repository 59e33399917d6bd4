"""JSON Schema -> Grammar: the recursive conversion of schemas into pieces and rules."""
from __future__ import annotations

import json
import re

from ..errors import GrammarError, UnsupportedSchemaError
from .arrays import array_piece
from .builder import GrammarBuilder, Piece, Regular, Symbol
from .chars import ANY_CHAR, literal_string
from .layout import Layout
from .merge import ANNOTATIONS, merge, type_set
from .numbers import NUMBER, integer_pattern, number_pattern
from .objects import object_piece
from .oneof import disjoint
from .options import SchemaOptions
from .refs import DEFAULT_BASE, SchemaIndex
from .strings import string_pattern

_ALL_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")
_REFUSED = ("not", "dependentSchemas", "dependencies", "$dynamicRef", "$recursiveRef")
_APPLICATORS = ("$ref", "allOf", "anyOf", "oneOf")


class Converter:
    """Holds the builder, the reference index and what lenient mode dropped."""

    def __init__(self, schema, opts: SchemaOptions) -> None:
        self.opts = opts
        self.index = SchemaIndex(schema)
        self.b = GrammarBuilder(opts.max_rules)
        self.layout = Layout(self.b, opts)
        self.dropped: list[tuple[str, str]] = []
        self._refs: dict[tuple[str, int], str] = {}
        self._any: dict[int, str] = {}
        self._validator = None

    def _make_validator(self):
        try:
            import jsonschema
            import referencing
            import referencing.jsonschema
        except ImportError as e:  # pragma: no cover - jsonschema is a dependency
            raise ImportError("the JSON Schema front-end needs the jsonschema package "
                              "(pip install jsonschema)") from e
        resource = referencing.jsonschema.DRAFT202012.create_resource(self.index.root)
        registry = referencing.Registry().with_resources(
            [(self.index.base, resource), (DEFAULT_BASE, resource)])
        return lambda schema: jsonschema.Draft202012Validator(schema, registry=registry)

    # -- errors -------------------------------------------------------------------------------
    def refuse(self, pointer: str, keyword: str, message: str) -> None:
        """Raise UnsupportedSchemaError, or in lenient mode record (pointer, keyword)."""
        if self.opts.lenient:
            self.dropped.append((pointer or "#", keyword))
            return
        raise UnsupportedSchemaError(message, pointer=pointer or "#", keyword=keyword)

    def validates(self, instance, schema) -> bool:
        """Whether ``instance`` is valid under ``schema`` (refs resolve against the root)."""
        if self._validator is None:
            self._validator = self._make_validator()
        try:
            return self._validator(schema).is_valid(instance)
        except Exception:  # noqa: BLE001 - an unusable schema fragment: be conservative
            return False

    # -- conversion ---------------------------------------------------------------------------
    def start(self) -> str:
        piece = self.value(self.index.root, "", 0)
        return self.b.define("start", [(self.b.symbol(piece, "VALUE"),)])

    def value(self, schema, ptr: str, depth: int) -> Piece:
        """The piece for instances of ``schema`` found at nesting ``depth``."""
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
        values = self._finite_values(schema, 0)
        if values is not None:  # a finite set: keep the values the whole schema accepts
            return self._literals([v for v in values if self.validates(v, schema)])
        s = self._flatten(schema, ptr, frozenset())
        if not isinstance(s, dict):
            return self.value(s, ptr, depth)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self._union_of(s, key, ptr, depth)
        return self._plain(s, ptr, depth)

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
            piece = self.value(target, tptr, depth)
            self.b.define(name, [(self.b.symbol(piece, "VALUE"),)])
        return Symbol(self._refs[key])

    def _flatten(self, s, ptr: str, seen: frozenset):
        """``s`` without $ref or allOf at its top: referenced and allOf schemas merged in."""
        if not isinstance(s, dict):
            return s
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
        rest = {k: v for k, v in s.items() if k != key}
        bare = not any(k in rest for k in _constraint_keys(rest))
        branches = []
        for i, sub in enumerate(s[key]):
            bptr = f"{ptr}/{key}/{i}"
            branches.append((sub if bare else merge(rest, self._flatten(sub, bptr, frozenset()),
                                                    bptr), bptr))
        if key == "oneOf":
            flat = [self._flatten(x, p, frozenset()) for x, p in branches]
            raw = [self._flatten(sub, f"{ptr}/oneOf/{i}", frozenset())
                   for i, sub in enumerate(s[key])]
            special = self._one_of_special(rest, raw, ptr)
            if special is not None:
                branches = special
            else:
                self._check_disjoint(flat, ptr)
        return self.union([self.value(x, p, depth) for x, p in branches])

    def _check_disjoint(self, flat: list, ptr: str) -> None:
        for i in range(len(flat)):
            for j in range(i + 1, len(flat)):
                if not disjoint(flat[i], flat[j], self):
                    self.refuse(f"{ptr}/oneOf", "oneOf", f"oneOf branches {i} and {j} may overlap")
                    return

    def _one_of_special(self, rest: dict, flat: list, ptr: str):
        """Exact forms of two common overlapping oneOfs: finite value sets (keep the values
        valid under exactly one branch) and branches that only list required properties
        (each branch also excludes the properties only the others require)."""
        if flat and all(isinstance(b, dict) and ("enum" in b or "const" in b) for b in flat):
            values = []
            for b in flat:
                values += [b["const"]] if "const" in b else list(b.get("enum") or [])
            keep = [v for v in values
                    if sum(self.validates(v, b) for b in flat) == 1]
            return [({**rest, "enum": keep}, ptr + "/oneOf")]
        if flat and all(isinstance(b, dict) and set(b) - ANNOTATIONS == {"required"}
                        for b in flat):
            reqs = [set(b["required"]) for b in flat]
            out = []
            for i, r in enumerate(reqs):
                others = [reqs[j] - r for j in range(len(reqs)) if j != i]
                if any(not o for o in others):
                    continue  # another branch holds whenever this one does
                if any(len(o) > 1 for o in others):
                    return None
                absent = set().union(*others) if others else set()
                extra = {"required": list(flat[i]["required"]),
                         "properties": {k: False for k in sorted(absent)}}
                out.append((merge(rest, extra, ptr), f"{ptr}/oneOf/{i}"))
            return out
        return None

    def union(self, pieces: list[Piece]) -> Piece:
        """One piece accepting what any of ``pieces`` accepts (regular ones merged)."""
        regs = list(dict.fromkeys(p.pattern for p in pieces if isinstance(p, Regular)))
        syms = list(dict.fromkeys(p.name for p in pieces if isinstance(p, Symbol)))
        reg = None
        if regs:
            reg = Regular(regs[0] if len(regs) == 1 else "(?:" + "|".join(regs) + ")")
        if not syms:
            return reg
        if reg is None and len(syms) == 1:
            return Symbol(syms[0])
        alts = [(n,) for n in syms] + ([(self.b.symbol(reg, "VALUE"),)] if reg else [])
        return Symbol(self.b.rule(alts, "union"))

    def _plain(self, s: dict, ptr: str, depth: int) -> Piece:
        s = self._not_types(s)
        for kw in _REFUSED:
            if kw in s:
                self.refuse(f"{ptr}/{kw}", kw, f"{kw} cannot be enforced")
        if s.get("dependentRequired"):
            self.refuse(ptr + "/dependentRequired", "dependentRequired",
                        "dependentRequired cannot be enforced")
        if "if" in s and ("then" in s or "else" in s):
            self.refuse(ptr + "/if", "if", "if/then/else cannot be enforced")
        s = dict(s)
        if ("unevaluatedProperties" in s or "unevaluatedItems" in s) and (
                s.get("__merged__") or "if" in s):
            kw = "unevaluatedProperties" if "unevaluatedProperties" in s else "unevaluatedItems"
            self.refuse(f"{ptr}/{kw}", kw, f"{kw} next to in-place applicators cannot be enforced")
            s.pop("unevaluatedProperties", None)
            s.pop("unevaluatedItems", None)
        if "unevaluatedProperties" in s:
            s.setdefault("additionalProperties", s.pop("unevaluatedProperties"))
        if "unevaluatedItems" in s:
            u = s.pop("unevaluatedItems")
            if "items" not in s or isinstance(s["items"], list):
                key = "additionalItems" if isinstance(s.get("items"), list) else "items"
                s.setdefault(key, u)
        if "enum" in s or "const" in s:
            return self._enum(s, ptr)
        types = type_set(s)
        types = set(_ALL_TYPES) if types is None else types
        if s.get("multipleOf") == 1 and "number" in types:
            types = (types - {"number"}) | {"integer"}
        if "multipleOf" in s and types & {"number", "integer"}:
            if not (s["multipleOf"] == 1 and "number" not in types):
                self.refuse(ptr + "/multipleOf", "multipleOf", "multipleOf cannot be enforced")
        pieces: list[Piece] = []
        if "null" in types:
            pieces.append(Regular("null"))
        if "boolean" in types:
            pieces.append(Regular("true|false"))
        if "number" in types or "integer" in types:
            lo, lo_x, hi, hi_x = _bounds(s)
            fn = number_pattern if "number" in types else integer_pattern
            pat = fn(lo, lo_x, hi, hi_x)
            if pat is not None:
                pieces.append(Regular(pat))
        if "string" in types:
            pat = string_pattern(s, ptr, self.opts, self.refuse)
            if pat is not None:
                pieces.append(Regular(pat))
        if "array" in types:
            pieces.append(array_piece(self, s, ptr, depth))
        if "object" in types:
            pieces.append(object_piece(self, s, ptr, depth))
        return self.union(pieces)

    @staticmethod
    def _not_types(s: dict) -> dict:
        """``not: {type: ...}`` becomes a smaller type set."""
        neg = s.get("not")
        if not (isinstance(neg, dict) and "type" in neg
                and not any(k in neg for k in _constraint_keys(neg) if k != "type")):
            return s
        gone = type_set(neg) or set()
        have = type_set(s) or set(_ALL_TYPES)
        if "integer" in gone and "number" in have and "number" not in gone:
            return s  # "number but not integer" has no type-level form
        s = {k: v for k, v in s.items() if k != "not"}
        s["type"] = [t for t in _ALL_TYPES if t in have and t not in gone and t != "integer"
                     or t == "integer" and t in have and t not in gone and "number" not in have]
        return s

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
        if depth not in self._any:
            b, lay = self.b, self.layout
            name = b.reserve("json")
            self._any[depth] = name
            inner = self.value(True, "", depth + 1)
            inner_sym = b.symbol(inner)
            string = b.terminal(f'"{ANY_CHAR}*"', "STRING")
            sep, ksep = lay.item_sep(depth), lay.key_sep()
            kv = (string,) + ksep + (inner_sym,)
            members = b.reserve("json_members")
            b.define(members, [kv, kv + sep + (members,)])
            values = b.reserve("json_items")
            b.define(values, [(inner_sym,), (inner_sym,) + sep + (values,)])
            b.define(name, [(string,), (b.terminal(NUMBER, "NUMBER"),),
                            (b.terminal("true|false|null", "LITERAL"),),
                            lay.open("{", depth) + (members,) + lay.close("}", depth),
                            lay.empty("{}", depth),
                            lay.open("[", depth) + (values,) + lay.close("]", depth),
                            lay.empty("[]", depth)])
        return Symbol(self._any[depth])


def _constraint_keys(s: dict):
    return [k for k in s if k not in ANNOTATIONS and k != "$ref"]


def _bounds(s: dict):
    lo, lo_x, hi, hi_x = None, False, None, False
    mn, mx = s.get("minimum"), s.get("maximum")
    emn, emx = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    if _num(mn):
        lo, lo_x = mn, emn is True
    if _num(emn) and (lo is None or emn >= lo):
        lo, lo_x = emn, True
    if _num(mx):
        hi, hi_x = mx, emx is True
    if _num(emx) and (hi is None or emx <= hi):
        hi, hi_x = emx, True
    return lo, lo_x, hi, hi_x


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
