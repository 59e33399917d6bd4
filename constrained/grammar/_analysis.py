"""Grammar hygiene shared by the front-ends: undefined symbols, unproductive and unreachable rules.

An Earley item over an unproductive symbol can never complete, so a matcher that keeps such
items would call a prefix viable when it is not. Front-ends therefore drop alternatives that use
unproductive symbols and rules unreachable from the start; a start symbol that derives no finite
string (an empty language) is an error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable

from ..errors import EmptyLanguageError, GrammarError, LimitExceededError


@dataclass(frozen=True)
class Hygiene:
    """What ``clean_rules`` removed: rule names, and alternatives as (rule, alternative)."""

    unproductive: tuple[str, ...]
    unreachable: tuple[str, ...]
    dropped_alternatives: tuple[tuple[str, tuple[str, ...]], ...]


def check_size(text: str, max_grammar_bytes: int, what: str = "the grammar text") -> None:
    """Raise LimitExceededError when ``text`` is longer than ``max_grammar_bytes`` in UTF-8."""
    size = len(text)
    if size * 4 > max_grammar_bytes and size <= max_grammar_bytes:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_grammar_bytes:
        raise LimitExceededError(f"{what} is longer than max_grammar_bytes={max_grammar_bytes} "
                                 "bytes")


def check_defined(rules: dict[str, tuple[tuple[str, ...], ...]], terminals,
                  start: str) -> None:
    """Raise GrammarError naming an undefined start rule, or the first symbol that is neither
    a rule nor a terminal."""
    if start not in rules:
        raise GrammarError(f"start rule {start!r} is not defined")
    defined = rules.keys() | terminals.keys()
    for name, alts in rules.items():
        for alt in alts:
            if not defined.issuperset(alt):
                sym = next(s for s in alt if s not in defined)
                raise GrammarError(f"rule {name!r} uses undefined symbol {sym!r}")


_SWEEPS = 6     # whole passes over the alternatives before counting takes over


def derivable(alternatives: Iterable[tuple[Hashable, Iterable[Hashable]]],
              known: Iterable[Hashable] = ()) -> set:
    """``known`` plus every head of an alternative ``(head, symbols)`` whose symbols are all in
    the result (the least fixpoint), in time linear in the size of the alternatives.

    A few passes over the alternatives, each adding the heads whose symbols are all derived
    (a set inclusion test each), settle most grammars; what is left after them is counted:
    each alternative counts its symbols not yet derived, a symbol becoming derived decrements
    the alternatives waiting for it, and an alternative reaching zero derives its head.
    """
    result = set(known)
    pending = list(alternatives)
    for _ in range(_SWEEPS):
        size = len(result)
        rest = []
        for alt in pending:
            head = alt[0]
            if head not in result:
                if result.issuperset(alt[1]):
                    result.add(head)
                else:
                    rest.append(alt)
        pending = rest
        if not pending or len(result) == size:
            return result
    return _counted(pending, result)


def _counted(alternatives: list, result: set) -> set:
    """derivable() by counting, from the symbols ``result`` already holds."""
    heads: list = []
    missing: list[int] = []
    waiting: dict = {}
    ready = []
    for head, symbols in alternatives:
        k = len(heads)
        need = 0
        for s in symbols:          # each occurrence counts: no set per alternative
            if s not in result:
                need += 1
                w = waiting.get(s)
                if w is None:
                    waiting[s] = [k]
                else:
                    w.append(k)
        if need:
            heads.append(head)
            missing.append(need)
        else:
            ready.append(head)
    while ready:
        head = ready.pop()
        if head in result:
            continue
        result.add(head)
        for k in waiting.pop(head, ()):
            missing[k] -= 1
            if not missing[k]:
                ready.append(heads[k])
    return result


def productive_symbols(rules, terminals) -> set[str]:
    """Symbols deriving at least one finite string (terminals are assumed non-empty languages)."""
    return derivable(((name, alt) for name, alts in rules.items() for alt in alts), terminals)


def reachable_symbols(rules, start: str, extra=()) -> set[str]:
    """Symbols reachable from ``start`` (plus ``extra``, e.g. ignored terminals)."""
    seen = {start, *extra}
    todo = [start]
    while todo:
        for alt in rules.get(todo.pop(), ()):
            for s in alt:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
    return seen


def clean_rules(rules: dict[str, tuple[tuple[str, ...], ...]], terminals: dict, start: str,
                ignore=()) -> tuple[dict, dict, Hygiene]:
    """Drop unproductive alternatives and unreachable rules/terminals; return what is left.

    Raises GrammarError when the start rule is unproductive (the language is empty).
    """
    productive = productive_symbols(rules, terminals)
    if start not in productive:
        raise EmptyLanguageError(f"the start rule {start!r} derives no finite string "
                           "(the grammar's language is empty)")
    unproductive = tuple(sorted(n for n in rules if n not in productive))
    dropped = []
    kept: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, alts in rules.items():
        if name not in productive:
            continue
        good: dict[tuple[str, ...], None] = {}   # ordered, without duplicates
        for alt in alts:
            if all(s in productive for s in alt):
                good[alt] = None
            else:
                dropped.append((name, alt))
        kept[name] = tuple(good)
    reach = reachable_symbols(kept, start, ignore)
    unreachable = tuple(sorted(n for n in kept if n not in reach))
    kept = {n: a for n, a in kept.items() if n in reach}
    terms = {n: t for n, t in terminals.items() if n in reach}
    return kept, terms, Hygiene(unproductive, unreachable, tuple(dropped))


def empty_language_at(text: str, start: str, definition: str) -> EmptyLanguageError:
    """The EmptyLanguageError of a grammar text whose start rule derives nothing, placed at
    the start rule's definition (``definition``: a regex of its head, ``{name}`` for the
    rule's name)."""
    import re
    m = re.search(definition.format(name=re.escape(start)), text, re.MULTILINE)
    message = (f"the start rule {start!r} derives no finite string (the grammar's language "
               "is empty)")
    if m is None:
        return EmptyLanguageError(message)
    line = text.count("\n", 0, m.start(1)) + 1
    column = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1) + 1
    return EmptyLanguageError(message, line=line, column=column)
