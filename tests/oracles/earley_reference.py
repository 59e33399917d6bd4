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
    ``is_viable_prefix`` is an A* search over continuations (one representative character per
    class of characters every terminal automaton treats alike), guided by the exact shortest
    completion under "any" lexing and merging search states with equal futures. "Yes" is always
    exact (a witness was found); "no" is exact when the search space runs out or every
    remaining path is longer than ``max_extra``; after ``budget`` expansions it raises
    ``OracleUndecided`` rather than guess.

For GBNF grammars (every terminal one character) both semantics coincide and are exact.
Under "any" lexing the charts of prefixes are cached per recognizer, so checking every
continuation of one prefix (a brute-force mask) costs little more than the prefix itself.

Use from a test (tests/ has no packages)::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))
    from earley_reference import ReferenceRecognizer   # or gbnf_reference / lark_reference
    ReferenceRecognizer(grammar).is_viable_prefix("{\"a\": ", lexing="greedy")

Byte-level callers decode first; a prefix ending inside a UTF-8 sequence is viable iff some
completion of that character is (check the prefix plus each candidate character).
"""
from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from functools import lru_cache

import interegular

from constrained.grammar import Grammar

_START = "<start>"
_ANYTHING_ELSE = interegular.fsm.anything_else


class _Term:
    """A terminal's automaton over characters (interegular FSM), with liveness precomputed."""

    def __init__(self, pattern: str, exclude: tuple[str, ...] = ()) -> None:
        fsm = interegular.parse_pattern(pattern).to_fsm()
        if exclude:
            fsm = fsm.difference(*[interegular.parse_pattern(e).to_fsm() for e in exclude])
        self.fsm = fsm
        self.initial = fsm.initial
        self.finals = frozenset(fsm.finals)
        self.live = frozenset(s for s in fsm.states if fsm.islive(s))
        self.dist = self._distances()
        self.min_len = self.dist.get(self.initial, math.inf)

    def _distances(self) -> dict:
        """Length of the shortest path from each live state to a final state."""
        back: dict = {}
        for q, edges in self.fsm.map.items():
            for q2 in edges.values():
                back.setdefault(q2, set()).add(q)
        dist = {q: 0 for q in self.finals}
        todo = deque(self.finals)
        while todo:
            q = todo.popleft()
            for q0 in back.get(q, ()):
                if q0 not in dist:
                    dist[q0] = dist[q] + 1
                    todo.append(q0)
        return dist

    def step(self, state, ch: str):
        """Next state, or None when no full match can follow."""
        sym = self.fsm.alphabet[ch] if ch in self.fsm.alphabet else \
            self.fsm.alphabet[_ANYTHING_ELSE]
        nxt = self.fsm.map.get(state, {}).get(sym)
        return nxt if nxt is not None and nxt in self.live else None


class OracleUndecided(RuntimeError):
    """The greedy viability search hit its expansion budget without a decision."""


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
        self.terms = {name: _Term(t.pattern, t.exclude) for name, t in grammar.terminals.items()}
        self.ignore = tuple(grammar.ignore)
        self.nullable = self._nullable()
        self._charts: dict = {}
        self.min_len = self._min_lengths()
        self.suffix = [[sum(self.min_len[x] for x in rhs[d:]) for d in range(len(rhs) + 1)]
                       for _, rhs in self.rules]

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

    def _min_lengths(self) -> dict[str, float]:
        """Length of the shortest string each symbol derives."""
        best: dict[str, float] = {t: term.min_len for t, term in self.terms.items()}
        for lhs in self.by_lhs:
            best[lhs] = math.inf
        changed = True
        while changed:
            changed = False
            for lhs, rhs in self.rules:
                c = sum(best.get(x, math.inf) for x in rhs)
                if c < best[lhs]:
                    best[lhs] = c
                    changed = True
        return best

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
    # A chart is (sets, pending): the item sets so far and the terminal scans still alive at
    # the end of the text, as (start position, terminal, automaton state). Charts of prefixes
    # are cached, so checking many continuations of one prefix reuses its work.
    _MAX_CACHED_CHARTS = 20000

    def _any_chart(self, text: str):
        cache = self._charts
        k = len(text)
        while k > 0 and text[:k] not in cache:
            k -= 1
        chart = cache.get(text[:k])
        if chart is None:
            chart = cache[""] = self._any_initial()
        for j in range(k, len(text)):
            chart = self._any_extend(chart, j, text[j])
            if len(cache) >= self._MAX_CACHED_CHARTS:
                cache.clear()
            cache[text[:j + 1]] = chart
        return chart

    def _any_initial(self):
        sets: dict[int, set] = {0: {(0, 0, 0)}}
        self._closure(sets, 0)
        return sets, tuple((0, t, self.terms[t].initial) for t in self._candidates(sets[0]))

    def _any_extend(self, chart, n: int, ch: str):
        """The chart after one more character ``ch`` at position ``n``."""
        sets, pending = chart
        sets = dict(sets)  # earlier sets are closed and shared, never changed
        still = []
        for i, t, q in pending:
            q2 = self.terms[t].step(q, ch)
            if q2 is None:
                continue
            still.append((i, t, q2))
            if q2 in self.terms[t].finals:
                self._advance(sets, i, n + 1, {t})
        if sets.get(n + 1):
            self._closure(sets, n + 1)
            still.extend((n + 1, t, self.terms[t].initial)
                         for t in self._candidates(sets[n + 1]))
        return sets, tuple(still)

    def _any_viable(self, text: str) -> bool:
        n = len(text)
        sets, pending = self._any_chart(text)
        return bool(sets.get(n)) or any(i < n for i, _, _ in pending)

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

    def _greedy_viable(self, text: str, max_extra: int, alphabet, budget: int) -> bool:
        """A* search for a completion, one representative character at a time.

        The heuristic is the exact shortest completion under "any" lexing, a lower bound for
        greedy lexing (greedy sentences are a subset), so the first complete state popped
        proves viability and typical searches walk straight to it. Search states with equal
        signatures (the chart reachable from the lexeme start plus the lexer's automaton
        states) have equal futures and are merged; when the search space runs out the answer
        "no" is exact. Raises OracleUndecided after ``budget`` expansions.
        """
        run = self._greedy_run(text)
        if run is None:
            return False
        alphabet = sorted(set(alphabet) if alphabet is not None else self.representatives())
        root = (*run, len(text))
        sig_memo: dict = {}
        up_memo: dict = {}
        h = self._heuristic(root, up_memo)
        if h == math.inf:
            return False
        tie = itertools.count()
        heap = [(h, 0, next(tie), root)]
        best = {self._signature(root, sig_memo): 0}
        expansions = 0
        while heap:
            _, g, _, state = heapq.heappop(heap)
            sets, start, states, pos = state
            if self._greedy_accepts_state((sets, start, states), pos):
                return True
            if g >= max_extra:
                continue
            expansions += 1
            if expansions > budget:
                raise OracleUndecided(f"no decision for {text!r} within {budget} expansions")
            for ch in alphabet:
                child = self._greedy_step(state, ch)
                if child is None:
                    continue
                key = self._signature(child, sig_memo)
                if best.get(key, math.inf) <= g + 1:
                    continue
                best[key] = g + 1
                hc = self._heuristic(child, up_memo)
                if hc != math.inf:
                    heapq.heappush(heap, (g + 1 + hc, g + 1, next(tie), child))
        return False

    def _up_costs(self, sets, o: int, memo: dict) -> dict[str, float]:
        """For each symbol awaited in set ``o``: the shortest text completing the parse after it."""
        items = sets[o]
        hit = memo.get(id(items))
        if hit is not None and hit[0] is items:
            return hit[1]
        costs: dict[str, float] = {}
        changed = True
        while changed:
            changed = False
            for r, d, org in items:
                lhs, rhs = self.rules[r]
                if d >= len(rhs):
                    continue
                if r == 0:
                    up = 0
                elif org == o:
                    up = costs.get(lhs, math.inf)
                else:
                    up = self._up_costs(sets, org, memo).get(lhs, math.inf)
                c = self.suffix[r][d + 1] + up
                if c < costs.get(rhs[d], math.inf):
                    costs[rhs[d]] = c
                    changed = True
        memo[id(items)] = (items, costs)
        return costs

    def _heuristic(self, state, memo: dict) -> float:
        """Shortest completion under "any" lexing (a lower bound for greedy lexing)."""
        sets, start, states, pos = state
        costs = self._up_costs(sets, start, memo)
        at_boundary = 0 if self._complete(sets[start]) else min(
            (self.min_len[a] + c for a, c in costs.items()), default=math.inf)
        if pos == start:
            return at_boundary
        best = math.inf
        for t, q in states.items():
            rest = self.terms[t].dist.get(q, math.inf)
            after = costs.get(t, math.inf)
            if t in self.ignore:
                after = min(after, at_boundary)
            best = min(best, rest + after)
        return best

    def _greedy_step(self, state, ch: str):
        """The search state after one more character, or None when the text dies."""
        sets, start, states, pos = state
        nxt = {}
        for t, q in states.items():
            q2 = self.terms[t].step(q, ch)
            if q2 is not None:
                nxt[t] = q2
        if nxt:
            return sets, start, nxt, pos + 1
        if pos == start:
            return None
        sets = dict(sets)
        sets[pos] = set()
        new_states = self._end_lexeme(sets, start, pos, states)
        if new_states is None:
            return None
        return self._greedy_step((sets, pos, new_states, pos), ch)

    def _signature(self, state, memo: dict):
        sets, start, states, pos = state
        return (self._set_signature(sets, start, memo), pos == start,
                frozenset(states.items()))

    def _set_signature(self, sets, p: int, memo: dict):
        items = sets[p]
        hit = memo.get(id(items))
        if hit is not None and hit[0] is items:
            return hit[1]
        sig = frozenset((r, d, "self" if o == p else self._set_signature(sets, o, memo))
                        for r, d, o in items)
        memo[id(items)] = (items, sig)
        return sig

    # -- public ---------------------------------------------------------------------------
    def recognizes(self, text: str, lexing: str = "any") -> bool:
        """Whether ``text`` is a complete sentence under ``lexing`` ("any" or "greedy")."""
        if lexing == "any":
            sets, _ = self._any_chart(text)
            return self._complete(sets.get(len(text), set()))
        if lexing == "greedy":
            run = self._greedy_run(text)
            return run is not None and self._greedy_accepts_state(run, len(text))
        raise ValueError(f"unknown lexing {lexing!r}")

    def is_viable_prefix(self, text: str, lexing: str = "any", *, max_extra: int = 200,
                         alphabet=None, budget: int = 20000) -> bool:
        """Whether some continuation makes ``text`` a complete sentence (see module docstring)."""
        if lexing == "any":
            return self._any_viable(text)
        if lexing == "greedy":
            return self._greedy_viable(text, max_extra, alphabet, budget)
        raise ValueError(f"unknown lexing {lexing!r}")

    def representatives(self) -> list[str]:
        """One character per class of characters that every terminal automaton treats alike."""
        return list(_representatives(tuple(sorted(
            (f"{n}{i}", p) for n, t in self.grammar.terminals.items()
            for i, p in enumerate((t.pattern,) + t.exclude)))))


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
