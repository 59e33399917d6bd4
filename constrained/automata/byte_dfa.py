"""The byte-level DFA of a regex: what every lexer and regex constraint walks.

``ByteDFA`` holds ``transitions`` (int32[n_states, 256], -1 = dead), ``accepting``
(bool[n_states]) and ``initial``. Every state can still reach acceptance ("live" means "the
prefix read so far is viable"), and states are numbered canonically (BFS from ``initial``), so
equal languages give equal arrays and equal ``key``. A DFA for the empty language has no states
and ``initial == -1``.

``regex_to_byte_dfa(pattern, max_states=...)`` builds one from Python ``re`` syntax (full match;
python_regex_nfa.py reads the common patterns, regex_syntax.py and byte_nfa.py the rest and
define the supported subset), raising RegexError with a position
on bad or unsupported input and LimitExceededError past ``max_states``. Results are memoized in
memory per (pattern, max_states). Literal patterns and alternations of literals (most JSON
Schema terminals) are built directly as tries (literal_dfa.py).
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from interegular import patterns as _p
from interegular.utils.simple_parser import NoMatch

from ..deadline import check_deadline
from ..errors import LimitExceededError, RegexError
from ..gc_untrack import untrack_all
from ..lru import LRUCache
from ._dfa_tables import class_columns, cycle_reach, future_rows, pair_product
from .alternation import top_alternatives
from .byte_nfa import ByteNFA, parse_to_nfa
from .determinize import determinize, minimize, union_tables
from .literal_dfa import literal_alternatives, literals_dfa
from .python_regex_nfa import python_regex_nfa
from .regex_syntax import check_and_rewrite

DEFAULT_MAX_STATES = 10_000


@dataclass(frozen=True, eq=False)
class ByteDFA:
    """A trimmed, minimal, canonically numbered DFA over bytes (see the module docstring)."""

    transitions: np.ndarray
    accepting: np.ndarray
    initial: int
    pattern: str = field(default="", compare=False)
    # the one text when the language is a single text (state i: its first i bytes read),
    # where the builder knew it: readers of such chains need not walk the table
    word: bytes | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.transitions.setflags(write=False)
        self.accepting.setflags(write=False)
        untrack_all(self)       # arrays and text: no cycle

    @property
    def n_states(self) -> int:
        return len(self.accepting)

    @cached_property
    def key(self) -> str:
        """Hex digest of the automaton (not of the pattern text): a cache key for token tables.
        It reads the table as its byte classes and one column per class, which determine it:
        a few hundred bytes where the 256 columns are tens of kilobytes. (A builder whose
        input determines the automaton may set a digest of that input instead: equal keys
        must mean equal automata, not the converse.)"""
        classes, columns = self._by_class
        h = hashlib.sha256(b"bytedfa-v2|")
        h.update(np.int64(self.initial).tobytes())
        h.update(classes.astype(np.uint8).tobytes())
        h.update(columns)
        h.update(np.ascontiguousarray(self.accepting, dtype=np.uint8).tobytes())
        return h.hexdigest()

    def given_future(self, state: int):
        """The name its builder gave to what the automaton accepts from ``state`` (a builder
        that knows its automata's structure sets ``state_futures``, indexable by state: equal
        names, in any automata, mean equal texts from there on), or None."""
        names = self.__dict__.get("state_futures")
        return None if names is None else names[state]

    def future_key(self, state: int) -> str:
        """Digest of the automaton read from ``state``: its reachable part numbered breadth-first
        from there. States (of any automata) with equal digests accept the same texts from there
        on, so a walk from them finds the same; for minimal automata the converse holds too.
        Kept per state."""
        futures = self.__dict__.get("_futures")
        if futures is None:
            futures = self.__dict__.setdefault("_futures", {})
        got = futures.get(state)
        if got is None:
            trans, accepting, run_ends = self._future_args
            rows = future_rows(trans, accepting, int(state), run_ends)
            got = futures[state] = hashlib.sha256(b"future-v1|" + rows).hexdigest()
        return got

    @cached_property
    def _future_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """future_rows' arguments: the table, the accepting flags as bytes, and where the
        runs of equal byte classes end (every row is constant on each run)."""
        classes = self.byte_classes
        run_ends = np.append(np.flatnonzero(classes[1:] != classes[:-1]) + 1, 256)
        return (np.ascontiguousarray(self.transitions, dtype=np.int32),
                np.ascontiguousarray(self.accepting, dtype=np.uint8),
                run_ends.astype(np.int32))

    @cached_property
    def cycle_states(self) -> np.ndarray:
        """uint8 per state: 1 where a cycle is reachable, so infinitely many texts lead on
        (the automaton is trimmed)."""
        reach = cycle_states(self.transitions)
        reach.setflags(write=False)
        return reach

    @cached_property
    def byte_classes(self) -> np.ndarray:
        """int32[256]: equal ids for bytes every state treats alike (equal columns)."""
        return self._by_class[0]

    @cached_property
    def _by_class(self) -> tuple[np.ndarray, bytes]:
        """(byte_classes, the table's columns of each class's first byte, int32 bytes)."""
        classes = np.zeros(256, dtype=np.int32)
        columns = b""
        if self.n_states:
            columns = class_columns(np.ascontiguousarray(self.transitions, dtype=np.int32),
                                    classes)
        classes.setflags(write=False)
        return classes, columns

    def step(self, state: int, byte: int) -> int:
        """Next state after one byte (-1 when dead); ``state`` -1 stays -1."""
        return -1 if state < 0 else int(self.transitions[state, byte])

    def walk(self, state: int, data: bytes) -> int:
        """State after reading ``data`` from ``state`` (-1 when the prefix stops being viable)."""
        rows = self._rows
        for b in data:
            if state < 0:
                return -1
            state = rows[state][b]
        return state

    def accepts(self, data: bytes) -> bool:
        """Whether ``data`` is a full match."""
        s = self.walk(self.initial, data)
        return s >= 0 and bool(self.accepting[s])

    def is_accepting(self, state: int) -> bool:
        return state >= 0 and bool(self.accepting[state])

    @cached_property
    def _rows(self) -> list[list[int]]:
        return self.transitions.tolist()

    @cached_property
    def n_live_bytes(self) -> np.ndarray:
        """int32[n_states]: how many bytes lead somewhere from each state."""
        return (self.transitions >= 0).sum(axis=1).astype(np.int32)

    @cached_property
    def forced_byte(self) -> np.ndarray:
        """int32[n_states]: the only possible next byte, or -1 (several, none, or accepting)."""
        only = (self.n_live_bytes == 1) & ~self.accepting
        out = np.full(self.n_states, -1, dtype=np.int32)
        if only.any():
            out[only] = np.argmax(self.transitions[only] >= 0, axis=1)
        return out

    def forced_bytes(self, state: int, limit: int = 1 << 16) -> bytes:
        """The bytes every continuation from ``state`` must start with (stops at a choice)."""
        out = bytearray()
        forced = self.forced_byte
        while state >= 0 and len(out) < limit:
            b = int(forced[state])
            if b < 0:
                break
            out.append(b)
            state = int(self.transitions[state, b])
        return bytes(out)


def _error_position(rewritten, exc: BaseException) -> int:
    index = getattr(exc, "index", None)
    if index is None:
        return 0
    return rewritten.original_position(index)


class _DFACache:
    """Built automata by (pattern, limit), least recently used first out, bounded by count
    and by the bytes of their tables (a tool-calling grammar brings thousands of terminals;
    compiling its tools again must not rebuild them)."""

    def __init__(self, max_entries: int = 8192, max_bytes: int = 64 << 20) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._items: "OrderedDict[tuple, ByteDFA]" = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> ByteDFA | None:
        with self._lock:
            dfa = self._items.get(key)
            if dfa is not None:
                self._items.move_to_end(key)
            return dfa

    def put(self, key: tuple, dfa: ByteDFA) -> None:
        size = dfa.transitions.nbytes
        with self._lock:
            if key in self._items or size > self.max_bytes // 4:
                return
            self._items[key] = dfa
            self._bytes += size
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self._bytes -= old.transitions.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_BUILT = _DFACache()


def _build(pattern: str, max_states: int) -> ByteDFA:
    """The DFA of ``pattern`` (cached; ``_build.cache_clear()`` empties the cache)."""
    key = (pattern, max_states)
    dfa = _BUILT.get(key)
    if dfa is None:
        dfa = _build_uncached(pattern, max_states)
        _BUILT.put(key, dfa)
    return dfa


_build.cache_clear = _BUILT.clear


# pattern -> an automaton of the same language built another way (see provide_dfa)
_PROVIDED = LRUCache(256)


def provide_dfa(pattern: str, dfa: ByteDFA) -> None:
    """Let ``regex_to_byte_dfa(pattern)`` return ``dfa``: for a caller that knows a small
    automaton of a pattern whose subset construction is slow (a union of thousands of
    alternatives). The two must have the same language."""
    _PROVIDED.put(pattern, dfa)


# pattern -> its DFA or None: the provided automata, then builders of pattern shapes other
# layers know a direct way to
_BUILDERS: list = [_PROVIDED.get]
# (pattern, max_states) -> LanguageFacts or None: what those builders know before building
_FACTS: list = []


@dataclass(frozen=True)
class LanguageFacts:
    """What a pattern's language holds, known before its automaton is built."""

    texts: bool         # some non-empty text
    empty_text: bool    # the empty text


def provide_builder(builder, facts=None) -> None:
    """Let ``builder(pattern) -> ByteDFA | None`` build the patterns it recognizes (the same
    language as the regex pipeline would give), also where they are alternatives of a union.
    ``facts(pattern, max_states) -> LanguageFacts | None``, where given, tells what the
    language of a pattern the builder recognizes holds without building it, for patterns
    whose automaton it surely builds within ``max_states`` (see deferred_facts)."""
    if builder not in _BUILDERS:
        _BUILDERS.append(builder)
    if facts is not None and facts not in _FACTS:
        _FACTS.append(facts)


def deferred_facts(pattern: str, max_states: int) -> LanguageFacts | None:
    """What ``pattern``'s language holds, when ``regex_to_byte_dfa(pattern, max_states)`` can
    be called later and surely succeeds (no syntax error, no state limit passed): a grammar
    then builds that automaton only when a lexer first needs it. None where building it is
    the way to know, or where it is built already (read it).

    Known for the patterns a provided builder vouches for, and for unions (see
    _build_uncached) whose alternatives' automata (built now: each is cached on its own, and
    most recur across grammars) bound the union's states below the limit: alternatives that
    start with pairwise different bytes are copied side by side under a new initial state (1
    + the sum of their states), others go through a subset construction whose subsets hold
    at most one state of each alternative's automaton (1 + the product of their states + 1).
    A union holds what its alternatives hold."""
    if _BUILT.get((pattern, max_states)) is not None:
        return None
    for facts in _FACTS:
        found = facts(pattern, max_states)
        if found is not None:
            return found
    alternatives = top_alternatives(pattern)
    if alternatives is None or literal_alternatives(pattern):
        return None     # (sets of literal texts are tries, built at once)
    try:
        parts = [_build(a, max_states) for a in alternatives]
    except (RegexError, LimitExceededError):
        check_deadline("building a terminal's automaton")
        return None     # (building the whole pattern reports the error at its place)
    taken = np.zeros(256, dtype=bool)
    side_by_side, product, disjoint = 1, 1, True
    texts = empty_text = False
    for part in parts:
        if part.initial < 0:
            continue
        first = part.transitions[part.initial] >= 0
        disjoint = disjoint and not (first & taken).any()
        taken |= first
        side_by_side += part.n_states
        product = min(product * (part.n_states + 1), max_states + 1)
        texts = texts or bool(first.any())
        empty_text = empty_text or bool(part.accepting[part.initial])
    bound = side_by_side if disjoint else product + 1
    return LanguageFacts(texts, empty_text) if bound <= max_states else None


def _build_uncached(pattern: str, max_states: int) -> ByteDFA:
    provided = None
    for builder in _BUILDERS:
        provided = builder(pattern)
        if provided is not None:
            break
    if provided is not None:
        if provided.n_states > max_states:
            # minimal: every automaton of the language has as many states
            raise LimitExceededError(f"regex DFA exceeds max_states={max_states} states")
        if provided.pattern == pattern:     # (keeps what its builder set: key, classes)
            return provided
        return ByteDFA(provided.transitions, provided.accepting, provided.initial, pattern)
    words = literal_alternatives(pattern)
    built = literals_dfa(words, max_states) if words else None
    if built is not None:
        return ByteDFA(*built, pattern, word=words[0] if len(words) == 1 else None)
    alternatives = top_alternatives(pattern)
    if alternatives is not None:
        try:
            parts = [_build(a, max_states) for a in alternatives]
            tables = [(p.transitions, p.accepting, p.initial) for p in parts]
            merged = union_tables(tables, [p.byte_classes for p in parts], max_states)
            return dfa_from_arrays(*merged, pattern)
        except (RegexError, LimitExceededError):
            # the whole pattern's own reading reports the error at its place (a passed
            # compile deadline is reported at once)
            check_deadline("building a terminal's automaton")
    return _build_general(pattern, max_states)


def _build_general(pattern: str, max_states: int) -> ByteDFA:
    max_nodes = max(64 * max_states, 100_000)
    nfa = python_regex_nfa(pattern, max_nodes)
    if nfa is None:
        nfa = _full_reader_nfa(pattern, max_nodes)
    return dfa_from_arrays(*determinize(nfa, max_states), pattern)


def _full_reader_nfa(pattern: str, max_nodes: int) -> ByteNFA:
    rewritten = check_and_rewrite(pattern)
    try:
        return parse_to_nfa(rewritten.text, max_nodes=max_nodes)
    except (_p.Unsupported, _p.InvalidSyntax, NoMatch) as exc:
        detail = str(exc) or "not supported by the regex reader"
        raise RegexError(f"unsupported regex construct: {detail}",
                         position=_error_position(rewritten, exc)) from None
    except RecursionError:
        raise LimitExceededError("regex nesting is too deep") from None


def cycle_states(trans: np.ndarray) -> np.ndarray:
    """uint8 per state of a transition table (int[n, 256], -1 for none): 1 where a cycle is
    reachable, so, in a trimmed automaton, where infinitely many texts lead on (in C:
    ``_dfa_tables.cycle_reach``)."""
    reach = np.zeros(len(trans), dtype=np.uint8)
    cycle_reach(np.ascontiguousarray(trans, dtype=np.int32), reach)
    return reach


def dfa_from_arrays(trans: np.ndarray, accepting: np.ndarray, initial: int,
                    pattern: str = "") -> ByteDFA:
    """The ByteDFA of a transition table (-1 = dead), accepting flags and initial state:
    trimmed, minimized and numbered canonically (no states when the language is empty):
    minimization drops the states that cannot reach acceptance and those never reached."""
    return ByteDFA(*minimize(trans, accepting, initial), pattern)


def regex_to_byte_dfa(pattern: str, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """Byte-level DFA of the full matches of ``pattern`` (Python ``re`` syntax, ASCII classes).

    Raises RegexError (with ``position``) on invalid or unsupported syntax and
    LimitExceededError when the automaton needs more than ``max_states`` states.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, not {type(pattern).__name__}")
    return _build(pattern, int(max_states))


def regex_difference_dfa(pattern: str, excluded: tuple[str, ...],
                         max_states: int = DEFAULT_MAX_STATES,
                         base: ByteDFA | None = None) -> ByteDFA:
    """Byte-level DFA of the full matches of ``pattern`` that are full matches of none of
    ``excluded`` (a language difference no regex syntax here can state); ``base`` is the DFA
    of ``pattern`` when the caller built it. Errors as ``regex_to_byte_dfa``;
    LimitExceededError past ``max_states`` product states."""
    if base is None:
        base = regex_to_byte_dfa(pattern, max_states)
    elif base.n_states > max_states:
        raise LimitExceededError(f"the automaton has {base.n_states} states; the limit is "
                                 f"{max_states}")
    if not excluded:
        return base
    return _difference(base, tuple(excluded), int(max_states))


@lru_cache(maxsize=64)
def _difference(a: ByteDFA, excluded: tuple[str, ...], max_states: int) -> ByteDFA:
    b = regex_to_byte_dfa("|".join(f"(?:{e})" for e in excluded), max_states)
    label = a.pattern + "".join(f" minus {e}" for e in excluded)
    if a.n_states == 0:
        return ByteDFA(a.transitions, a.accepting, a.initial, label)
    # product states (state of a, state of b or -1 once b is dead), breadth first
    found = pair_product(np.ascontiguousarray(a.transitions, dtype=np.int32),
                         np.ascontiguousarray(b.transitions, dtype=np.int32), int(a.initial),
                         int(b.initial) if b.n_states else -1, int(max_states))
    if found is None:
        raise LimitExceededError(f"the difference of {a.pattern!r} and its excluded "
                                 f"patterns needs more than {max_states} states")
    trans = np.frombuffer(found[0], dtype=np.int32).reshape(-1, 256)
    pairs = np.frombuffer(found[1], dtype=np.int32).reshape(-1, 2)
    b_acc = np.concatenate([b.accepting, [False]])            # index -1: b is dead
    acc = a.accepting[pairs[:, 0]] & ~b_acc[pairs[:, 1]]
    return dfa_from_arrays(trans, acc, 0, label)


def dfas_intersect(a: ByteDFA, b: ByteDFA, max_pairs: int = 200_000) -> bool:
    """Whether some byte string is accepted by both (a breadth-first walk of state pairs;
    both automata are trimmed, so every reachable pair may still lead somewhere).
    LimitExceededError past ``max_pairs`` pairs."""
    if a.n_states == 0 or b.n_states == 0:
        return False
    seen = {(a.initial, b.initial)}
    todo = [(a.initial, b.initial)]
    while todo:
        qa, qb = todo.pop()
        if a.accepting[qa] and b.accepting[qb]:
            return True
        ta, tb = a.transitions[qa], b.transitions[qb]
        both = (ta >= 0) & (tb >= 0)
        for pair in set(zip(ta[both].tolist(), tb[both].tolist())):
            if pair not in seen:
                if len(seen) >= max_pairs:
                    raise LimitExceededError(f"intersection of {a.pattern!r} and "
                                             f"{b.pattern!r} exceeds {max_pairs} states")
                seen.add(pair)
                todo.append(pair)
    return False

