"""Brute-force oracle for the CFG engine's semantics, written independently of constrained.cfg.

Greedy contextual lexing without backtracking (see constrained/cfg/runtime.py): a byte joins the
current lexeme while some candidate terminal (expected by the parser, or ignored) can still match
a longer text; otherwise the lexeme must fully match candidates, the parser takes all of them,
and the byte starts a new lexeme. The parser is a textbook Earley recognizer over a list of item
sets with position-indexed origins and closure by fixpoint; terminals are matched with their byte
DFAs. Everything is recomputed from plain data, nothing is cached or interned.
"""
from __future__ import annotations

from dataclasses import dataclass

from constrained.automata import regex_difference_dfa
from constrained.grammar import Grammar

_START = "<S>"


class OracleGrammar:
    def __init__(self, grammar: Grammar) -> None:
        self.rules = [(_START, (grammar.start,))]
        for name, alts in grammar.rules.items():
            for alt in alts:
                self.rules.append((name, tuple(alt)))
        self.nonterminals = set(grammar.rules) | {_START}
        self.by_lhs: dict = {}
        for r, (lhs, _) in enumerate(self.rules):
            self.by_lhs.setdefault(lhs, []).append(r)
        self._expected: dict = {}
        self.ignore = frozenset(grammar.ignore)
        self.dfas = {name: regex_difference_dfa(t.pattern, t.exclude)
                     for name, t in grammar.terminals.items()}

    # terminals --------------------------------------------------------------------------------
    def can_extend(self, term: str, data: bytes) -> bool:
        """Some non-empty full match of ``term`` starts with ``data``."""
        dfa = self.dfas[term]
        return dfa.initial >= 0 and dfa.walk(dfa.initial, data) >= 0 and \
            self._nonempty_continuation(dfa, data)

    def _nonempty_continuation(self, dfa, data: bytes) -> bool:
        if data:
            return True
        # the empty lexeme: the terminal needs some non-empty match
        s = dfa.initial
        return bool((dfa.transitions[s] >= 0).any())

    def full(self, term: str, data: bytes) -> bool:
        return bool(data) and self.dfas[term].accepts(data)

    # Earley ------------------------------------------------------------------------------------
    def closure(self, chart: list, items: set) -> set:
        """Worklist closure; nullable rules via the set of symbols completed at this position."""
        pos = len(chart)  # the set being built
        items = set(items)
        todo = list(items)
        completed_here: set = set()
        while todo:
            r, d, o = todo.pop()
            lhs, rhs = self.rules[r]
            new = []
            if d < len(rhs):
                sym = rhs[d]
                if sym in self.nonterminals:
                    new.extend((r2, 0, pos) for r2 in self.by_lhs.get(sym, ()))
                    if sym in completed_here:
                        new.append((r, d + 1, o))
            else:
                source = items if o == pos else chart[o]
                if o == pos:
                    completed_here.add(lhs)
                for (r2, d2, o2) in list(source):
                    rhs2 = self.rules[r2][1]
                    if d2 < len(rhs2) and rhs2[d2] == lhs:
                        new.append((r2, d2 + 1, o2))
            for it in new:
                if it not in items:
                    items.add(it)
                    todo.append(it)
        return items

    def expected(self, items: set) -> set:
        hit = self._expected.get(id(items))
        if hit is not None and hit[0] is items:
            return hit[1]
        out = self._expected_uncached(items)
        if len(self._expected) > 10000:
            self._expected.clear()
        self._expected[id(items)] = (items, out)
        return out

    def _expected_uncached(self, items: set) -> set:
        out = set()
        for (r, d, _) in items:
            rhs = self.rules[r][1]
            if d < len(rhs) and rhs[d] not in self.nonterminals:
                out.add(rhs[d])
        return out

    def complete(self, items: set) -> bool:
        return any(r == 0 and d == 1 for (r, d, _) in items)


@dataclass
class OracleState:
    chart: list      # item sets; chart[-1] is the column where the current lexeme started
    lexeme: bytes


class Oracle:
    def __init__(self, grammar: Grammar) -> None:
        self.g = OracleGrammar(grammar)
        first = self.g.closure([], {(0, 0, 0)})
        self.initial = OracleState([first], b"")

    def candidates(self, st: OracleState) -> set:
        return self.g.expected(st.chart[-1]) | set(self.g.ignore)

    def _end_lexeme(self, chart: list, lexeme: bytes):
        cands = self.g.expected(chart[-1]) | set(self.g.ignore)
        done = {t for t in cands if self.g.full(t, lexeme)}
        if not done:
            return None
        last = chart[-1]
        scanned = set()
        for (r, d, o) in last:
            rhs = self.g.rules[r][1]
            if d < len(rhs) and rhs[d] in done:
                scanned.add((r, d + 1, o))
        if not scanned:
            return chart  # only ignored terminals matched: the parser stays
        if done & self.g.ignore:
            scanned |= last
        return chart + [self.g.closure(chart, scanned)]

    def feed(self, st: OracleState | None, data: bytes) -> OracleState | None:
        if st is None:
            return None
        chart, lexeme = st.chart, st.lexeme
        for b in data:
            cands = self.g.expected(chart[-1]) | set(self.g.ignore)
            longer = lexeme + bytes((b,))
            if any(self.g.can_extend(t, longer) for t in cands):
                lexeme = longer
                continue
            if not lexeme:
                return None
            chart = self._end_lexeme(chart, lexeme)
            if chart is None:
                return None
            cands = self.g.expected(chart[-1]) | set(self.g.ignore)
            lexeme = bytes((b,))
            if not any(self.g.can_extend(t, lexeme) for t in cands):
                return None
        return OracleState(chart, lexeme)

    def is_complete(self, st: OracleState | None) -> bool:
        if st is None:
            return False
        if not st.lexeme:
            return self.g.complete(st.chart[-1])
        chart = self._end_lexeme(st.chart, st.lexeme)
        return chart is not None and self.g.complete(chart[-1])

    def accepts(self, text: bytes) -> bool:
        return self.is_complete(self.feed(self.initial, text))

    def allowed(self, st: OracleState, vocab) -> set[int]:
        """Token ids allowed after ``st`` (EOS included when complete)."""
        out = set()
        text_ok = vocab.text_token_mask
        for i, tok in enumerate(vocab.token_bytes):
            if text_ok[i] and self.feed(st, tok) is not None:
                out.add(i)
        if self.is_complete(st):
            out |= set(vocab.eos_token_ids)
        return out
