"""The right quotient of a grammar by a suffix: the texts ``x`` with ``x + suffix`` a sentence.

Infill needs it: the middle of ``prefix + middle + suffix`` is viable exactly when
``prefix + middle`` is a viable prefix of the quotient, so the quotient's own masks are the
middle's masks. The quotient of a context-free language by a string is context-free; this module
builds it as a ``Grammar`` over the original terminals and a few new ones.

The suffix is read as the lexer would read the whole text: the lexeme that holds the suffix's
first byte either began in ``x`` (a *cut* lexeme ``u + suffix[:p]``, ``u`` not empty) or begins
with the suffix (then ``x`` ends at a lexeme's end, and the lexer must end that lexeme there: its
terminal and the ignored ones cannot take the suffix's first byte). Every lexeme ends where no
candidate takes the next byte; the candidates known here are the lexeme's own terminal and the
ignored ones. Then:

- ``T/p``: the non-empty texts ``u`` whose lexeme ``u + suffix[:p]`` ends at ``p`` as ``T``;
  ``T/stop``: lexemes of ``T`` that the suffix's first byte does not extend;
- ``A/j`` (cut inside ``A``) and ``A/j|`` (``x`` ends at a lexeme's end inside ``A``): the
  texts ``x`` such that ``x + suffix[:j]`` derives from ``A``. For ``A: X1 .. Xm``, the cut lies
  in some ``Xk`` and ``Xk+1 .. Xm`` derive the suffix's lexemes from ``p`` to ``j``, so
  ``A/j: X1 .. Xk-1 Xk/p``; an ignored lexeme may be the cut one between two symbols;
- which symbols derive which stretch of the suffix comes from a right-to-left Earley pass over
  the suffix's lexemes, predicting symbols to *end* at a position (starting with the start
  symbol at the suffix's end), with direct left recursion turned into right recursion first, so
  the work grows linearly with a list's length;
- ignored terminals become explicit (``$ignored`` between the symbols of every rule), since no
  ignored lexeme may follow the cut lexeme.

Limit: a lexeme that another expected terminal would extend across the cut (a keyword the
suffix turns into an identifier) is kept as the quotient reads it; infill checks the end of the
middle on the whole text. A suffix no text can precede gives EmptyLanguageError.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

import numpy as np

from ..automata import ByteDFA
from ..automata.byte_dfa import dfa_from_arrays
from ..errors import EmptyLanguageError, LimitExceededError
from ..grammar import Grammar, Terminal
from ..grammar._analysis import derivable
from .prepare import PreparedGrammar, prepare_grammar

_QUOTIENT_START = "$quotient"
_DEAD_ROW = np.full(256, -1, dtype=np.int32)
_IGNORED = "$ignored"     # ignored lexemes are explicit: none may follow the cut lexeme


def right_quotient(grammar: Grammar, suffix: bytes, *, max_rules: int = 100_000,
                   max_dfa_states: int = 10_000, max_chart_items: int = 2_000_000) -> Grammar:
    """The grammar of the texts ``x`` such that ``x + suffix`` is a sentence of ``grammar``.

    Raises EmptyLanguageError when no text fits before ``suffix``, LimitExceededError past
    ``max_rules`` alternatives or ``max_chart_items`` items of the suffix's chart.
    """
    suffix = bytes(suffix)
    if not suffix:
        return grammar
    prepared = prepare_grammar(grammar, max_rules=max_rules, max_dfa_states=max_dfa_states)
    return _Quotient(prepared, grammar, suffix, max_rules, max_chart_items,
                     max_dfa_states).build()


class _Quotient:
    def __init__(self, g: PreparedGrammar, grammar: Grammar, suffix: bytes, max_rules: int,
                 max_items: int, max_dfa_states: int = 10_000) -> None:
        self.g = g
        self.grammar = grammar
        self.s = suffix
        self.n = len(suffix)
        self.max_rules = max_rules
        self.max_items = max_items
        self.max_dfa_states = max_dfa_states
        self.n_items = 0
        self.digest = "before suffix " + hashlib.sha256(suffix).hexdigest()[:16]
        self.nt = g.n_terminals
        self.lexemes = self._lexemes()        # (terminal, start) -> end
        self.cuts = self._cuts()              # terminal -> {p: ByteDFA}
        self.ignore_reach = self._ignore_reach()
        self._right_recursive()
        self._chart()

    # lexemes of the suffix ---------------------------------------------------------------------
    # A lexeme ends where no candidate terminal takes the next byte. The candidates known here
    # are the lexeme's own terminal and the ignored ones (expected everywhere).
    def _others(self, t: int) -> list[ByteDFA]:
        return [self.g.dfas[w] for w in sorted(self.g.ignore)
                if w != t and self.g.dfas[w].initial >= 0]

    def _lexemes(self) -> dict[tuple[int, int], int]:
        """The lexeme of every terminal at every position of the suffix, where it has one."""
        s, n = self.s, self.n
        budget = [self.max_items]

        def run(dfa: ByteDFA, i: int) -> tuple[int, int]:
            """(position where ``dfa`` stops reading from ``i``, its state there)."""
            rows = dfa._rows
            q, j = dfa.initial, i
            while j < n:
                nq = rows[q][s[j]]
                if nq < 0:
                    break
                q, j = nq, j + 1
            budget[0] -= j - i + 1
            if budget[0] < 0:
                raise LimitExceededError(f"reading the infill suffix ({n} bytes) takes more than "
                                         f"max_chart_items={self.max_items} lexer steps")
            return j, q

        ignored_end = {w: [run(self.g.dfas[w], i)[0] for i in range(n)]
                       for w in self.g.ignore if self.g.dfas[w].initial >= 0}
        out: dict[tuple[int, int], int] = {}
        for t, dfa in enumerate(self.g.dfas):
            if dfa.initial < 0:
                continue
            first = dfa._rows[dfa.initial]
            others = [ends for w, ends in ignored_end.items() if w != t]
            for i in range(n):
                if first[s[i]] < 0:
                    continue
                j, q = run(dfa, i)
                if dfa.accepting[q] and all(ends[i] <= j for ends in others):
                    out[(t, i)] = j
        return out

    def _with_others(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The product of terminal ``t``'s DFA with the other candidates' (``t`` alive): its
        transitions and, per state, the components' states (-1: that candidate is dead)."""
        dfa = self.g.dfas[t]
        others = self._others(t)
        if not others:
            return np.asarray(dfa.transitions), np.arange(dfa.n_states, dtype=np.int32)[:, None]
        dfas = [dfa] + others
        start = tuple(d.initial for d in dfas)
        ids = {start: 0}
        order = [start]
        rows = []
        limit = self.max_dfa_states
        k = 0
        while k < len(order):
            comps = order[k]
            k += 1
            nxt = [d.transitions[c] if c >= 0 else _DEAD_ROW for d, c in zip(dfas, comps)]
            row = np.full(256, -1, dtype=np.int32)
            for b in np.nonzero(nxt[0] >= 0)[0].tolist():
                key = tuple(int(x[b]) for x in nxt)
                got = ids.get(key)
                if got is None:
                    got = ids[key] = len(order)
                    order.append(key)
                    if len(order) > limit:
                        raise LimitExceededError(
                            f"terminal {self.g.symbol_name(t)} with the ignored terminals needs "
                            f"more than max_dfa_states={limit} states")
                row[b] = got
            rows.append(row)
        return np.stack(rows), np.array(order, dtype=np.int32)

    def _taking(self, t: int, comps: np.ndarray, byte: int) -> np.ndarray:
        """Per product state: whether some candidate takes ``byte`` (``comps`` as above)."""
        dfas = [self.g.dfas[t]] + self._others(t)
        out = np.zeros(len(comps), dtype=bool)
        for c, d in enumerate(dfas):
            col = comps[:, c]
            ok = col >= 0
            out[ok] |= d.transitions[col[ok], byte] >= 0
        return out

    def _cuts(self) -> dict[int, dict[int, ByteDFA]]:
        """Per terminal and cut ``p``: the DFA of the non-empty texts ``u`` whose lexeme
        ``u + s[:p]`` ends at ``p`` as a full match of the terminal."""
        s, n = self.s, self.n
        out: dict[int, dict[int, ByteDFA]] = {}
        for t, dfa in enumerate(self.g.dfas):
            if dfa.initial < 0:
                continue
            trans, comps = self._with_others(t)
            dfas = [dfa] + self._others(t)
            t_acc = dfa.accepting
            alive = np.arange(len(trans))
            cur = comps.copy()
            ends: dict[int, list[int]] = {}
            for p in range(n + 1):
                self.n_items += len(alive)
                if self.n_items > self.max_items:
                    raise LimitExceededError(
                        f"reading the infill suffix ({n} bytes) takes more than "
                        f"max_chart_items={self.max_items} lexer steps")
                if p == n:
                    done = t_acc[cur[:, 0]]
                    if done.any():
                        ends.setdefault(p, []).extend(alive[done].tolist())
                    break
                b = s[p]
                takes = np.zeros(len(cur), dtype=bool)
                nxt = np.full(cur.shape, -1, dtype=np.int32)
                for c, d in enumerate(dfas):
                    col = cur[:, c]
                    ok = col >= 0
                    nxt[ok, c] = d.transitions[col[ok], b]
                    takes |= nxt[:, c] >= 0
                if p > 0:
                    ended = ~takes & t_acc[cur[:, 0]]
                    if ended.any():
                        ends.setdefault(p, []).extend(alive[ended].tolist())
                keep = nxt[:, 0] >= 0          # the lexeme goes on as one of t
                alive, cur = alive[keep], nxt[keep]
                if not len(alive):
                    break
            for p, starts in ends.items():
                accepting = np.zeros(len(trans), dtype=bool)
                accepting[starts] = True
                # u is not empty: a fresh initial state that is never accepting
                cut = dfa_from_arrays(np.vstack([trans, trans[0:1]]),
                                      np.concatenate([accepting, [False]]), len(trans),
                                      f"{dfa.pattern} before {s[:p]!r}")
                if cut.initial >= 0:
                    out.setdefault(t, {})[p] = cut
        return out

    def _ignore_reach(self) -> list[list[int]]:
        """Per position ``i``: the positions reached from ``i`` by ignored lexemes (``i`` too)."""
        n = self.n
        step = [[] for _ in range(n + 1)]
        for (t, i), j in self.lexemes.items():
            if t in self.g.ignore:
                step[i].append(j)
        reach = []
        for i in range(n + 1):
            seen, todo = {i}, [i]
            while todo:
                for j in step[todo.pop()]:
                    if j not in seen:
                        seen.add(j)
                        todo.append(j)
            reach.append(sorted(seen))
        return reach

    def _right_recursive(self) -> None:
        """The rules with direct left recursion ``X: X a | b`` turned into ``X: b X'`` and
        ``X': a X' | <empty>`` (same language): read from the right, a left-recursive list
        would make every one of its sublists a constituent."""
        g = self.g
        names = [g.symbol_name(x) for x in range(self.nt + len(g.nonterminal_names))]
        lhs, rhs = list(g.lhs), list(g.rhs)
        by_lhs = {k: list(v) for k, v in g.by_lhs.items()}
        for x, alts in list(by_lhs.items()):
            rec = [a for a in alts if rhs[a] and rhs[a][0] == x and len(rhs[a]) > 1]
            if not rec:
                continue
            base = [a for a in alts if not (rhs[a] and rhs[a][0] == x)]
            tail = len(names)
            names.append(f"{names[x]}@tail")
            new_alts = []
            for a in base:
                rhs[a] = rhs[a] + (tail,)
                new_alts.append(a)
            by_lhs[x] = new_alts
            by_lhs[tail] = []
            for a in rec:
                lhs[a] = tail
                rhs[a] = rhs[a][1:] + (tail,)
                by_lhs[tail].append(a)
            lhs.append(tail)
            rhs.append(())
            by_lhs[tail].append(len(rhs) - 1)
        self.names, self.lhs, self.rhs = names, lhs, rhs
        self.by_lhs = {k: tuple(v) for k, v in by_lhs.items()}
        self.nullable = frozenset(derivable(zip(lhs, rhs)))

    # the chart of complete constituents inside the suffix ----------------------------------------
    def _chart(self) -> None:
        """Right-to-left Earley over the suffix's lexemes: symbols are predicted to *end* at a
        position (an anchor), starting with the start symbol where only ignored lexemes follow;
        ``tails[(alt, d)]`` = {(i, k)}: ``rhs[alt][d:]`` derives the lexemes from ``i`` to ``k``
        (at least one; ``k`` the end of the last), ``lhs[alt]`` predicted to end at ``k``."""
        nt, n = self.nt, self.n
        lhs, rhs, nullable = self.lhs, self.rhs, self.nullable
        self.after = [[] for _ in range(n + 1)]   # after[i]: positions j with i in reach[j]
        for j, reach in enumerate(self.ignore_reach):
            for i in reach:
                self.after[i].append(j)
        lex_end: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for (t, i), j in self.lexemes.items():
            if t not in self.g.ignore:
                lex_end[j].append((t, i))
        uses: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for a, r in enumerate(rhs):
            for d, sym in enumerate(r):
                uses[sym].append((a, d))
        self.rest_nullable = rest_nullable = [
            [all(x in nullable for x in r[d + 1:]) for d in range(len(r))] for r in rhs]
        predicted: set[tuple[int, int]] = set()
        ends_of: dict[tuple[int, int], set[int]] = defaultdict(set)    # (sym, i) -> {j}
        starts_of: dict[tuple[int, int], set[int]] = defaultdict(set)  # (sym, j) -> {i}
        tails: dict[tuple[int, int], set[tuple[int, int]]] = defaultdict(set)
        tails_from: dict[tuple[int, int, int], set[int]] = defaultdict(set)  # (a, d, i) -> {k}
        agenda: list[tuple] = [("p", lhs[0], k) for k in range(n + 1)
                               if n in self.ignore_reach[k]]
        max_items = self.max_items
        while agenda:
            entry = agenda.pop()
            kind = entry[0]
            if kind == "p":                       # predict: sym ends at k
                _, y, k = entry
                if (y, k) in predicted:
                    continue
                predicted.add((y, k))
                if y < nt:
                    for t, i in lex_end.get(k, ()):
                        if t == y:
                            agenda.append(("c", y, i, k))
                    continue
                for a in self.by_lhs.get(y, ()):
                    r = rhs[a]
                    for d in range(len(r) - 1, -1, -1):
                        agenda.append(("p", r[d], k))
                        for i in starts_of.get((r[d], k), ()):
                            agenda.append(("t", a, d, i, k))
                        if r[d] not in nullable:
                            break
            elif kind == "c":                     # a complete constituent x over [i, j]
                _, x, i, j = entry
                if j in ends_of[(x, i)]:
                    continue
                ends_of[(x, i)].add(j)
                starts_of[(x, j)].add(i)
                for a, d in uses.get(x, ()):
                    if rest_nullable[a][d] and (lhs[a], j) in predicted:
                        agenda.append(("t", a, d, i, j))
                    if d + 1 < len(rhs[a]):
                        for i2 in self.ignore_reach[j]:
                            for k in tails_from.get((a, d + 1, i2), ()):
                                agenda.append(("t", a, d, i, k))
            else:                                 # a tail: rhs[a][d:] over [i, k]
                _, a, d, i, k = entry
                if (i, k) in tails[(a, d)]:
                    continue
                self.n_items += 1
                if self.n_items > max_items:
                    raise LimitExceededError(
                        f"the chart of the infill suffix ({n} bytes) needs more than "
                        f"max_chart_items={max_items} items")
                tails[(a, d)].add((i, k))
                tails_from[(a, d, i)].add(k)
                if d == 0:
                    agenda.append(("c", lhs[a], i, k))
                    continue
                prev = rhs[a][d - 1]
                if prev in nullable:
                    agenda.append(("t", a, d - 1, i, k))
                for j0 in self.after[i]:
                    agenda.append(("p", prev, j0))
                    for i0 in starts_of.get((prev, j0), ()):
                        agenda.append(("t", a, d - 1, i0, k))
        self.tails = tails
        self.ends_of = ends_of

    # the quotient grammar -----------------------------------------------------------------------
    def build(self) -> Grammar:
        g, n = self.g, self.n
        names = self.names
        gap = self._gap
        rules: dict[str, list[tuple[str, ...]]] = {}
        for sym, alts in self.by_lhs.items():
            if sym != self.lhs[0]:
                rules[names[sym]] = [gap(tuple(names[x] for x in self.rhs[a])) for a in alts]
        self.rules = rules
        self.terminals = {names[t]: self._terminal(names[t], g.dfas[t], self.grammar)
                          for t in range(self.nt)}
        self.wanted: list[tuple[int, int, bool]] = []
        self.q_alts: dict[tuple[int, int, bool], list[tuple[str, ...]]] = {}
        self.stop_done: set[int] = set()
        self.fits_memo: dict[tuple[int, int], dict[int, set[int]]] = {}
        self.ignore_cuts = [(w, p) for w in sorted(g.ignore) for p in sorted(self.cuts.get(w, {}))]
        start = self.rhs[0][0]
        lead = (_IGNORED,) if g.ignore else ()
        reach0 = self.ignore_reach[0]
        top: list[tuple[str, ...]] = []
        for j in range(1, n + 1):
            if n in self.ignore_reach[j]:
                # the cut lexeme began in the text (inside start), or the text ends at a
                # lexeme's end and start's lexemes go on in the suffix
                top.append(lead + (self._q(start, j, False),))
                top.append(lead + (self._q(start, j, True),))
        for w, p in self.ignore_cuts:
            if n in self.ignore_reach[p]:
                top.append(lead + (names[start],) + lead + (self._cut(w, p),))
            if self._spans_to_end(start, p):    # only ignored lexemes before the cut one
                top.append(lead + (self._cut(w, p),))
        if n in reach0:     # the suffix is ignored lexemes only: a whole sentence before it
            top.extend(lead + alt for alt in self._stop_seq((start,)))
        if self._spans_to_end(start, 0):
            top.append(())      # the suffix alone is a sentence: nothing or ignored lexemes
            if g.ignore:
                top.append((self._ignored_stop(),))
        n_alts = len(top) + sum(len(a) for a in rules.values())
        while self.wanted:
            key = self.wanted.pop()
            alts = self.q_alts[key]
            self._quotient_alts(*key, alts)
            n_alts += len(alts)
            if n_alts > self.max_rules:
                raise LimitExceededError(f"the quotient by the infill suffix needs more than "
                                         f"max_rules={self.max_rules} alternatives")
        for (sym, j, bd), alts in self.q_alts.items():
            rules[self._q_name(sym, j, bd)] = list(dict.fromkeys(alts))
        if g.ignore:
            rules[_IGNORED] = [()] + [(_IGNORED, names[w]) for w in sorted(g.ignore)]
        productive = derivable(((name, alt) for name, alts in rules.items() for alt in alts),
                               self.terminals)
        if not any(all(x in productive for x in alt) for alt in top):
            raise EmptyLanguageError(f"no text can precede the suffix {self.s[:40]!r}: the "
                                     "grammar cannot end with it")
        rules[_QUOTIENT_START] = list(dict.fromkeys(top))
        return Grammar(start=_QUOTIENT_START,
                       rules={k: tuple(v) for k, v in rules.items()},
                       terminals=self.terminals, ignore=(),
                       source=f"quotient of {self.grammar.source or 'grammar'}",
                       distinct_keys=self.grammar.distinct_keys,
                       distinct_arrays=tuple(x for x in self.grammar.distinct_arrays
                                             if x in self.terminals))

    def _spans_to_end(self, sym: int, p: int) -> bool:
        """Whether ``sym`` can derive the rest of the suffix after ``p`` (ignored lexemes
        allowed around it)."""
        reach, n = self.ignore_reach, self.n
        if sym in self.nullable and n in reach[p]:
            return True
        return any(n in reach[k] for i in reach[p] for k in self.ends_of.get((sym, i), ()))

    def _q_name(self, sym: int, j: int, boundary: bool) -> str:
        return f"{self.names[sym]}/{j}" + ("|" if boundary else "")

    def _q(self, sym: int, j: int, boundary: bool) -> str:
        """The rule of the texts ``x`` (non-empty) with ``x + s[:j]`` derived from ``sym``:
        the cut lexeme began in ``x`` (``boundary`` False) or ``x`` ends at a lexeme's end."""
        key = (sym, j, boundary)
        if key not in self.q_alts:
            self.q_alts[key] = []
            self.wanted.append(key)
        return self._q_name(sym, j, boundary)

    def _fits(self, a: int, d: int) -> dict[int, set[int]]:
        """For ``rhs[a][d:]`` (non-empty in the suffix): p -> ends ``j`` when they start
        after ``p`` (ignored lexemes allowed in between)."""
        got = self.fits_memo.get((a, d))
        if got is None:
            got = defaultdict(set)
            for i, k in self.tails.get((a, d), ()):
                for p in self.after[i]:
                    got[p].add(k)
            self.fits_memo[(a, d)] = got
        return got

    def _quotient_alts(self, sym: int, j: int, boundary: bool, alts: list) -> None:
        names, gap = self.names, self._gap
        for a in self.by_lhs.get(sym, ()):
            r = self.rhs[a]
            m = len(r)
            for k, x in enumerate(r):
                head = tuple(names[y] for y in r[:k])
                rest = self._fits(a, k + 1) if k + 1 < m else {}
                rest_empty = self.rest_nullable[a][k]
                ends_at = [p for p, ends in rest.items() if j in ends]
                if rest_empty:
                    ends_at.append(j)
                ends_at = sorted(set(ends_at))
                ends_at = [p for p in ends_at if p >= 1]
                if not boundary:
                    # the cut lexeme inside x
                    for p in ends_at:
                        if x < self.nt:
                            if p in self.cuts.get(x, {}):
                                alts.append(gap(head + (self._cut(x, p),)))
                        else:
                            alts.append(gap(head + (self._q(x, p, False),)))
                    # an ignored lexeme cut just before x, x and the rest in the suffix
                    if k:
                        here = self._fits(a, k)
                        for w, p in self.ignore_cuts:
                            if j in here.get(p, ()):
                                alts.append(gap(head + (self._cut(w, p),)))
                else:
                    # the text ends inside x, at a lexeme's end
                    if x >= self.nt:
                        for p in ends_at:
                            alts.append(gap(head + (self._q(x, p, True),)))
                    # the text ends after r[:k] (non-empty), x and the rest in the suffix
                    if k:
                        here = self._fits(a, k)
                        if j in here.get(0, ()):
                            alts.extend(self._stop_seq(r[:k]))
    def _cut(self, t: int, p: int) -> str:
        """The terminal of the non-empty texts ``u`` whose lexeme ``u + s[:p]`` is a longest
        match of terminal ``t``."""
        name = f"{self.names[t]}/{p}"
        if name not in self.terminals:
            dfa = self.cuts[t][p]
            self.terminals[name] = Terminal(name, f"({dfa.pattern}) {self.digest}",
                                            automaton=dfa)
        return name

    def _stop(self, sym: int) -> str:
        """The non-empty derivations of ``sym`` whose last lexeme its terminal cannot extend
        by the suffix's first byte (the lexer ends it there)."""
        g, names = self.g, self.names
        name = f"{names[sym]}/stop"
        if sym in self.stop_done:
            return name
        self.stop_done.add(sym)
        if sym < self.nt:
            dfa = g.dfas[sym]
            trans, comps = self._with_others(sym)
            accepting = dfa.accepting[comps[:, 0]] & ~self._taking(sym, comps, self.s[0])
            auto = dfa_from_arrays(trans, accepting, 0, f"{dfa.pattern} then {self.s[:1]!r}")
            if auto.initial >= 0:
                self.terminals[name] = Terminal(name, f"({auto.pattern}) {self.digest}",
                                                automaton=auto)
            else:
                self.rules[name] = []        # no such lexeme: an unproductive rule
            return name
        self.rules[name] = []
        alts = [alt for a in self.by_lhs.get(sym, ()) for alt in self._stop_seq(self.rhs[a])]
        self.rules[name] = list(dict.fromkeys(alts))
        return name

    def _stop_seq(self, symbols: tuple[int, ...]) -> list[tuple[str, ...]]:
        """Alternatives deriving ``symbols`` (non-empty) so that the last lexeme, a symbol's or
        an ignored one after it, is not extended by the suffix's first byte."""
        out = []
        names, gap = self.names, self._gap
        for last in range(len(symbols) - 1, -1, -1):
            head = tuple(names[y] for y in symbols[:last])
            out.append(gap(head + (self._stop(symbols[last]),)))
            if self.g.ignore:
                out.append(gap(head + (names[symbols[last]],)) + (self._ignored_stop(),))
            if symbols[last] not in self.nullable:
                break
        return out

    def _ignored_stop(self) -> str:
        """Ignored lexemes ending with one the suffix's first byte does not extend."""
        name = _IGNORED + "/stop"
        if name not in self.rules:
            self.rules[name] = [(_IGNORED, self._stop(w)) for w in sorted(self.g.ignore)]
        return name

    def _gap(self, symbols: tuple[str, ...]) -> tuple[str, ...]:
        """``symbols`` with ignored lexemes allowed between each two (none after the last:
        a cut lexeme is followed by the suffix itself)."""
        if not self.g.ignore or len(symbols) < 2:
            return symbols
        out: list[str] = [symbols[0]]
        for x in symbols[1:]:
            out += [_IGNORED, x]
        return tuple(out)

    @staticmethod
    def _terminal(name: str, dfa: ByteDFA, grammar: Grammar) -> Terminal:
        original = grammar.terminals.get(name)
        pattern = original.pattern if original is not None else dfa.pattern
        priority = original.priority if original is not None else 0
        return Terminal(name, f"{pattern}", priority=priority, automaton=dfa)
