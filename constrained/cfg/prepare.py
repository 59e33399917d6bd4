"""Grammar preparation: symbols numbered, terminals as byte DFAs, useless rules removed.

A ``Grammar`` (rules over regular terminals) becomes a ``PreparedGrammar``:

- terminals ``0 .. n_terminals-1`` with a trimmed byte DFA each (ignore terminals included;
  literal terminals' DFAs are built on first read, see cfg.terminal_dfas);
  nonterminals follow (``n_terminals ..``); alternative 0 is the augmented ``$start -> start``;
- tail recursion (``X: a X | b``) becomes left recursion with the same language (Earley needs
  time and items proportional to the repetition count for every step of right recursion, and
  no two columns of such a repetition are equal, so nothing could be memoized across them);
- lexemes are never empty: a terminal whose pattern matches the empty string is replaced in the
  rules by an optional symbol (``T`` or nothing) and its DFA no longer accepts the empty string;
- unproductive alternatives (deriving no text) and unreachable rules are dropped; a grammar whose
  language is empty raises GrammarError; sizes past ``max_rules`` raise LimitExceededError.

The rule passes (reachability, renaming, productivity, numbering) run in C (``cfg/_lower.c``);
the terminals' automata are built here in between.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..automata import ByteDFA, regex_difference_dfa, regex_to_byte_dfa
from ..automata.byte_dfa import deferred_facts, dfa_from_arrays
from ..automata.literal_dfa import literal_alternatives
from ..errors import EmptyLanguageError, GrammarError, LimitExceededError, RegexError
from ..grammar import Grammar
from . import _lower
from .terminal_dfas import TerminalDFAs

START = "$start"


@dataclass(frozen=True, eq=False)
class PreparedGrammar:
    """Numbered symbols and alternatives (see the module docstring)."""

    terminal_names: tuple[str, ...]
    dfas: Sequence[ByteDFA]                # per terminal (literals built on first read)
    ignore: frozenset[int]
    nonterminal_names: tuple[str, ...]     # index i is symbol n_terminals + i
    lhs: tuple[int, ...]                   # per alternative
    rhs: tuple[tuple[int, ...], ...]       # per alternative
    by_lhs: dict[int, tuple[int, ...]]     # nonterminal -> its alternatives
    nullable: frozenset[int]               # nullable nonterminals
    # ignored whitespace runs cut at max_ignored_whitespace bytes: one may not follow another
    bounded_ignore: frozenset[int] = frozenset()
    # per terminal: its one text when it matches exactly one (lexers read it off the text)
    words: tuple[bytes | None, ...] | None = None
    # the alternatives as native int32 bytes (all symbols, each alternative's bounds in them,
    # left-hand sides) and a nullable flag byte per symbol, as the Earley parser reads them
    packed: tuple[bytes, bytes, bytes, bytes] | None = None

    @property
    def n_terminals(self) -> int:
        return len(self.terminal_names)

    def symbol_name(self, sym: int) -> str:
        n = self.n_terminals
        return self.terminal_names[sym] if sym < n else self.nonterminal_names[sym - n]


def _non_empty_dfa(dfa: ByteDFA) -> ByteDFA:
    """The same language without the empty string (a fresh, non-accepting initial state)."""
    n = dfa.n_states
    trans = np.vstack([dfa.transitions, dfa.transitions[dfa.initial:dfa.initial + 1]])
    acc = np.concatenate([dfa.accepting, [False]])
    if (trans[n] < 0).all():  # only the empty string: no lexeme at all
        return ByteDFA(np.zeros((0, 256), np.int32), np.zeros(0, bool), -1, dfa.pattern)
    return ByteDFA(np.ascontiguousarray(trans, dtype=np.int32), acc, n, dfa.pattern)


_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[list(b" \t\n\r\f\v")] = True


def _whitespace_run(dfa: ByteDFA) -> bool:
    """Whether the DFA is ``[chars]+`` for a set of whitespace bytes: two states, the second
    accepting and looping on exactly the bytes that lead to it (greedy lexing then always
    merges two adjacent runs into one lexeme)."""
    if dfa.n_states != 2 or dfa.accepting[dfa.initial]:
        return False
    first, other = dfa.transitions[dfa.initial], dfa.transitions[1 - dfa.initial]
    used, run = first >= 0, 1 - dfa.initial
    return (bool(dfa.accepting[run]) and used.any() and not used[~_WHITESPACE].any()
            and bool((first[used] == run).all()) and np.array_equal(other >= 0, used)
            and bool((other[used] == run).all()))


def _at_most(dfa: ByteDFA, bound: int) -> ByteDFA:
    """The DFA's language cut to texts of at most ``bound`` bytes (a product with a counter)."""
    n = dfa.n_states
    trans = np.full(((bound + 1) * n, 256), -1, dtype=np.int32)
    accepting = np.zeros((bound + 1) * n, dtype=bool)
    for k in range(bound + 1):
        rows = slice(k * n, (k + 1) * n)
        accepting[rows] = dfa.accepting
        if k < bound:
            nxt = dfa.transitions
            trans[rows] = np.where(nxt >= 0, nxt + (k + 1) * n, -1)
    return dfa_from_arrays(trans, accepting, dfa.initial,
                           f"{dfa.pattern} (at most {bound} bytes)")


def _small_literal(term, max_dfa_states: int) -> tuple[bytes, ...] | None:
    """The texts of ``term`` when it is a set of non-empty literal texts whose automaton surely
    has at most ``max_dfa_states`` states (a trie has at most one state per byte, plus its
    root), else None."""
    if term.exclude or term.automaton is not None:
        return None
    words = _literal_words(term.pattern)
    return words[0] if words is not None and words[1] < max_dfa_states else None


@lru_cache(maxsize=4096)
def _literal_words(pattern: str) -> tuple[tuple[bytes, ...], int] | None:
    """The non-empty texts of a plainly literal pattern and their total length, else None
    (punctuation and common names recur in every grammar of a front-end)."""
    words = literal_alternatives(pattern)
    if not words or not all(words):
        return None
    return tuple(words), sum(map(len, words))


def _terminal_dfa(grammar: Grammar, name: str, max_dfa_states: int) -> ByteDFA:
    term = grammar.terminals[name]
    try:
        if term.exclude or term.automaton is not None:
            return regex_difference_dfa(term.pattern, term.exclude, max_dfa_states,
                                        term.automaton)
        return regex_to_byte_dfa(term.pattern, max_dfa_states)
    except RegexError as exc:
        raise GrammarError(f"terminal {name}: {exc}") from None
    except LimitExceededError as exc:
        raise LimitExceededError(f"terminal {name}: {exc}") from None


def _deferred(term, max_dfa_states: int):
    """What the language of a terminal whose automaton can wait holds (automata.byte_dfa.
    deferred_facts), else None: a terminal without exclusions or a given automaton, whose
    language holds some non-empty text."""
    if term.exclude or term.automaton is not None:
        return None
    facts = deferred_facts(term.pattern, max_dfa_states)
    return facts if facts is not None and facts.texts else None


def _lexeme_dfa(grammar: Grammar, name: str, max_dfa_states: int, optional: bool) -> ByteDFA:
    """A terminal's automaton built on first read: without the empty text where the rules
    made it optional."""
    dfa = _terminal_dfa(grammar, name, max_dfa_states)
    return _non_empty_dfa(dfa) if optional else dfa


def prepare_grammar(grammar: Grammar, *, max_rules: int = 100_000,
                    max_dfa_states: int = 10_000) -> PreparedGrammar:
    """Number, lower and trim ``grammar`` (see the module docstring)."""
    rules = grammar.rules
    if grammar.start not in rules:
        raise GrammarError(f"start rule {grammar.start!r} is not defined")
    n_alts = sum(map(len, rules.values()))
    if n_alts > max_rules:
        raise LimitExceededError(f"grammar has {n_alts} alternatives, more than "
                                 f"max_rules={max_rules}")
    both = rules.keys() & grammar.terminals.keys()
    if both:
        raise GrammarError(f"{next(n for n in rules if n in both)!r} is both a rule and a "
                           "terminal")
    indexed = _lower.index(rules, grammar.terminals, grammar.start)
    if indexed[0] is None:
        raise GrammarError(f"rule {indexed[1]!r} uses undefined symbol {indexed[2]!r}")
    for name in grammar.ignore:
        if name not in grammar.terminals:
            raise GrammarError(f"ignored terminal {name!r} is not defined")
    index, reach_terms = indexed

    # terminal automata; nullable terminals lose the empty string and become optional
    term_names = sorted({*reach_terms, *grammar.ignore})
    dfas: dict[str, ByteDFA] = {}
    optional: set[str] = set()
    bound = grammar.max_ignored_whitespace
    bounded: set[str] = set()
    literals: set[str] = set()      # built on first read (see cfg.terminal_dfas)
    single: dict[str, bytes] = {}   # literals of one text: the text
    deferred: set[str] = set()      # other automata built on first read (their facts known)
    for name in term_names:
        term = grammar.terminals[name]
        words = None if name in grammar.ignore else _small_literal(term, max_dfa_states)
        if words is not None:
            literals.add(name)
            if len(words) == 1:
                single[name] = words[0]
            continue
        facts = None if name in grammar.ignore else _deferred(term, max_dfa_states)
        if facts is not None:
            deferred.add(name)
            if facts.empty_text:
                optional.add(name)
            continue
        dfa = _terminal_dfa(grammar, name, max_dfa_states)
        if bound is not None and name in grammar.ignore and _whitespace_run(dfa):
            dfa = _at_most(dfa, bound)
            bounded.add(name)
        if dfa.initial >= 0 and dfa.accepting[dfa.initial]:
            dfa = _non_empty_dfa(dfa)
            optional.add(name)
        dfas[name] = dfa

    ignore_names = [n for n in grammar.ignore if dfas[n].initial >= 0]
    # 0: no lexeme; 1: lexemes; 2: only the empty text (optional, no lexeme); 3: both
    status = {n: (3 if n in optional else 1) if n in literals or n in deferred
              or dfas[n].initial >= 0 else 2 if n in optional else 0 for n in term_names}
    lowered = _lower.lower(index, grammar.start, status, ignore_names, START)
    if lowered is None:
        raise EmptyLanguageError(f"the grammar's language is empty: rule {grammar.start!r} "
                                 "derives no text")
    terminal_names, nt_names, lhs, rhs, by_lhs, nullable, packed = lowered
    tid = {n: i for i, n in enumerate(terminal_names)}
    if bounded:     # a bounded run is kept where no rule uses its terminal
        used = {s for alt in rhs for s in alt if s < len(terminal_names)}
        bounded = {n for n in bounded if n in tid and tid[n] not in used}
    return PreparedGrammar(
        terminal_names=terminal_names,
        dfas=TerminalDFAs([dfas.get(n) for n in terminal_names],
                          lambda t: _lexeme_dfa(grammar, terminal_names[t], max_dfa_states,
                                                terminal_names[t] in optional)),
        words=tuple(single.get(n) for n in terminal_names),
        ignore=frozenset(tid[n] for n in ignore_names), nonterminal_names=nt_names,
        lhs=lhs, rhs=rhs, by_lhs=by_lhs, nullable=nullable, packed=packed,
        bounded_ignore=frozenset(tid[n] for n in bounded))
