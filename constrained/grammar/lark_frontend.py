"""Lark front-end: a Lark grammar file becomes the grammar representation.

Lark itself reads the file (so %import, templates, EBNF operators and ``?rule`` inlining mean
exactly what they mean to Lark); this module then takes Lark's expanded rules, its terminal
definitions and its %ignore list, and rewrites every terminal pattern into flag-free syntax the
regex layer accepts. The language is what Lark's Earley parser accepts for the same file.

Before Lark runs, ``_lark_scan`` measures the text (and every file it imports) in one linear
pass and refuses what Lark would expand without bound or recurse too deeply over; Lark's errors
are reworded in the user's terms and placed at a line and column of the user's text.
"""
from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from lark.exceptions import LarkError, UnexpectedToken, VisitError
from lark.grammar import Symbol
from lark.lexer import PatternStr
from lark.load_grammar import load_grammar
from lark.tree import Tree

from ..errors import ConstrainedError, EmptyLanguageError, GrammarError, LimitExceededError
from ._analysis import check_defined, check_size, clean_rules, empty_language_at
from ._grammar import Terminal
from ._lark_reader import prepare_lark_reader
from ._lark_scan import LarkScan, where
from ._regex_translate import escape_literal, to_interegular
from ._token_refs import replace_lark_token_refs

_WHERE = re.compile(r"line (\d+),? col(?:umn)? (\d+)")

# Patterns of Lark's bundled grammars that use lookbehind, with exact regular equivalents of the
# tokens Lark's matcher produces for them (common.ESCAPED_STRING: a double-quoted string on one
# line whose closing quote is not escaped by an odd number of backslashes).
_KNOWN_PATTERNS = {
    r'".*?(?<!\\)(\\\\)*?"': r'"(?:[^"\\\n]|\\[^\n])*"',
}


def grammar_from_lark(cls, text: str, start: str = "start", *,
                      import_paths: Iterable[str] = (), path: str | None = None,
                      allow_outside_imports: bool = False, max_rules: int = 100_000,
                      max_grammar_bytes: int = 4_000_000):
    """See ``Grammar.from_lark``."""
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be a str, not {type(text).__name__}")
    if isinstance(import_paths, (str, os.PathLike)):
        import_paths = [import_paths]
    import_paths = [os.fspath(p) if isinstance(p, os.PathLike) else p for p in import_paths]
    limits = _Limits(max_rules, max_grammar_bytes)
    limits.check(text)
    source, refs = text, {}
    text, refs = replace_lark_token_refs(text)
    with _collector_paused():
        parser = _load(text, start, import_paths, path, allow_outside_imports, limits)
    terminals = {str(t.name): (Terminal(str(t.name), refs[t.name].text, tokens=refs[t.name])
                               if t.name in refs else _terminal(t, text))
                 for t in parser.terminals}
    rules: dict[str, list[tuple[str, ...]]] = {}
    for rule in parser.rules:
        expansion = []
        for sym in rule.expansion:
            if sym.is_term and sym.name not in terminals:
                raise GrammarError(f"terminal {sym.name} is %declare'd without a definition; "
                                   "declared terminals need a lexer callback, which is not "
                                   "supported")
            expansion.append(str(sym.name))
        rules.setdefault(str(rule.origin.name), []).append(tuple(expansion))
    frozen = {name: tuple(alts) for name, alts in rules.items()}
    ignore = tuple(str(n) for n in parser.ignore_tokens)
    for name in ignore:
        if name not in terminals:
            raise GrammarError(f"%ignore names {name}, which is not a defined terminal")
    check_defined(frozen, terminals, start)
    try:
        frozen, kept_terms, _ = clean_rules(frozen, terminals, start, ignore)
    except EmptyLanguageError:
        raise empty_language_at(text, start, r"^[ \t]*[?!]?({name})\b[ \t]*(?:\.-?\d+)?[ \t]*:") \
            from None
    return cls(start=start, rules=frozen, terminals=kept_terms, ignore=ignore, source="lark",
               text=source)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pauses Python's cyclic garbage collector while Lark reads a grammar: its reader
    allocates a dozen trees and tokens per rule, which would trigger repeated full collections
    (a third of the reading time, more in a process holding a large heap)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class _Limits:
    """What a Lark text (and each grammar file it imports) may hold before Lark reads it."""

    max_rules: int
    max_grammar_bytes: int

    def check(self, text: str, source: str = "") -> None:
        check_size(text, self.max_grammar_bytes, source or "the Lark grammar text")
        LarkScan(text, self.max_rules, source).check()


def _load(text: str, start: str, import_paths: list[str], path: str | None,
          allow_outside: bool, limits: _Limits) -> "_Loaded":
    prepare_lark_reader()
    kwargs = {}
    if path is not None:
        kwargs["source_path"] = os.path.abspath(path)
    loader = _import_guard(import_paths, path, allow_outside, limits)
    try:
        # Lark's own loader and EBNF-to-BNF compilation, without building its parser (whose
        # grammar analysis grows faster than linearly with the number of rules)
        built, _ = load_grammar(text, kwargs.get("source_path", "<string>"),
                                [loader, *import_paths], False)
        _keep_reachable(built, start)
        terminals, rules, ignore = built.compile([start], set())
        bad = _regex_error(terminals, text)
        if bad is not None:
            raise bad
        return _Loaded(terminals, rules, ignore)
    except ConstrainedError:
        raise
    except VisitError as e:     # an error inside one of Lark's tree transformers
        raise _from_lark(e.orig_exc, text) from None
    except LarkError as e:
        raise _as_grammar_error(e, text) from None
    except RecursionError:
        raise _too_deep() from None
    except FileNotFoundError as e:
        raise GrammarError(f"%import failed: grammar file {e.filename!r} not found") from None
    except Exception as e:  # re.error, the `regex` module's error, or an assertion
        bad = _invalid_terminal(text, start, [loader, *import_paths], kwargs.get("source_path"))
        if bad is not None:
            raise bad from None
        raise GrammarError(f"cannot load the Lark grammar: {_capped(f'{type(e).__name__}: {e}')}"
                           ) from None


def _from_lark(e: BaseException, text: str) -> ConstrainedError:
    """The error for an exception Lark raised inside a transformer."""
    if isinstance(e, ConstrainedError):
        return e
    if isinstance(e, RecursionError):
        return _too_deep()
    if isinstance(e, LarkError):
        return _as_grammar_error(e, text)
    return GrammarError(f"cannot load the Lark grammar: {_capped(f'{type(e).__name__}: {e}')}")


def _too_deep() -> LimitExceededError:
    return LimitExceededError("the Lark grammar nests too deeply for Lark's reader (groups, "
                              "template arguments or terminal references inside one another)")


def _keep_reachable(built, start: str) -> None:
    """Drop rule definitions unreachable from ``start`` before Lark compiles them: its own
    pruning removes one level of unused rules per pass over all rules."""
    defs = {d[0]: d for d in built.rule_defs}
    reached, todo = {start}, [start]
    while todo:
        d = defs.get(todo.pop())
        if d is None or d[2] is None:
            continue
        for sym in _symbols_of(d[2]):
            if sym in defs and sym not in reached:
                reached.add(sym)
                todo.append(sym)
    built.rule_defs = [d for d in built.rule_defs if d[0] in reached]


def _symbols_of(tree) -> set[str]:
    """Names of the symbols a rule tree uses, walked without recursion."""
    out, todo = set(), [tree]
    while todo:
        node = todo.pop()
        for child in node.children:
            if isinstance(child, Tree):
                todo.append(child)
            elif isinstance(child, Symbol):
                out.add(child.name)
    return out


@dataclass
class _Loaded:
    """What the front-end reads of a loaded Lark grammar (the fields of a lark.Lark object)."""

    terminals: list
    rules: list
    ignore_tokens: list


def _invalid_terminal(text: str, start: str, import_paths: list,
                      source: str | None) -> GrammarError | None:
    """After Lark failed: the error for the first terminal whose regex does not compile."""
    try:
        built, _ = load_grammar(text, source or "<string>", import_paths, False)
        _keep_reachable(built, start)
        terminals, _, _ = built.compile([start], set())
    except Exception:
        return None
    return _regex_error(terminals, text)


def _regex_error(terminals, text: str) -> GrammarError | None:
    """The error for the first terminal whose regex does not compile (None if all do), placed
    at the regex literal or the terminal's definition."""
    for t in terminals:
        try:
            re.compile(t.pattern.to_regexp())
        except (re.error, RecursionError, OverflowError) as e:
            raw = getattr(t.pattern, "raw", None)
            place = (where(text, text.index(raw)) if raw and raw in text
                     else _definition(text, t.name)) or (None, None)
            return GrammarError(f"terminal {t.name}: invalid regular expression "
                                f"{_capped(repr(t.pattern.value), 80)}: {e}",
                                line=place[0], column=place[1])
    return None


def _as_grammar_error(e: LarkError, text: str) -> GrammarError:
    """A GrammarError for what Lark reported, placed in the user's text, in the user's terms."""
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    if isinstance(e, UnexpectedToken):
        message = _unexpected(e)
    else:
        msg = str(e).strip()
        m = _WHERE.search(msg)
        if line is None and m:
            line, column = int(m.group(1)), int(m.group(2))
        first = msg.splitlines()[0] if msg else type(e).__name__
        first = re.sub(r",?\s*at line \d+,? col(?:umn)? \d+.*$", "", first).rstrip(" ,:")
        message, place = _reworded(first, msg, text, line, column)
        if line is None and place is not None:
            line, column = place
    if line is not None and line < 1:           # Lark's position of the end of the text
        line, column = where(text, len(text))
    return GrammarError(f"Lark grammar error: {_capped(message)}", line=line, column=column)


def _capped(message: str, limit: int = 200) -> str:
    """``message`` without Lark's object reprs, cut to ``limit`` characters."""
    message = _REPRS.sub(lambda m: repr(m.group(m.lastindex)), message)
    return message if len(message) <= limit else message[:limit - 3] + "..."


# Lark's messages: object reprs, and what locates the definition or use a message is about
_REPRS = re.compile(r"(?:NonTerminal|Terminal)\('([^']*)'[^)]*\)|Token\('\w+', '([^']*)'\)")
_UNDEFINED = re.compile(r"(Rule|Terminal|Template) '(\w+)' used but not defined"
                        r"( \(in \w+ \w+\))?")
_TWICE = re.compile(r"Rules defined twice:\s*\*\s*<(\w+) :")
_DEFINED_TWICE = re.compile(r"'(\w+)' defined more than once")
_LITERAL = re.compile(r"\((\"[^\"]*\"i?)\)")
_NAMED = [re.compile(r"\(in (?:rule|terminal) (\w+)\)"),   # the definition a message is about
          re.compile(r"(?:[Tt]erminal|[Rr]ule) '?(\w+)"),
          re.compile(r" in (\w+)\)"), re.compile(r"\((\w+)\)$")]

# the meta-grammar's terminals, as a user of Lark's syntax knows them
_META = {"_NL": "end of line", "$END": "end of text", "_NL_OR": "'|' on a new line",
         "RULE": "a rule name", "TERMINAL": "a terminal name", "STRING": "a string",
         "REGEXP": "a regular expression", "NUMBER": "a number", "OP": "an operator (?, *, +)",
         "RULE_MODIFIERS": "a rule modifier (?, !)", "_LPAR": "'('", "_RPAR": "')'",
         "_LBRA": "'['", "_RBRA": "']'", "_LBRACE": "'{'", "_RBRACE": "'}'", "_COLON": "':'",
         "_COMMA": "','", "_OR": "'|'", "_DOT": "'.'", "_DOTDOT": "'..'", "TILDE": "'~'",
         "_TO": "'->'", "_IGNORE": "%ignore", "_OVERRIDE": "%override", "_IMPORT": "%import",
         "_DECLARE": "%declare", "_EXTEND": "%extend"}


def _unexpected(e: UnexpectedToken) -> str:
    token = e.token
    kind = getattr(token, "type", "")
    found = _META[kind] if kind in ("_NL", "$END") or not str(token) else repr(str(token)[:40])
    expected = sorted({_META.get(x, x.lower()) for x in (e.expected or ())})
    more = f"; expected {' or '.join(expected[:6])}" if expected else ""
    return f"unexpected {found}{more}"


def _reworded(first: str, full: str, text: str, line, column) -> tuple[str, tuple | None]:
    """Lark's message in the user's terms, and where it points when Lark did not say."""
    if first.startswith("Unexpected input") and line is not None:
        return _unexpected_input(text, line, column), None
    m = _UNDEFINED.search(first)
    if m:
        kind, name, container = m.group(1), m.group(2), m.group(3) or ""
        if kind != "Template":     # Lark names the kind of the definition using it
            kind = "Terminal" if name.lstrip("_")[:1].isupper() else "Rule"
        return f"{kind} {name!r} used but not defined{container}", _first_use(text, name)
    m = _TWICE.search(full)
    if m:
        name = m.group(1)
        return (f"rule {name!r} has the same alternative twice (expanding [] or ? can "
                "create duplicates)", _definition(text, name))
    m = _DEFINED_TWICE.search(first)
    if m:
        return first, _definition(text, m.group(1), 2)
    m = _LITERAL.search(first)
    if m and m.group(1) in text:
        return first, where(text, text.index(m.group(1)))
    for pattern in _NAMED:
        m = pattern.search(first)
        if m:
            return first, _definition(text, m.group(1))
    return first, None


def _unexpected_input(text: str, line: int, column: int) -> str:
    lines = text.split("\n", line)
    c = lines[line - 1][column - 1:column] if 0 < line <= len(lines) and column else ""
    if c == '"':
        return "unterminated string literal (strings end on the line they start)"
    if c == "/":
        return "unterminated regular expression"
    return f"unexpected character {c!r}" if c else "unexpected input"


def _definition(text: str, name: str, nth: int = 1) -> tuple[int, int] | None:
    """Line and column of the ``nth`` definition of rule or terminal ``name``."""
    head = re.compile(rf"^[ \t]*(?:%(?:override|extend)[ \t]+)?[?!]*({re.escape(name)})"
                      r"(?![\w])[^:\n]*:", re.M)
    for k, m in enumerate(head.finditer(text), 1):
        if k == nth:
            return where(text, m.start(1))
    return None


_LITERALS = re.compile(r'"(?:[^"\\\n]|\\.)*"i?|/(?:[^/\\\n]|\\.)+/[imslux]*|//[^\n]*')


def _first_use(text: str, name: str) -> tuple[int, int] | None:
    """Line and column of the first use of ``name`` outside literals, regexes and comments."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    for number, line in enumerate(text.splitlines(), 1):
        blanked = _LITERALS.sub(lambda m: " " * len(m.group(0)), line)
        m = word.search(blanked)
        if m and not blanked[m.end():].lstrip().startswith((":", ".")):
            return number, m.start() + 1
    return None


def _import_guard(import_paths: list[str], path: str | None, allow_outside: bool,
                  limits: _Limits) -> Callable:
    """A Lark import loader refusing files outside the grammar's folder and ``import_paths``.

    Library imports (``%import common.X``) not found in ``import_paths`` fall through to Lark's
    bundled grammars. Relative imports of a grammar given as text (no ``path``) are refused
    unless ``allow_outside`` is set, since Lark would resolve them against the current
    script or working directory.
    """
    roots = [os.path.realpath(p) for p in import_paths if isinstance(p, str)]
    if path is not None:
        roots.append(os.path.realpath(os.path.dirname(os.path.abspath(path))))

    def inside(candidate: str) -> bool:
        real = os.path.realpath(candidate)
        return any(real == r or real.startswith(r + os.sep) for r in roots)

    def loader(base_path, grammar_path: str):
        if base_path is None:
            raise IOError("library import: let Lark search import_paths and its own grammars")
        if not isinstance(base_path, str):
            raise IOError("package resource: handled by Lark")
        candidate = os.path.join(base_path, grammar_path)
        if not allow_outside and not inside(candidate):
            raise GrammarError(f"%import of {candidate!r} refused: it is outside the grammar's "
                               "folder and import_paths (pass allow_outside_imports=True)")
        with open(candidate, encoding="utf8") as f:
            text = f.read()
        limits.check(text, f"imported grammar {candidate!r}")
        return candidate, text

    return loader


def _terminal(tdef, text: str) -> Terminal:
    pat = tdef.pattern
    flags = frozenset(getattr(pat, "flags", ()) or ())
    if isinstance(pat, PatternStr):
        source = escape_literal(pat.value)
    else:
        source = _KNOWN_PATTERNS.get(pat.value, pat.value)
    regex = to_interegular(source, flags, name=tdef.name, unicode=True)
    if re.fullmatch(regex, ""):   # the rewritten pattern is valid Python ``re`` syntax too
        raw = getattr(pat, "raw", None)
        place = (where(text, text.index(raw)) if raw and raw in text
                 else _definition(text, tdef.name)) or (None, None)
        raise GrammarError(f"terminal {tdef.name} matches the empty string; terminals must "
                           "match at least one character", line=place[0], column=place[1])
    return Terminal(str(tdef.name), regex, int(tdef.priority or 0))
