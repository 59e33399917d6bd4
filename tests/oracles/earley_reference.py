"""A straightforward character-level Earley recognizer over the grammar representation.

Independent of the engine (constrained/cfg): it reads only ``Grammar`` (rules, terminal regexes,
ignore list) and walks terminals with interegular automata over characters (``str``), not bytes.
Slow and simple on purpose; use it as a judge in tests.

Two lexing semantics are offered (``lexing=``):

``"any"``
    Scannerless: a terminal may match any non-empty substring in its language, every split of the
    text into terminals (and ignored terminals, anywhere between or around them) counts. This is
    what Lark's Earley parser accepts with ``lexer="dynamic_complete"``, an upper bound of every
    lexing strategy. ``is_viable_prefix`` is exact: some item set at a lexeme start is non-empty
    and the text after it is empty or a live prefix of an expected (or ignored) terminal. (Exact
    because front-ends drop unproductive rules, so every Earley item can be completed.)

``"greedy"``
    The engine's contextual lexing, greedy without backtracking (constrained/cfg/runtime.py): at a
    lexeme start the candidates are the terminals some item expects plus the ignored ones; a
    character joins the lexeme while some candidate can still match a longer text; otherwise the
    lexeme must fully match candidates, the parser advances over all of them (ignored terminals
    leave it where it was) and the character starts the next lexeme. ``recognizes`` is exact.
    ``is_viable_prefix`` searches continuations breadth-first over representative characters
    (one per class of characters every terminal automaton treats alike) up to ``max_extra``
    characters, so ``False`` means "no completion within the bound".

For GBNF grammars (every terminal one character) both semantics coincide and are exact.

Use from a test (tests/ has no packages)::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))
    from earley_reference import ReferenceRecognizer   # or gbnf_reference / lark_reference
    ReferenceRecognizer(grammar).is_viable_prefix("{\"a\": ", lexing="greedy")

Byte-level callers decode first; a prefix ending inside a UTF-8 sequence is viable iff some
completion of that character is (check the prefix plus each candidate character).
"""
from __future__ import annotations

from collections import deque
from functools import lru_cache

import interegular

from constrained.grammar import Grammar

_START = "<start>"
_ANYTHING_ELSE = interegular.fsm.anything_else


class _Term:
    """A terminal's automaton over characters (interegular FSM), with liveness precomputed."""

    def __init__(self, pattern: str) -> None:
        fsm = interegular.parse_pattern(pattern).to_fsm()
        self.fsm = fsm
        self.initial = fsm.initial
        self.finals = frozenset(fsm.finals)
        self.live = frozenset(s for s in fsm.states if fsm.islive(s))

    def step(self, state, ch: str):
        """Next state, or None when no full match can follow."""
        sym = self.fsm.alphabet[ch] if ch in self.fsm.alphabet else \
            self.fsm.alphabet[_ANYTHING_ELSE]
        nxt = self.fsm.map.get(state, {}).get(sym)
        return nxt if nxt is not None and nxt in self.live else None


class ReferenceRecognizer:
    """Earley recognizer for one grammar; see the module docstring for the semantics."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.rules: list[tuple[str, tuple[str, ...]]] = [(_START, (grammar.start,))]
        for name, alts in grammar.rules.items():
            for alt in alts:
                self.rules.append((name, tuple(alt)))
        self.by_lhs: dict[str, list[int]] = {}
        for i, (lhs, _) in enumerate(self.rules):
            self.by_lhs.setdefault(lhs, []).append(i)
        self.terms = {name: _Term(t.pattern) for name, t in grammar.terminals.items()}
        self.ignore = tuple(grammar.ignore)
        self.nullable = self._nullable()

    # -- grammar facts --------------------------------------------------------------------
    def _nullable(self) -> set[str]:
        nullable: set[str] = set()
        changed = True
        while changed:
            changed = False
            for lhs, rhs in self.rules:
                if lhs not in nullable and all(s in nullable for s in rhs):
                    nullable.add(lhs)
                    changed = True
        return nullable

    # -- Earley core ----------------------------------------------------------------------
    def _closure(self, sets: dict[int, set], pos: int) -> None:
        """Predict and complete in set ``pos`` until nothing changes.

        ``sets[-1 - pos]`` caches, per closed set, its items by the symbol after the dot.
        """
        items = sets[pos]
        waiting: dict[str, list] = {}
        agenda = list(items)
        for it in agenda:
            r, d, _ = it
            rhs = self.rules[r][1]
            if d < len(rhs):
                waiting.setdefault(rhs[d], []).append(it)
        while agenda:
            r, d, o = agenda.pop()
            lhs, rhs = self.rules[r]
            new = []
            if d < len(rhs):
                sym = rhs[d]
                if sym in self.by_lhs:
                    new.extend((r2, 0, pos) for r2 in self.by_lhs[sym])
                    if sym in self.nullable:
                        new.append((r, d + 1, o))
            else:
                parents = waiting.get(lhs, ()) if o == pos else sets[-1 - o].get(lhs, ())
                new.extend((r2, d2 + 1, o2) for r2, d2, o2 in list(parents))
            for it in new:
                if it not in items:
                    items.add(it)
                    agenda.append(it)
                    r2, d2, _ = it
                    rhs2 = self.rules[r2][1]
                    if d2 < len(rhs2):
                        waiting.setdefault(rhs2[d2], []).append(it)
        sets[-1 - pos] = waiting

    def _expected(self, items: set) -> set[str]:
        out = set()
        for r, d, _ in items:
            rhs = self.rules[r][1]
            if d < len(rhs) and rhs[d] in self.terms:
                out.add(rhs[d])
        return out

    def _candidates(self, items: set) -> set[str]:
        return self._expected(items) | set(self.ignore) if items else set()

    def _advance(self, sets: dict[int, set], src: int, dst: int, terms) -> None:
        """Move set ``src`` over each terminal in ``terms`` into set ``dst`` (not closed)."""
        target = sets.setdefault(dst, set())
        for r, d, o in sets[src]:
            rhs = self.rules[r][1]
            if d < len(rhs) and rhs[d] in terms:
                target.add((r, d + 1, o))
        if any(t in self.ignore for t in terms):
            target.update(sets[src])

    def _complete(self, items: set) -> bool:
        return (0, 1, 0) in items

    # -- "any" lexing ---------------------------------------------------------------------
    def _any_sets(self, text: str) -> dict[int, set]:
        n = len(text)
        sets: dict[int, set] = {0: {(0, 0, 0)}}
        for i in range(n + 1):
            if not sets.get(i):
                continue
            self._closure(sets, i)
            for t in self._candidates(sets[i]):
                term, state = self.terms[t], self.terms[t].initial
                for j in range(i, n):
                    state = term.step(state, text[j])
                    if state is None:
                        break
                    if state in term.finals:
                        self._advance(sets, i, j + 1, {t})
        return sets

    def _any_viable(self, text: str) -> bool:
        n = len(text)
        sets = self._any_sets(text)
        if sets.get(n):
            return True
        for i in range(n):
            if not sets.get(i):
                continue
            for t in self._candidates(sets[i]):
                term, state = self.terms[t], self.terms[t].initial
                for j in range(i, n):
                    state = term.step(state, text[j])
                    if state is None:
                        break
                else:
                    return True
        return False

    # -- "greedy" lexing ------------------------------------------------------------------
    def _greedy_run(self, text: str):
        """Final (sets, lexeme start, live candidate states), or None when the text is dead."""
        sets: dict[int, set] = {0: {(0, 0, 0)}}
        self._closure(sets, 0)
        start = 0
        states = {t: self.terms[t].initial for t in self._candidates(sets[0])}
        pos = 0
        while pos < len(text):
            ch = text[pos]
            nxt = {}
            for t, s in states.items():
                s2 = self.terms[t].step(s, ch)
                if s2 is not None:
                    nxt[t] = s2
            if nxt:
                states = nxt
                pos += 1
                continue
            if pos == start:
                return None
            done = self._end_lexeme(sets, start, pos, states)
            if done is None:
                return None
            start, states = pos, done
        return sets, start, states

    def _end_lexeme(self, sets, start: int, pos: int, states: dict):
        """Close the lexeme text[start:pos]; return the new candidates' initial states."""
        matched = {t for t, s in states.items() if s in self.terms[t].finals}
        if not matched:
            return None
        self._advance(sets, start, pos, matched)
        if not sets[pos]:
            return None
        self._closure(sets, pos)
        return {t: self.terms[t].initial for t in self._candidates(sets[pos])}

    def _greedy_accepts_state(self, run, n: int) -> bool:
        sets, start, states = run
        if start == n:
            return self._complete(sets[start])
        matched = {t for t, s in states.items() if s in self.terms[t].finals}
        if not matched:
            return False
        probe = {k: (set(v) if k >= 0 else v) for k, v in sets.items()}
        self._advance(probe, start, n, matched)
        self._closure(probe, n)
        return self._complete(probe[n])

    def _greedy_viable(self, text: str, max_extra: int, alphabet) -> bool:
        if self._greedy_run(text) is None:
            return False
        alphabet = sorted(set(alphabet) if alphabet is not None else self.representatives())
        seen = {text}
        frontier = deque([text])
        for _ in range(max_extra + 1):
            nxt_frontier = deque()
            for t in frontier:
                run = self._greedy_run(t)
                if run is None:
                    continue
                if self._greedy_accepts_state(run, len(t)):
                    return True
                for ch in alphabet:
                    u = t + ch
                    if u not in seen and self._any_viable(u):
                        seen.add(u)
                        nxt_frontier.append(u)
            frontier = nxt_frontier
        return False

    # -- public ---------------------------------------------------------------------------
    def recognizes(self, text: str, lexing: str = "any") -> bool:
        """Whether ``text`` is a complete sentence under ``lexing`` ("any" or "greedy")."""
        if lexing == "any":
            sets = self._any_sets(text)
            return self._complete(sets.get(len(text), set()))
        if lexing == "greedy":
            run = self._greedy_run(text)
            return run is not None and self._greedy_accepts_state(run, len(text))
        raise ValueError(f"unknown lexing {lexing!r}")

    def is_viable_prefix(self, text: str, lexing: str = "any", *, max_extra: int = 6,
                         alphabet=None) -> bool:
        """Whether some continuation makes ``text`` a complete sentence (see module docstring)."""
        if lexing == "any":
            return self._any_viable(text)
        if lexing == "greedy":
            return self._greedy_viable(text, max_extra, alphabet)
        raise ValueError(f"unknown lexing {lexing!r}")

    def representatives(self) -> list[str]:
        """One character per class of characters that every terminal automaton treats alike."""
        return list(_representatives(tuple(sorted(
            (n, t.pattern) for n, t in self.grammar.terminals.items()))))


@lru_cache(maxsize=64)
def _representatives(terms: tuple) -> tuple[str, ...]:
    fsms = [interegular.parse_pattern(p).to_fsm() for _, p in terms]
    listed = set()
    for f in fsms:
        listed.update(c for c in f.alphabet._symbol_mapping if c is not _ANYTHING_ELSE)
    other = next(chr(c) for c in range(0xE000, 0xF8FF) if chr(c) not in listed)
    groups: dict[tuple, str] = {}
    for ch in sorted(listed) + [other]:
        sig = tuple(f.alphabet[ch] if ch in f.alphabet else f.alphabet[_ANYTHING_ELSE]
                    for f in fsms)
        groups.setdefault(sig, ch)
    return tuple(groups.values())


_CACHE: dict[int, tuple[Grammar, ReferenceRecognizer]] = {}


def recognizer(grammar: Grammar) -> ReferenceRecognizer:
    """A (cached) recognizer for ``grammar``."""
    hit = _CACHE.get(id(grammar))
    if hit is None or hit[0] is not grammar:
        hit = (grammar, ReferenceRecognizer(grammar))
        _CACHE[id(grammar)] = hit
    return hit[1]
