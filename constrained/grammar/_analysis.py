"""Grammar hygiene shared by the front-ends: undefined symbols, unproductive and unreachable rules.

An Earley item over an unproductive symbol can never complete, so a matcher that keeps such
items would call a prefix viable when it is not. Front-ends therefore drop alternatives that use
unproductive symbols and rules unreachable from the start; a start symbol that derives no finite
string (an empty language) is an error.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import GrammarError


@dataclass(frozen=True)
class Hygiene:
    """What ``clean_rules`` removed: rule names, and alternatives as (rule, alternative)."""

    unproductive: tuple[str, ...]
    unreachable: tuple[str, ...]
    dropped_alternatives: tuple[tuple[str, tuple[str, ...]], ...]


def check_defined(rules: dict[str, tuple[tuple[str, ...], ...]], terminals,
                  start: str) -> None:
    """Raise GrammarError naming the first symbol that is neither a rule nor a terminal."""
    if start not in rules:
        raise GrammarError(f"start rule {start!r} is not defined")
    for name, alts in rules.items():
        for alt in alts:
            for sym in alt:
                if sym not in rules and sym not in terminals:
                    raise GrammarError(f"symbol {sym!r} used in rule {name!r} is not defined")


def productive_symbols(rules, terminals) -> set[str]:
    """Symbols deriving at least one finite string (terminals are assumed non-empty languages)."""
    productive = set(terminals)
    changed = True
    while changed:
        changed = False
        for name, alts in rules.items():
            if name in productive:
                continue
            if any(all(s in productive for s in alt) for alt in alts):
                productive.add(name)
                changed = True
    return productive


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
        raise GrammarError(f"the start rule {start!r} derives no finite string "
                           "(the grammar's language is empty)")
    unproductive = tuple(sorted(n for n in rules if n not in productive))
    dropped = []
    kept: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, alts in rules.items():
        if name not in productive:
            continue
        good = []
        for alt in alts:
            if all(s in productive for s in alt):
                if alt not in good:
                    good.append(alt)
            else:
                dropped.append((name, alt))
        kept[name] = tuple(good)
    reach = reachable_symbols(kept, start, ignore)
    unreachable = tuple(sorted(n for n in kept if n not in reach))
    kept = {n: a for n, a in kept.items() if n in reach}
    terms = {n: t for n, t in terminals.items() if n in reach}
    return kept, terms, Hygiene(unproductive, unreachable, tuple(dropped))
