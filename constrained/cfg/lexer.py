"""The lexer of one candidate terminal set: the union DFA of its terminals, built eagerly.

At a lexeme start the candidates are the terminals the parser expects plus the ignored ones.
The lexer reads bytes while some candidate can still match an extension of the lexeme (every
terminal DFA is trimmed, so "some component alive" means exactly that); ``accepting_terms[q]``
names the candidates that fully match the lexeme in state ``q``. States are tuples of component
states numbered in BFS order from ``initial`` (0, the empty lexeme, never re-entered);
``max_states`` bounds the product.
"""
from __future__ import annotations

import numpy as np

from ..automata import ByteDFA
from ..errors import LimitExceededError


class Lexer:
    """Union DFA over the terminals ``terms`` (see the module docstring)."""

    def __init__(self, terms: frozenset[int], dfas: tuple[ByteDFA, ...],
                 max_states: int = 20_000) -> None:
        self.terms = terms
        order = sorted(terms)
        comps = [dfas[t] for t in order]
        # byte classes: bytes every component treats alike
        sig = np.concatenate([d.transitions for d in comps], axis=0).T if comps else \
            np.zeros((256, 0), np.int32)
        _, rep_index, cls = np.unique(sig, axis=0, return_index=True, return_inverse=True)
        cls = cls.reshape(-1)
        reps = np.asarray(rep_index)
        k = len(comps)
        init = tuple(d.initial for d in comps)
        # state 0 is the empty lexeme only: a component returning to its initial state later
        # gets a state of its own, so "q == 0" always means "nothing read yet"
        index: dict[tuple, int] = {}
        states = [init]
        rows: list[np.ndarray] = []
        i = 0
        while i < len(states):
            st = states[i]
            nxt = np.full((k, len(reps)), -1, dtype=np.int32)
            for c, (d, s) in enumerate(zip(comps, st)):
                if s >= 0:
                    nxt[c] = d.transitions[s, reps]
            row_cls = np.full(len(reps), -1, dtype=np.int32)
            alive = (nxt >= 0).any(axis=0)
            for j in np.nonzero(alive)[0]:
                key = tuple(nxt[:, j].tolist())
                sid = index.get(key)
                if sid is None:
                    sid = len(states)
                    if sid >= max_states:
                        raise LimitExceededError(
                            f"the lexer for terminals {self._names(order, dfas)} needs more "
                            f"than max_lexer_states={max_states} states")
                    index[key] = sid
                    states.append(key)
                row_cls[j] = sid
            rows.append(row_cls[cls])
            i += 1
        self.trans = np.ascontiguousarray(np.stack(rows).astype(np.int32))
        self.trans.setflags(write=False)
        self.rows: list[list[int]] = self.trans.tolist()
        acc = []
        for st in states:
            acc.append(frozenset(t for t, d, s in zip(order, comps, st)
                                 if s >= 0 and d.accepting[s]))
        self.accepting_terms: list[frozenset[int]] = acc
        self.acc_any = np.array([bool(a) for a in acc], dtype=bool)
        # states with the same accepted terminal set end a lexeme alike: one class each
        classes: dict[frozenset, int] = {}
        self.acc_class = np.array([classes.setdefault(a, len(classes)) for a in acc],
                                  dtype=np.int32)
        self.class_terms: list[frozenset[int]] = list(classes)
        self.acc_list: list[bool] = self.acc_any.tolist()
        self.order: tuple[int, ...] = tuple(order)      # terminal of each component
        self.components: list[tuple] = states           # component states of each state
        self.initial = 0

    @property
    def n_states(self) -> int:
        return len(self.rows)

    @staticmethod
    def _names(order, dfas) -> str:
        return ", ".join(str(t) for t in order[:8]) + (" ..." if len(order) > 8 else "")
