"""Lark front-end: a Lark grammar file becomes the grammar representation.

Lark itself reads the file (so %import, templates, EBNF operators and ``?rule`` inlining mean
exactly what they mean to Lark); this module then takes Lark's expanded rules, its terminal
definitions and its %ignore list, and rewrites every terminal pattern into flag-free syntax the
regex layer accepts. The language is what Lark's Earley parser accepts for the same file.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from lark.exceptions import LarkError
from lark.lexer import PatternStr
from lark.load_grammar import load_grammar

from ..errors import GrammarError
from ._analysis import check_defined, clean_rules
from ._grammar import Terminal
from ._regex_translate import escape_literal, to_interegular

_WHERE = re.compile(r"line (\d+),? col(?:umn)? (\d+)")

# Patterns of Lark's bundled grammars that use lookbehind, with exact regular equivalents of the
# tokens Lark's matcher produces for them (common.ESCAPED_STRING: a double-quoted string on one
# line whose closing quote is not escaped by an odd number of backslashes).
_KNOWN_PATTERNS = {
    r'".*?(?<!\\)(\\\\)*?"': r'"(?:[^"\\\n]|\\[^\n])*"',
}


def grammar_from_lark(cls, text: str, start: str = "start", *,
                      import_paths: Iterable[str] = (), path: str | None = None,
                      allow_outside_imports: bool = False):
    """See ``Grammar.from_lark``."""
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be a str, not {type(text).__name__}")
    if isinstance(import_paths, (str, os.PathLike)):
        import_paths = [import_paths]
    import_paths = [os.fspath(p) if isinstance(p, os.PathLike) else p for p in import_paths]
    parser = _load(text, start, import_paths, path, allow_outside_imports)
    terminals = {str(t.name): _terminal(t) for t in parser.terminals}
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
    frozen, kept_terms, _ = clean_rules(frozen, terminals, start, ignore)
    return cls(start=start, rules=frozen, terminals=kept_terms, ignore=ignore, source="lark",
               text=text)


def _prepare_lark_reader() -> None:
    """Builds Lark's reader of grammar files once per process without its terminal-collision
    check: with ``interegular`` installed, Lark compares every pair of terminals of its own,
    fixed meta-grammar (most of the first load's ~200 ms) only to log warnings."""
    try:
        from lark import lexer as lark_lexer
        from lark import load_grammar as lark_load
        if hasattr(lark_load._get_parser, "cache") or not lark_lexer.has_interegular:
            return
        lark_lexer.has_interegular = False
        try:
            lark_load._get_parser()
        finally:
            lark_lexer.has_interegular = True
    except (ImportError, AttributeError):   # another Lark layout: it builds the reader itself
        return


def _load(text: str, start: str, import_paths: list[str], path: str | None,
          allow_outside: bool) -> "_Loaded":
    _prepare_lark_reader()
    kwargs = {}
    if path is not None:
        kwargs["source_path"] = os.path.abspath(path)
    loader = _import_guard(import_paths, path, allow_outside)
    try:
        # Lark's own loader and EBNF-to-BNF compilation, without building its parser (whose
        # grammar analysis grows faster than linearly with the number of rules)
        built, _ = load_grammar(text, kwargs.get("source_path", "<string>"),
                                [loader, *import_paths], False)
        terminals, rules, ignore = built.compile([start], set())
        bad = _regex_error(terminals)
        if bad is not None:
            raise bad
        return _Loaded(terminals, rules, ignore)
    except GrammarError:
        raise
    except LarkError as e:
        raise _as_grammar_error(e, text) from None
    except FileNotFoundError as e:
        raise GrammarError(f"%import failed: grammar file {e.filename!r} not found") from None
    except Exception as e:  # re.error, the `regex` module's error, or an assertion
        bad = _invalid_terminal(text, start, [loader, *import_paths], kwargs.get("source_path"))
        if bad is not None:
            raise bad from None
        raise GrammarError(f"cannot load the Lark grammar: {type(e).__name__}: {e}") from None


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
        terminals, _, _ = built.compile([start], set())
    except Exception:
        return None
    return _regex_error(terminals)


def _regex_error(terminals) -> GrammarError | None:
    """The error for the first terminal whose regex does not compile (None if all do)."""
    for t in terminals:
        try:
            re.compile(t.pattern.to_regexp())
        except (re.error, RecursionError, OverflowError) as e:
            return GrammarError(f"terminal {t.name}: invalid regular expression "
                                f"{t.pattern.value!r}: {e}")
    return None


def _as_grammar_error(e: LarkError, text: str) -> GrammarError:
    line = getattr(e, "line", None)
    column = getattr(e, "column", None)
    msg = str(e).strip()
    m = _WHERE.search(msg)
    if line is None and m:
        line, column = int(m.group(1)), int(m.group(2))
    first = msg.splitlines()[0] if msg else type(e).__name__
    first = re.sub(r"\s*at line \d+ col(?:umn)? \d+.*$", "", first).rstrip(" ,:")
    undefined = _UNDEFINED.search(first)
    if line is None and undefined:
        line, column = _first_use(text, undefined.group(1)) or (None, None)
    return GrammarError(f"Lark grammar error: {first}", line=line, column=column)


_UNDEFINED = re.compile(r"'(\w+)' used but not defined")
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


def _import_guard(import_paths: list[str], path: str | None,
                  allow_outside: bool) -> Callable:
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
            return candidate, f.read()

    return loader


def _terminal(tdef) -> Terminal:
    pat = tdef.pattern
    flags = frozenset(getattr(pat, "flags", ()) or ())
    if isinstance(pat, PatternStr):
        source = escape_literal(pat.value)
    else:
        source = _KNOWN_PATTERNS.get(pat.value, pat.value)
    regex = to_interegular(source, flags, name=tdef.name, unicode=True)
    _check_language(tdef.name, regex)
    return Terminal(str(tdef.name), regex, int(tdef.priority or 0))


def _check_language(name: str, regex: str) -> None:
    # the rewritten pattern is also valid Python ``re`` syntax with the same meaning
    if re.fullmatch(regex, ""):
        raise GrammarError(f"terminal {name} matches the empty string; terminals must match "
                           "at least one character")
