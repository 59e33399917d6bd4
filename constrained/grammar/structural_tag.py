"""Structural tags: a JSON spec of free text, tagged regions, tool calls and choices -> Grammar.

A spec is ``{"type": "structural_tag", "format": F}`` or ``F`` itself, where ``F`` is one of
(type names as in XGrammar's structural tags, so specs carry over):

- ``{"type": "const_string", "value": "..."}``: exactly that text;
- ``{"type": "token", "token": "<think>"}`` (or an id): one special token;
- ``{"type": "any_text", "excludes": [...]}``: free text; it runs up to what follows it (a
  tag's end, the next literal or tag of a sequence), which it never contains, or to the end of
  the output; it never contains a special token, nor one of ``excludes`` (at the end only);
- ``{"type": "json_schema", "json_schema": {...}, "options": {...}}``: a JSON value valid
  under the schema (JSON Schema options, ``strict_properties`` on by default);
- ``{"type": "regex", "pattern": "..."}``; ``{"type": "grammar", "lark"|"gbnf": "..."}``
  (``"grammar": text`` alone is GBNF, as XGrammar's EBNF);
- ``{"type": "sequence", "elements": [F, ...]}``; ``{"type": "or", "elements": [F, ...]}``;
- ``{"type": "tag", "begin": "...", "content": F, "end": "...", "max_tokens": N}``;
  ``max_tokens`` (a token budget) is for a free-text tag that opens the output, a reasoning
  block: at most N tokens from the start until its end is written, enforced exactly by the
  decode loop (``generate(reasoning_budget=N)`` builds such a tag);
- ``{"type": "triggered_tags", "triggers": ["...", {"regex": "..."}], "tags": [tag, ...],
  "at_least_one": false, "stop_after_first": false}``: free text until a trigger, then one of
  the tags whose begin starts with that trigger, then free text again; free text never
  contains a trigger. A regex trigger fires where its first match ends; its tags say
  ``"begin": {"regex": "..."}`` (the same pattern: the begin is the text it matched);
- ``{"type": "tags_with_separator", "tags": [tag, ...], "separator": "...", "at_least_one":
  false, "stop_after_first": false}``.

With a vocabulary, a literal (const_string, begin, end, trigger, separator) that contains the
text of one of its special tokens means that token there (as a tokenizer encodes text):
Qwen3's ``<tool_call>`` is then the token 151657, never the text spelled in pieces. Errors are
GrammarError with the JSON pointer of the offending part.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..errors import GrammarError, LimitExceededError
from ._analysis import check_defined
from ._grammar import Grammar, RegionBudget, Terminal, TokenRef
from ._regex_translate import escape_literal
from .json_schema.open_keys import may_repeat_keys

_ANY = r"[\s\S]"

_FORMATS = {"const_string", "token", "any_text", "json_schema", "regex", "grammar",
            "sequence", "or", "tag", "triggered_tags", "tags_with_separator"}
MAX_ELEMENTS = 100_000
MAX_DEPTH = 100


def structural_tag_to_grammar(spec: Any, vocab=None) -> Grammar:
    """The grammar of a structural tag spec (dict or JSON text); see the module docstring."""
    if isinstance(spec, (str, bytes)):
        try:
            spec = json.loads(spec)
        except ValueError as e:
            raise GrammarError(f"the structural tag is not JSON: {e}") from None
        except RecursionError:
            raise LimitExceededError("the structural tag nests deeper than JSON parsing "
                                     "allows") from None
    pointer = ""
    if isinstance(spec, dict) and spec.get("type") == "structural_tag":
        _keys(spec, {"type", "format"}, "")
        spec, pointer = spec.get("format"), "/format"
    builder = GrammarBuilder(vocab)
    budget = _leading_budget(spec, pointer)
    if budget is not None:
        budget = replace(budget, end_is_token=builder.end_is_token(budget.end, pointer))
    top = builder.element(spec, pointer)
    builder.rules["start"] = (tuple(top),)
    rules = {k: tuple(v) for k, v in builder.rules.items()}
    # embedded grammars come clean from their front-ends and every rule built here derives
    # text, so only definitions need checking (a cleaning pass costs ~1 ms per tool)
    check_defined(rules, builder.terminals, "start")
    return Grammar(start="start", rules=rules, terminals=builder.terminals,
                   ignore=tuple(builder.ignore), source="structural_tag",
                   text=json.dumps(spec, sort_keys=True)[:100_000],
                   max_ignored_whitespace=builder.max_ignored_whitespace,
                   budgets=(budget,) if budget is not None else ())


def _leading_budget(spec: Any, pointer: str) -> RegionBudget | None:
    """The budget of a free-text tag that opens the output (the first element of a sequence,
    or the whole spec), checked; budgets elsewhere raise GrammarError."""
    first, where = spec, pointer
    while isinstance(first, dict) and first.get("type") == "sequence" \
            and isinstance(first.get("elements"), list) and first["elements"]:
        first, where = first["elements"][0], f"{where}/elements/0"
    budget = None
    if isinstance(first, dict) and first.get("type") == "tag" and "max_tokens" in first:
        n = first["max_tokens"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise GrammarError("'max_tokens' must be a positive integer",
                               pointer=f"{where}/max_tokens")
        content = first.get("content")
        if not (isinstance(content, dict) and content.get("type") == "any_text"
                and isinstance(first.get("begin"), str) and isinstance(first.get("end"), str)
                and first["end"]):
            raise GrammarError("'max_tokens' needs free text (any_text) between a begin and "
                               "a non-empty end", pointer=f"{where}/max_tokens")
        budget = RegionBudget(first["begin"], first["end"], n)
    todo = [(spec, pointer)]
    while todo:               # a budget anywhere else is refused, never ignored
        node, at = todo.pop()
        if isinstance(node, dict):
            if "max_tokens" in node and node is not first and node.get("type") == "tag":
                raise GrammarError("'max_tokens' is supported on a free-text tag that opens "
                                   "the output (a reasoning block) only", pointer=f"{at}/max_tokens")
            todo.extend((v, f"{at}/{k}") for k, v in node.items() if isinstance(v, (dict, list))
                        and k != "json_schema")
        elif isinstance(node, list):
            todo.extend((v, f"{at}/{i}") for i, v in enumerate(node))
    return budget


def _keys(obj: dict, allowed: set, pointer: str) -> None:
    extra = set(obj) - allowed
    if extra:
        raise GrammarError(f"unknown field(s) {', '.join(sorted(map(str, extra)))}; expected "
                           f"{', '.join(sorted(allowed))}", pointer=pointer or "/")


def _string(obj: dict, key: str, pointer: str, allow_empty: bool = True) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or (not allow_empty and not value):
        raise GrammarError(f"{key!r} must be a{'' if allow_empty else ' non-empty'} string",
                           pointer=f"{pointer}/{key}")
    return value


def _flag(obj: dict, key: str, pointer: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise GrammarError(f"{key!r} must be true or false", pointer=f"{pointer}/{key}")
    return value


class GrammarBuilder:
    """Collects rules and terminals; every element becomes a list of symbols."""

    def __init__(self, vocab) -> None:
        self.vocab = vocab
        self.rules: dict[str, list[tuple[str, ...]]] = {}
        self.terminals: dict[str, Terminal] = {}
        self.ignore: list[str] = []
        self.max_ignored_whitespace: int | None = None
        self._by_pattern: dict[tuple, str] = {}
        self._delimiters: dict[str, tuple] = {}
        self._count = 0
        self._special = None
        if vocab is not None and vocab.special_token_ids:
            texts = sorted((t.decode("utf-8", "replace") for t in vocab.special_ids_by_text
                            if t), key=len, reverse=True)
            self._special = re.compile("|".join(re.escape(t) for t in texts))

    # naming ---------------------------------------------------------------------------------
    def _new(self, kind: str) -> str:
        self._count += 1
        if self._count > MAX_ELEMENTS:
            raise GrammarError(f"the structural tag builds more than {MAX_ELEMENTS} symbols")
        return f"{kind}_{self._count}"

    def terminal(self, pattern: str, exclude: tuple[str, ...] = (), tokens=None) -> str:
        key = (pattern, exclude, tokens)
        name = self._by_pattern.get(key)
        if name is None:
            name = self._new("T")
            self.terminals[name] = Terminal(name, pattern, exclude=exclude, tokens=tokens)
            self._by_pattern[key] = name
        return name

    def rule(self, alternatives: list[list[str]], kind: str = "r") -> str:
        self._count += len(alternatives)
        name = self._new(kind)
        self.rules[name] = [tuple(a) for a in alternatives]
        return name

    # literals -------------------------------------------------------------------------------
    def pieces(self, text: str) -> list[tuple[str, bool]]:
        """``text`` cut into (piece, is a special token) in order."""
        if self._special is None or not text:
            return [(text, False)] if text else []
        out, last = [], 0
        for m in self._special.finditer(text):
            if m.start() > last:
                out.append((text[last:m.start()], False))
            out.append((m.group(0), True))
            last = m.end()
        if last < len(text):
            out.append((text[last:], False))
        return out

    def end_is_token(self, end: str, pointer: str) -> bool:
        """Whether a budgeted block's end is one special token (else it must be all text)."""
        parts = self.pieces(end)
        if len(parts) == 1 and parts[0][1]:
            return True
        if any(special for _, special in parts):
            raise GrammarError(f"a budgeted block's end {end!r} must be text or one special "
                               "token, not both", pointer=pointer)
        return False

    def literal(self, text: str) -> list[str]:
        return [self.token(p) if special else self.terminal(escape_literal(p))
                for p, special in self.pieces(text)]

    def token(self, text: str) -> str:
        return self.terminal(text, tokens=TokenRef(names=(text,)))

    def _delimiter(self, delim, pointer: str) -> tuple[str | None, str | None, list[str]]:
        """(regex of its leading text or None, its leading special token or None, symbols of
        the rest) of a delimiter: a string (a special token's text inside means that token)
        or ``{"regex": R}`` (the first match of R). Checked once per delimiter."""
        key = json.dumps(delim, sort_keys=True)
        found = self._delimiters.get(key)
        if found is None:
            found = self._delimiters[key] = self._read_delimiter(delim, pointer)
        return found

    def _read_delimiter(self, delim, pointer: str) -> tuple[str | None, str | None, list[str]]:
        if isinstance(delim, dict):
            pattern = delim.get("regex")
            if set(delim) != {"regex"} or not isinstance(pattern, str) or not pattern:
                raise GrammarError("a trigger is a string or {\"regex\": pattern}",
                                   pointer=pointer)
            try:
                Grammar.from_regex(pattern)
                empty = re.fullmatch(pattern, "") is not None
            except (GrammarError, re.error) as e:
                raise GrammarError(f"invalid trigger regex: {e}", pointer=pointer) from None
            if empty:
                raise GrammarError(f"the trigger regex {pattern!r} matches the empty string: "
                                   "it would fire before any text", pointer=pointer)
            return f"(?:{pattern})", None, []
        parts = self.pieces(delim)
        if not parts:
            raise GrammarError("free text must be followed by a non-empty delimiter",
                               pointer=pointer)
        rest = [self.token(p) if sp else self.terminal(escape_literal(p)) for p, sp in parts[1:]]
        head, special = parts[0]
        return (None, head, rest) if special else (escape_literal(head), None, rest)

    def _stop(self, delimiters: list, pointer: str) -> str:
        """A regex of the text delimiters' leading texts (free text must not hold them)."""
        return "|".join(sorted({d[0] for d in (self._delimiter(x, pointer) for x in delimiters)
                                if d[0]}))

    def text_terminal(self, stop: str = "") -> str:
        """A non-empty run of free text holding no match of ``stop`` (a regex; "": any)."""
        if not stop:
            return self.terminal(f"{_ANY}+")
        return self.terminal(f"{_ANY}+", exclude=(f"{_ANY}*(?:{stop}){_ANY}*",))

    def optional_text(self, stop: str = "", kind: str = "text") -> str:
        """A rule of free text (``text_terminal``) or nothing."""
        return self.rule([[self.text_terminal(stop)], []], kind)

    def free_text(self, until: list | None, pointer: str, forbid: list | None = None
                  ) -> list[str]:
        """Free text up to the first occurrence of one of ``until`` (that delimiter included;
        None: to the end of the output), never containing one of ``forbid`` (default
        ``until``) before it. Returns the symbols of text + delimiter."""
        if until is None:
            return [self.optional_text()]
        stop = self._stop([*until, *(forbid or ())], pointer)
        alternatives = []
        for delim in until:
            head, special, rest = self._delimiter(delim, pointer)
            if special is not None:
                # text (never a special token) and then the token: greedy lexing stops there
                alternatives.append([self.text_terminal(stop), self.token(special), *rest])
                alternatives.append([self.token(special), *rest])
            else:
                # one lexeme ending where the first match of any text delimiter ends
                until_head = self.terminal(f"{_ANY}*{head}",
                                           exclude=(f"{_ANY}*(?:{stop}){_ANY}+",))
                alternatives.append([until_head, *rest])
        return [self.rule(alternatives, "text")]

    # elements -------------------------------------------------------------------------------
    def element(self, spec: Any, pointer: str) -> list[str]:
        """Symbols of one element."""
        if pointer.count("/") > 2 * MAX_DEPTH:
            raise LimitExceededError(f"the structural tag nests deeper than {MAX_DEPTH} "
                                     f"elements (at {pointer[:200]}...)")
        if not isinstance(spec, dict):
            raise GrammarError("a structural tag element must be an object with a 'type'",
                               pointer=pointer or "/")
        kind = spec.get("type")
        if kind not in _FORMATS:
            raise GrammarError(f"unknown element type {kind!r}; expected one of "
                               f"{', '.join(sorted(_FORMATS))}", pointer=f"{pointer}/type")
        return getattr(self, f"_{kind}")(spec, pointer)

    def _const_string(self, spec, pointer):
        _keys(spec, {"type", "value"}, pointer)
        return self.literal(_string(spec, "value", pointer))

    def _token(self, spec, pointer):
        _keys(spec, {"type", "token"}, pointer)
        tok = spec.get("token")
        if isinstance(tok, bool) or not isinstance(tok, (str, int)):
            raise GrammarError("'token' must be a special token's text or id",
                               pointer=f"{pointer}/token")
        ref = TokenRef(ids=(tok,)) if isinstance(tok, int) else TokenRef(names=(tok,))
        return [self.terminal(ref.text, tokens=ref)]

    def _any_text(self, spec, pointer):
        _keys(spec, {"type", "excludes"}, pointer)
        excludes = spec.get("excludes", [])
        if not isinstance(excludes, list) or not all(isinstance(e, str) and e for e in excludes):
            raise GrammarError("'excludes' must be a list of non-empty strings",
                               pointer=f"{pointer}/excludes")
        # free text holds no special token, so only all-text excludes can occur in it
        texts = sorted({e for e in excludes if not any(s for _, s in self.pieces(e))})
        return [self.optional_text("|".join(escape_literal(t) for t in texts))]

    def _json_schema(self, spec, pointer):
        _keys(spec, {"type", "json_schema", "options"}, pointer)
        if "json_schema" not in spec:
            raise GrammarError("'json_schema' is missing", pointer=pointer)
        options = spec.get("options", {})
        if not isinstance(options, dict):
            raise GrammarError("'options' must be an object", pointer=f"{pointer}/options")
        options = {"strict_properties": True, **options}
        try:
            sub = Grammar.from_json_schema(spec["json_schema"], **options)
        except GrammarError as e:
            raise _nested(e, f"{pointer}/json_schema") from None
        except TypeError as e:
            raise GrammarError(str(e), pointer=f"{pointer}/options") from None
        if (sub.distinct_keys and may_repeat_keys(spec["json_schema"], options)) \
                or sub.distinct_arrays:
            raise GrammarError(
                "this schema needs its keys or items checked for repeats (additionalProperties, "
                "patternProperties, uniqueItems or any-order properties), which embedded "
                "schemas do not support; give the object fixed properties",
                pointer=f"{pointer}/json_schema")
        return [self.embed(sub)]

    def _regex(self, spec, pointer):
        _keys(spec, {"type", "pattern"}, pointer)
        try:
            sub = Grammar.from_regex(_string(spec, "pattern", pointer))
        except GrammarError as e:
            raise _nested(e, f"{pointer}/pattern") from None
        return [self.embed(sub)]

    def _grammar(self, spec, pointer):
        _keys(spec, {"type", "grammar", "lark", "gbnf"}, pointer)
        given = [k for k in ("grammar", "lark", "gbnf") if k in spec]
        if len(given) != 1:
            raise GrammarError("give exactly one of 'lark', 'gbnf' or 'grammar' (GBNF)",
                               pointer=pointer)
        key = given[0]
        text = _string(spec, key, pointer, allow_empty=False)
        try:
            sub = Grammar.from_lark(text) if key == "lark" else Grammar.from_gbnf(text)
        except GrammarError as e:
            raise _nested(e, f"{pointer}/{key}") from None
        if sub.distinct_keys or sub.distinct_arrays:   # pragma: no cover - text grammars set neither
            raise GrammarError("embedded grammar needs distinct keys", pointer=pointer)
        return [self.embed(sub)]

    def _elements(self, spec, pointer) -> list:
        elements = spec.get("elements")
        if not isinstance(elements, list) or not elements:
            raise GrammarError("'elements' must be a non-empty list",
                               pointer=f"{pointer}/elements")
        return elements

    def _sequence(self, spec, pointer):
        return self.sequence(spec, pointer, None)[0]

    def sequence(self, spec, pointer, end: str | None) -> tuple[list[str], bool]:
        """(symbols, whether ``end`` was taken): free text as the last element runs up to
        ``end`` (a tag's end), which then belongs to it."""
        _keys(spec, {"type", "elements"}, pointer)
        elements = self._elements(spec, pointer)
        out: list[str] = []
        i = 0
        while i < len(elements):
            el, where = elements[i], f"{pointer}/elements/{i}"
            if isinstance(el, dict) and el.get("type") == "any_text":
                _keys(el, {"type"}, where)
                if i + 1 == len(elements):
                    out += self.free_text([end] if end else None, where)
                    return out, bool(end)
                delim, rest = self._leading_literal(elements[i + 1],
                                                    f"{pointer}/elements/{i + 1}")
                out += self.free_text([delim], where) + rest
                i += 2
                continue
            out += self.element(el, where)
            i += 1
        return out, False

    def _leading_literal(self, spec, pointer) -> tuple[str, list[str]]:
        """(its leading text, symbols of what comes after it) of an element that starts with
        a literal: what free text before it runs up to."""
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind == "const_string":
            _keys(spec, {"type", "value"}, pointer)
            return _string(spec, "value", pointer, allow_empty=False), []
        if kind == "tag":
            begin, content, end = self._tag_parts(spec, pointer)
            return begin, self._tag_body(content, end, pointer)
        raise GrammarError("free text (any_text) must be followed by a const_string or a tag, "
                           "or end the output", pointer=pointer)

    def _or(self, spec, pointer):
        _keys(spec, {"type", "elements"}, pointer)
        alts = [self.element(el, f"{pointer}/elements/{i}")
                for i, el in enumerate(self._elements(spec, pointer))]
        return [self.rule(alts, "or")]

    def _tag_parts(self, spec, pointer, regex_begin: bool = False):
        if not isinstance(spec, dict) or spec.get("type") != "tag":
            raise GrammarError("expected a tag ({'type': 'tag', 'begin', 'content', 'end'})",
                               pointer=pointer or "/")
        _keys(spec, {"type", "begin", "content", "end", "max_tokens"}, pointer)
        if "content" not in spec:
            raise GrammarError("'content' is missing", pointer=pointer)
        if regex_begin and isinstance(spec.get("begin"), dict):
            begin = spec["begin"]      # {"regex": R}: the text its trigger matched
        else:
            begin = _string(spec, "begin", pointer)
        return begin, spec["content"], _string(spec, "end", pointer)

    def _tag_body(self, content, end: str, pointer: str) -> list[str]:
        """Symbols of a tag's content and end."""
        where = f"{pointer}/content"
        if isinstance(content, dict) and content.get("type") == "any_text":
            _keys(content, {"type"}, where)
            if not end:
                return self.free_text(None, where)
            return self.free_text([end], where)
        if isinstance(content, dict) and content.get("type") == "sequence":
            body, taken = self.sequence(content, where, end)
            return body if taken else body + self.literal(end)
        return self.element(content, where) + self.literal(end)

    def _tag(self, spec, pointer):
        begin, content, end = self._tag_parts(spec, pointer)
        return self.literal(begin) + self._tag_body(content, end, pointer)

    def _tag_list(self, spec, pointer) -> list:
        tags = spec.get("tags")
        if not isinstance(tags, list) or not tags:
            raise GrammarError("'tags' must be a non-empty list of tags", pointer=f"{pointer}/tags")
        return tags

    def _triggered_tags(self, spec, pointer):
        _keys(spec, {"type", "triggers", "tags", "at_least_one", "stop_after_first"}, pointer)
        triggers = spec.get("triggers")
        if not isinstance(triggers, list) or not triggers or not all(
                (isinstance(t, str) and t) or isinstance(t, dict) for t in triggers):
            raise GrammarError("'triggers' must be a non-empty list of non-empty strings or "
                               "{\"regex\": pattern} objects", pointer=f"{pointer}/triggers")
        for j, t in enumerate(triggers):
            self._delimiter(t, f"{pointer}/triggers/{j}")      # checked, with its pointer
        texts = [t for t in triggers if isinstance(t, str)]
        for i, t in enumerate(triggers):
            for j, other in enumerate(triggers):
                if not (isinstance(t, str) and isinstance(other, str)) or i == j:
                    continue
                if t in other and (t != other or i < j):
                    raise GrammarError(
                        f"trigger {other!r} can never fire: free text ends at {t!r}, which it "
                        "contains" if t != other else f"trigger {t!r} is listed twice",
                        pointer=f"{pointer}/triggers/{j}")
        at_least_one = _flag(spec, "at_least_one", pointer)
        stop_after_first = _flag(spec, "stop_after_first", pointer)
        segments: list[list[str]] = []
        fired = set()
        for i, tag in enumerate(self._tag_list(spec, pointer)):
            where = f"{pointer}/tags/{i}"
            begin, content, end = self._tag_parts(tag, where, regex_begin=True)
            if isinstance(begin, dict):
                trigger = begin if begin in triggers else None
                after = ""
            else:
                trigger = next((t for t in texts if begin.startswith(t)), None)
                after = begin[len(trigger):] if trigger is not None else ""
            if trigger is None:
                raise GrammarError(f"the tag's begin {begin!r} starts with none of the triggers",
                                   pointer=f"{where}/begin")
            fired.add(json.dumps(trigger))
            head = self.free_text([trigger], where, forbid=triggers)
            segments.append(head + self.literal(after) + self._tag_body(content, end, where))
        for j, t in enumerate(triggers):
            if json.dumps(t) not in fired:
                raise GrammarError(f"trigger {t!r} starts no tag: it can never fire",
                                   pointer=f"{pointer}/triggers/{j}")
        segment = self.rule(segments, "segment")
        tail = self.optional_text(self._stop(triggers, pointer), "tail")
        if stop_after_first:
            alts = [[segment]] if at_least_one else [[segment], [tail]]
        else:
            loop = self.rule([[segment], []], "segments")
            self.rules[loop] = [(segment,), (segment, loop)] if at_least_one \
                else [(), (segment, loop)]
            alts = [[loop, tail]]
        return [self.rule(alts, "triggered")]

    def _tags_with_separator(self, spec, pointer):
        _keys(spec, {"type", "tags", "separator", "at_least_one", "stop_after_first"}, pointer)
        separator = _string(spec, "separator", pointer)
        at_least_one = _flag(spec, "at_least_one", pointer)
        stop_after_first = _flag(spec, "stop_after_first", pointer)
        choices = [self._tag(t, f"{pointer}/tags/{i}")
                   for i, t in enumerate(self._tag_list(spec, pointer))]
        one = self.rule(choices, "tag")
        if stop_after_first:
            return [one] if at_least_one else [self.rule([[one], []], "tags")]
        more = self.rule([[]], "more")
        self.rules[more] = [(), (more, *self.literal(separator), one)]
        some = self.rule([[one, more]], "tags")
        return [some] if at_least_one else [self.rule([[some], []], "tags")]

    # sub-grammars ---------------------------------------------------------------------------
    def embed(self, sub: Grammar) -> str:
        """Copies a front-end's grammar in under fresh names; returns its start symbol."""
        prefix = self._new("g") + "_"
        names = {n: prefix + n for n in [*sub.rules, *sub.terminals]}
        for name, alts in sub.rules.items():
            self.rules[names[name]] = [tuple(names[s] for s in alt) for alt in alts]
        for name, term in sub.terminals.items():
            self.terminals[names[name]] = replace(term, name=names[name])
        for name in sub.ignore:
            self.ignore.append(names[name])
        if sub.max_ignored_whitespace is not None:
            self.max_ignored_whitespace = min(self.max_ignored_whitespace or 1 << 30,
                                              sub.max_ignored_whitespace)
        return names[sub.start]


def _nested(e: GrammarError, pointer: str) -> GrammarError:
    inner = f"{pointer}{e.pointer}" if e.pointer and e.pointer.startswith("/") else pointer
    message = str(e)
    return GrammarError(message, line=e.line, column=e.column, pointer=inner)
