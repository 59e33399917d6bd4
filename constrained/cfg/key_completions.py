"""The texts that complete a JSON key from a state of one terminal's automaton.

The distinct-keys check (cfg.distinct_strings) asks, for a lexer state inside a key, which
decoded texts can still close the key: a key text is dead when every completion spells a key
its object already has. A lexer's state is a tuple of its terminals' states and it accepts
what they accept, so the answer is the union of the terminals' own, and those are kept here
process-wide, per (automaton, state): the automata of key names recur in every lexer, and
every schema, that has them.

A finite key language can still have too many texts to list (``"[a-z]{1,10}"``): the texts
are counted first (one pass over the automaton's states) and listed only when few.
"""
from __future__ import annotations

from ..automata import ByteDFA
from ..automata.finite import count_paths, state_exits
from ..gc_untrack import untrack_all
from ..lru import LRUCache
from .json_scan import decoded_prefix

MAX_COMPLETIONS = 4096      # more completions than this are not listed
_QUOTE = 0x22

# automaton key -> (exits per state, accepted texts counted from a state)
_FACTS = LRUCache(4096)
# (automaton key, state) -> completions, or _NONE
_COMPLETIONS = LRUCache(16_384)
_NONE = frozenset([None])


def automaton_completions(dfa: ByteDFA, q: int) -> frozenset | None:
    """The decoded texts that complete a key from state ``q`` of ``dfa`` when the text
    before ``q`` ends at a character boundary; None when more than MAX_COMPLETIONS, when
    infinitely many, or when some text from ``q`` ends other than at a closing quote or goes
    on past an unescaped quote (a lexeme holding more than a key)."""
    if dfa.word is not None:
        return word_completions(dfa.word, q)
    key = (dfa.key, q)
    got = _COMPLETIONS.get(key)
    if got is None:
        got = _list(dfa, q)
        if got is None:
            got = _NONE
        else:
            untrack_all(got)
        got = _COMPLETIONS.put(key, got)
    return None if got is _NONE else got


def _list(dfa: ByteDFA, q: int) -> frozenset | None:
    if dfa.cycle_states[q]:
        return None
    exits, counts = _facts(dfa)
    if count_paths(exits, dfa.accepting, q, counts, MAX_COMPLETIONS) > MAX_COMPLETIONS:
        return None
    accepting = dfa.accepting
    out = set()
    stack = [(q, b"")]
    while stack:
        s, raw = stack.pop()
        partial = decoded_prefix(raw)[1]
        for b, nxt in exits[s]:
            if b == _QUOTE and not partial:
                if not accepting[nxt]:
                    return None
                out.add(decoded_prefix(raw)[0])
                continue
            if accepting[nxt]:
                return None
            stack.append((nxt, raw + bytes((b,))))
    return frozenset(out)


def word_completions(word: bytes, q: int) -> frozenset | None:
    """automaton_completions for the automaton of the single text ``word`` (a chain: state
    ``q`` has read ``word[:q]``), read off the text: the walk below, along its one path."""
    raw = b""
    last = len(word)
    for i in range(q, last):
        b = word[i]
        if b == _QUOTE and not decoded_prefix(raw)[1]:
            if i + 1 != last:
                return None     # a text going on past the key's closing quote
            return frozenset((decoded_prefix(raw)[0],))
        if i + 1 == last:
            return None         # a text ending other than at a closing quote
        raw += word[i:i + 1]
    return frozenset()          # q is the accepting end: nothing leads on


def _facts(dfa: ByteDFA) -> tuple[list, dict]:
    """(the (byte, target) exits of every state, a memo of count_paths), per automaton."""
    got = _FACTS.get(dfa.key)
    if got is None:
        exits = state_exits(dfa.transitions)
        got = (exits, {})
        untrack_all(exits, got)     # ints, in tuples, in a list
        got = _FACTS.put(dfa.key, got)
    return got
