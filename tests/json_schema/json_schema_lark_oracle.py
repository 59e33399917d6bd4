"""Test helper: a Grammar as Lark text, parsed by Lark's Earley parser (dynamic_complete).

Used to check the converter before and independently of the engine: Lark's complete dynamic
lexer tries every terminal match, the closest Lark setting to the regex-language semantics.
"""
from __future__ import annotations

import json

import lark
import regex


def keys_distinct(text: str) -> bool:
    """Whether no object of a JSON text repeats a key (what Grammar.distinct_keys adds to the
    rules); True for texts that are not JSON (the rules judge those)."""
    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise KeyError("duplicate")
        return dict(items)
    try:
        json.loads(text, object_pairs_hook=pairs)
    except KeyError:
        return False
    except ValueError:
        pass
    return True


def _lark_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            # Lark un-escapes "\\\\" once before compiling the regex
            out.append("\\\\\\\\" if pattern[i + 1] == "\\" else pattern[i:i + 2])
            i += 2
            continue
        out.append("\\/" if c == "/" else "\\n" if c == "\n" else c)
        i += 1
    return "/" + "".join(out) + "/"


def to_lark(g) -> str:
    """Lark grammar text for a Grammar (rules and terminals renamed for Lark's conventions)."""
    rn = {name: ("start" if name == g.start else f"r{i}") for i, name in enumerate(g.rules)}
    tn = {name: f"T{i}" for i, name in enumerate(g.terminals)}
    sym = {**rn, **tn}
    lines = []
    for name, alts in g.rules.items():
        body = " | ".join(" ".join(sym[s] for s in alt) for alt in alts)
        lines.append(f"{rn[name]}: {body}")
    for name, t in g.terminals.items():
        pattern = t.pattern
        if t.exclude:   # Lark's regexes take lookarounds: not a full match of any excluded one
            pattern = "(?!(?:" + "|".join(t.exclude) + r")\Z)(?:" + pattern + ")"
        lines.append(f"{tn[name]}: {_lark_regex(pattern)}")
    return "\n".join(lines) + "\n"


class LarkOracle:
    """accepts(text) with Lark's Earley parser and complete dynamic lexer.

    Caveat: Lark's dynamic lexer starts from Python's leftmost-first regex match, so it misses
    longer matches of later alternatives ("(?:[1-9]|[1-9][0-9])" never matches "12"); use
    EarleyOracle for exact regex-language semantics.
    """

    def __init__(self, g) -> None:
        self.distinct_keys = g.distinct_keys
        self.parser = lark.Lark(to_lark(g), parser="earley", lexer="dynamic_complete",
                                start="start")

    def accepts(self, text: str) -> bool:
        if self.distinct_keys and not keys_distinct(text):
            return False
        try:
            self.parser.parse(text)
            return True
        except lark.exceptions.LarkError:
            return False


class EarleyOracle:
    """accepts(text): an Earley recognizer over the grammar's rules whose scanner tries every
    end position of a terminal's full match (terminals are regular languages)."""

    def __init__(self, g) -> None:
        if g.distinct_arrays:
            raise NotImplementedError("the oracle does not know which arrays must hold distinct "
                                      "strings; judge with a matcher (engine_acceptor)")
        self.g = g
        self.terms = {n: regex.compile(t.pattern) for n, t in g.terminals.items()}
        # a terminal's full matches exclude those of its ``exclude`` patterns
        self.excluded = {n: [regex.compile(e) for e in t.exclude]
                         for n, t in g.terminals.items() if t.exclude}
        self.nullable = self._nullable()

    def _nullable(self) -> set:
        null: set = set()
        changed = True
        while changed:
            changed = False
            for name, alts in self.g.rules.items():
                if name not in null and any(all(s in null for s in a) for a in alts):
                    null.add(name)
                    changed = True
        return null

    def _ends(self, term: str, text: str, i: int):
        p = self.terms[term]
        excluded = self.excluded.get(term, ())
        for j in range(i + 1, len(text) + 1):
            if p.fullmatch(text, i, j):
                if not any(e.fullmatch(text, i, j) for e in excluded):
                    yield j
            elif p.match(text, i, j, partial=True) is None:
                return

    def accepts(self, text: str) -> bool:
        if self.g.distinct_keys and not keys_distinct(text):
            return False
        rules, n = self.g.rules, len(text)
        charts: list[set] = [set() for _ in range(n + 1)]
        agenda: list[list] = [[] for _ in range(n + 1)]

        def add(k, item):
            if item not in charts[k]:
                charts[k].add(item)
                agenda[k].append(item)

        for a in range(len(rules[self.g.start])):
            add(0, (self.g.start, a, 0, 0))
        ends_cache: dict = {}
        for k in range(n + 1):
            waiting: dict = {}
            done: set = set()
            queue = agenda[k]
            while queue:
                item = queue.pop()
                name, a, dot, origin = item
                alt = rules[name][a]
                if dot == len(alt):
                    done.add((name, origin))
                    if origin == k:
                        for w in list(waiting.get(name, ())):
                            add(k, (w[0], w[1], w[2] + 1, w[3]))
                    else:
                        for w in [x for x in charts[origin]
                                  if len(rules[x[0]][x[1]]) > x[2]
                                  and rules[x[0]][x[1]][x[2]] == name]:
                            add(k, (w[0], w[1], w[2] + 1, w[3]))
                    continue
                sym = alt[dot]
                if sym in rules:
                    waiting.setdefault(sym, []).append(item)
                    for b in range(len(rules[sym])):
                        add(k, (sym, b, 0, k))
                    if sym in self.nullable or (sym, k) in done:
                        add(k, (name, a, dot + 1, origin))
                else:
                    key = (sym, k)
                    if key not in ends_cache:
                        ends_cache[key] = list(self._ends(sym, text, k))
                    for j in ends_cache[key]:
                        add(j, (name, a, dot + 1, origin))
        return any(it[0] == self.g.start and it[3] == 0 and it[2] == len(rules[it[0]][it[1]])
                   for it in charts[n])


def _resolve(root, s, depth=0):
    if isinstance(s, dict) and isinstance(s.get("$ref"), str) and s["$ref"].startswith("#") \
            and depth < 20:
        target = root
        for part in s["$ref"][1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit():
                target = target[int(part)]
            else:
                return s
        return _resolve(root, target, depth + 1)
    return s


def _property_schemas(root, s, out, depth=0):
    """Declared properties in schema order, gathered through $ref/allOf/anyOf/oneOf."""
    if not isinstance(s, dict) or depth > 8:
        return out
    if "$ref" in s:
        _property_schemas(root, _resolve(root, {"$ref": s["$ref"]}), out, depth + 1)
    for name, sub in (s.get("properties") or {}).items():
        out.setdefault(name, []).append(sub)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key) or []:
            _property_schemas(root, sub, out, depth + 1)
    return out


def reorder(schema, data, root=None):
    """``data`` with object keys in the converter's order: declared properties in schema
    order first (recursively), other keys after them."""
    root = schema if root is None else root
    s = _resolve(root, schema)
    if isinstance(data, dict):
        props = _property_schemas(root, s, {})
        keys = [k for k in props if k in data] + [k for k in data if k not in props]
        out = {}
        for k in keys:
            subs = props.get(k, [])
            out[k] = reorder(subs[0], data[k], root) if len(subs) == 1 else data[k]
        return out
    if isinstance(data, list) and isinstance(s, dict):
        items = s.get("items")
        prefix = s.get("prefixItems") or (items if isinstance(items, list) else [])
        rest = items if isinstance(items, dict) else None
        return [reorder(prefix[i], v, root) if i < len(prefix)
                else reorder(rest, v, root) if rest is not None else v
                for i, v in enumerate(data)]
    return data


def engine_acceptor(g):
    """accepts(text) by the engine's matcher over a byte vocabulary, for grammars the oracles
    cannot judge alone (Grammar.distinct_arrays: which arrays those are is the parser's
    knowledge); the matcher itself is tested against brute force in tests/cfg."""
    from constrained import compile_grammar
    from constrained.vocabulary import Vocabulary
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"],
                                        eos_token_ids=[256])
    compiled = compile_grammar(g, vocab)

    class _Acceptor:
        @staticmethod
        def accepts(text: str) -> bool:
            m = compiled.matcher()
            return m.accept_string(text) and m.is_accepting()
    return _Acceptor()
