"""Fewest bytes from a parser and lexer state to a complete sentence (a lower bound, usually
the exact distance), computed from the grammar instead of by search.

Per terminal automaton, each state's distance to acceptance; per symbol, its shortest text;
per alternative and dot, the shortest text of the symbols after the dot. An Earley column then
says what completing costs: finishing an item ``A -> x . T y`` costs ``len(T) + len(y)`` plus
what finishing ``A`` costs where ``A`` was predicted, recursively down the origins (a
shortest path within each column, since predictions there form a graph; memoized per column).
Greedy lexing (a lexeme the next byte would extend) and the JSON distinct-keys rule are not
modelled, so the true distance can be larger; a planner walks down the distances and checks
every byte with the real matcher.
"""
from __future__ import annotations

import heapq

import numpy as np

from ..automata import ByteDFA
from .earley import Column
from ..lru import LRUCache
from .runtime import Runtime, State

INF = 1 << 60


def dfa_distances(dfa: ByteDFA) -> np.ndarray:
    """Per state: the fewest bytes to an accepting state (INF when none)."""
    n = dfa.n_states
    dist = np.full(n, INF, dtype=np.int64)
    if n == 0:
        return dist
    dist[dfa.accepting] = 0
    trans = dfa.transitions
    live = trans >= 0
    safe = np.where(live, trans, 0)
    while True:
        via = np.where(live, dist[safe], INF).min(axis=1) + 1
        new = np.minimum(dist, via)
        if np.array_equal(new, dist):
            return dist
        dist = new


class ByteDistance:
    """``distance(state)``: fewest bytes from a runtime state to a complete sentence."""

    def __init__(self, runtime: Runtime) -> None:
        g = runtime.grammar
        self.runtime = runtime
        self.g = g
        nt = g.n_terminals
        self.term_dist = [dfa_distances(d) for d in g.dfas]
        n_sym = nt + len(g.nonterminal_names)
        minlen = [INF] * n_sym
        for t in range(nt):
            d = g.dfas[t]
            minlen[t] = int(self.term_dist[t][d.initial]) if d.initial >= 0 else INF
        changed = True
        while changed:
            changed = False
            for a, r in enumerate(g.rhs):
                total = sum(minlen[x] for x in r)
                if total < minlen[g.lhs[a]]:
                    minlen[g.lhs[a]] = total
                    changed = True
        self.minlen = minlen
        # after[a][d]: shortest text of rhs[a][d:]
        self.after = []
        for r in g.rhs:
            row = [0] * (len(r) + 1)
            for d in range(len(r) - 1, -1, -1):
                row[d] = min(INF, row[d + 1] + minlen[r[d]])
            self.after.append(row)
        self.start_lhs = g.lhs[0]
        self._up = LRUCache(4096)       # column id -> {nonterminal: cost once it completes}
        self._memo = LRUCache(65536)    # column id << 32 | lexer state -> distance

    def _up_table(self, col: Column) -> dict[int, int]:
        """Per nonterminal expected in ``col``: the fewest bytes to finish the sentence once it
        is complete (a shortest path over the column's predictions)."""
        got = self._up.get(col.id)
        if got is not None:
            return got
        g = self.g
        nt = g.n_terminals
        best: dict[int, int] = {}
        edges: dict[int, list[tuple[int, int]]] = {}   # lhs -> [(next symbol, weight)]
        heap: list[tuple[int, int]] = []
        for x in set(col.by_next) | set(col.static.by_next):
            if x < nt:
                continue
            for a, d, k in col.expecting(x):
                origin = col if k < 0 else col.origins[k]
                w = self.after[a][d + 1]
                lhs = g.lhs[a]
                if lhs == self.start_lhs:
                    base = 0
                elif origin is col:
                    edges.setdefault(lhs, []).append((x, w))
                    continue
                else:
                    base = self._up_table(origin).get(lhs, INF)
                cost = w + base
                if cost < best.get(x, INF):
                    best[x] = cost
                    heapq.heappush(heap, (cost, x))
        done: set[int] = set()
        while heap:
            cost, x = heapq.heappop(heap)
            if x in done or cost > best.get(x, INF):
                continue
            done.add(x)
            for y, w in edges.get(x, ()):
                c = cost + w
                if c < best.get(y, INF):
                    best[y] = c
                    heapq.heappush(heap, (c, y))
        self._up.put(col.id, best)
        return best

    def after_lexeme(self, col: Column, terminal: int) -> int:
        """Fewest bytes to finish the sentence after a lexeme of ``terminal`` read at ``col``."""
        g = self.g
        if terminal in g.ignore:
            return self.rest(col)
        up = None
        best = INF
        for a, d, k in col.expecting(terminal):
            origin = col if k < 0 else col.origins[k]
            lhs = g.lhs[a]
            if lhs == self.start_lhs:
                base = 0
            else:
                if origin is col:
                    if up is None:
                        up = self._up_table(col)
                    base = up.get(lhs, INF)
                else:
                    base = self._up_table(origin).get(lhs, INF)
            best = min(best, self.after[a][d + 1] + base)
        return best

    def rest(self, col: Column) -> int:
        """Fewest bytes to finish the sentence from ``col`` at a lexeme's start."""
        if col.complete:
            return 0
        best = INF
        for t in col.expected:
            best = min(best, self.minlen[t] + self.after_lexeme(col, t))
        return best

    def distance(self, state: State) -> int:
        """Fewest bytes from ``state`` to a complete sentence (INF when none is known)."""
        col, q = state
        key = col.id << 32 | q
        got = self._memo.get(key)
        if got is None:
            got = self._memo.put(key, self._distance(col, q))
        return got

    def _distance(self, col: Column, q: int) -> int:
        if q == 0:
            return self.rest(col)
        lexer = self.runtime.lexer(col.candidates)
        comps = lexer.components[q]
        best = INF
        for j, t in enumerate(lexer.order):
            c = int(comps[j])
            if c < 0:
                continue
            finish = int(self.term_dist[t][c])
            if finish >= INF:
                continue
            best = min(best, finish + self.after_lexeme(col, t))
        return best
