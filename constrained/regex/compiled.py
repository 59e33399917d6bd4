"""A regex compiled against a vocabulary: byte DFA + per-state packed masks, cached on disk."""
from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from ..automata import DEFAULT_MAX_STATES, ByteDFA, regex_to_byte_dfa
from ..automata.disk_cache import cache_name, load_arrays, save_arrays
from ..automata.token_table import TokenTable
from ..bitmask import bitmask_words
from ..matching import CompiledGrammar, vocabulary_facts
from ..errors import RegexError
from ..grammar import Grammar
from ..vocabulary import Vocabulary

# with precompute="auto", masks are computed at compile time, nearest states first, until this
# many seconds of CPU time have been spent (masks already on disk cost nothing; CPU time, so a
# busy machine does not change what gets computed); the rest come on first visit
AUTO_PRECOMPUTE_SECONDS = 0.5


class CompiledRegex(CompiledGrammar):
    """Immutable and thread-safe; per-state masks are filled lazily under a lock."""

    def __init__(self, grammar: Grammar, vocab: Vocabulary, dfa: ByteDFA, table: TokenTable):
        self.grammar = grammar
        self.vocab = vocab
        self.dfa = dfa
        self.table = table
        self.words = bitmask_words(vocab.size)
        facts = vocabulary_facts(vocab)
        self.eos_mask = facts.eos_mask
        self._masks: list[np.ndarray | None] = [None] * dfa.n_states
        self._lock = threading.Lock()
        # hot-path lookups for matchers
        self.eos_ids = facts.eos_ids
        self.special_ids = facts.special_ids

    def matcher(self):
        from .matcher import RegexMatcher
        return RegexMatcher(self)

    def state_mask(self, state: int) -> np.ndarray:
        """Packed mask of the tokens allowed from DFA ``state`` (EOS when accepting)."""
        m = self._masks[state]
        if m is None:
            with self._lock:
                m = self._masks[state]
                if m is None:
                    m = self.table.row(state).mask
                    if self.dfa.accepting[state]:
                        m = m | self.eos_mask
                    m.setflags(write=False)
                    self._masks[state] = m
        return m

    def precompute(self, budget_s: float | None = None) -> bool:
        """Compute state masks now, nearest to the start first; True when all are done.

        ``budget_s`` stops after that many seconds of CPU time (None: no limit).
        """
        deadline = None if budget_s is None else time.process_time() + budget_s
        for s in self._bfs_order():
            self.state_mask(s)
            if deadline is not None and time.process_time() > deadline:
                return all(m is not None for m in self._masks)
        return True

    def save_cache(self) -> bool:
        """Write the masks computed so far to the disk cache (compile does it once itself)."""
        return self.table.save()

    def _bfs_order(self) -> list[int]:
        trans = self.dfa.transitions
        seen = {self.dfa.initial}
        order, queue = [], deque([self.dfa.initial])
        while queue:
            s = queue.popleft()
            order.append(s)
            for t in dict.fromkeys(trans[s][trans[s] >= 0].tolist()):
                if t not in seen:
                    seen.add(t)
                    queue.append(t)
        return order

    def __repr__(self) -> str:
        return (f"CompiledRegex({self.grammar.regex!r}, states={self.dfa.n_states}, "
                f"vocab={self.vocab!r})")


def _load_dfa(name: str, pattern: str) -> ByteDFA | None:
    data = load_arrays(name)
    if data is None:
        return None
    try:
        trans, acc = data["transitions"], data["accepting"]
        initial = int(np.asarray(data["initial"]).reshape(-1)[0])
        n = len(acc)
        if (trans.dtype != np.int32 or trans.shape != (n, 256) or acc.dtype != bool
                or not (0 <= initial < n) or (n and (trans.min() < -1 or trans.max() >= n))):
            return None
        return ByteDFA(trans, acc, initial, pattern)
    except (KeyError, ValueError, TypeError):
        return None


def _dfa_for(pattern: str, max_states: int, use_cache: bool) -> ByteDFA:
    name = cache_name("regexdfa", "v2", pattern, str(max_states))
    dfa = _load_dfa(name, pattern) if use_cache else None
    if dfa is None:
        dfa = regex_to_byte_dfa(pattern, max_states=max_states)
        if use_cache and dfa.n_states:
            save_arrays(name, {"transitions": dfa.transitions, "accepting": dfa.accepting,
                               "initial": np.int64(dfa.initial)})
    return dfa


def compile_regex(grammar: Grammar, vocab: Vocabulary, *, max_states: int = DEFAULT_MAX_STATES,
                  cache: bool = True, precompute: bool | str = "auto",
                  **other_options) -> CompiledRegex:
    """Compile a single-regex grammar (see compile_grammar for the options).

    Options meant for the context-free engine (``other_options``) do not apply to a regex and
    are ignored, so callers can pass one set of options for any grammar.
    """
    pattern = grammar.regex
    if pattern is None:
        raise ValueError("compile_regex needs a grammar made by Grammar.from_regex")
    dfa = _dfa_for(pattern, int(max_states), cache)
    if dfa.initial < 0:
        raise RegexError("the regex matches no string at all", position=0)
    table = TokenTable.get(dfa, vocab, disk_cache=cache)
    compiled = CompiledRegex(grammar, vocab, dfa, table)
    if precompute is True:
        compiled.precompute()
    elif precompute == "auto":
        compiled.precompute(AUTO_PRECOMPUTE_SECONDS)
    else:
        compiled.state_mask(dfa.initial)
    table.save()
    return compiled
