"""Matchers for JSON grammars whose objects never repeat a key and whose arrays of distinct
strings (``uniqueItems``) never repeat an item.

A JSON Schema grammar lets an object's members come in any order, or lets extra members
follow a pattern, without writing out which keys were used: the grammar would grow
exponentially (and an array's distinct items cannot be written out at all). Its matcher adds
the one fact the grammar leaves out. A token is allowed iff the grammar allows it and

- it completes no key the same object already has (no item its array already has; strings
  compare decoded), and
- where it ends inside a key (an item), some completion of that text is a string the
  container does not have yet (the grammar's own automaton is walked along the existing
  ones).

The grammar keeps the rest exact: it counts the members written (required ones apart) and
never offers another member once no unused key can be written, and bounds an array of
distinct strings by the number of strings its items may be; so these two rules are all that
stands between a state and a dead end. The tokens the rules can touch spell part of an
existing string; they are found by lookups (cfg.key_index), so a mask costs the grammar's
mask plus a handful of token checks. An array is one of distinct strings when the terminal
that lexed its bracket is one the grammar names (``Grammar.distinct_arrays``).
"""
from __future__ import annotations

from collections import Counter
from itertools import chain

import numpy as np

from ..bitmask import allowed_token_ids, clear_bits
from ..errors import DeadEndError, LimitExceededError
from ..lru import LRUCache
from .json_scan import (INITIAL, IN_STRING, KEY, KEY_ESC, KEY_NEXT, KEY_OPEN, STRING,
                        STRING_ESC, VALUE, Items, decode_key, decoded_prefix, scan)
from ._assemble import allowed_ids
from ..gc_untrack import untrack_all
from .key_completions import MAX_COMPLETIONS, automaton_completions, word_completions
from .key_index import ESCAPED, key_index
from .matcher import _TERMINATED, CFGMatcher

_MAX_WALK = 200_000      # states of one walk along the existing keys
_CACHE_SIZE = 16_384     # (grammar state, scan state) pairs whose forbidden tokens are kept
_MASKED_CACHE_SIZE = 512  # and whose masks without them are kept (16 KB each for llama3)
_QUOTE = 0x22
# what a token's text up to its last quote leaves (see DistinctStringsMatcher._after_head)
_REPEATS, _OUTSIDE, _EMPTY, _CHECK = "duplicate", "outside", "empty", "check"


class _SharedFacts:
    """What the matchers of one compiled grammar learn and share (made with its first
    matcher: a matcher per sequence then costs a lookup)."""

    __slots__ = ("forbidden", "masked", "never_bad", "separators", "free", "closing_verdicts",
                 "array_terms")

    def __init__(self, compiled) -> None:
        # what each (grammar state, scan state) forbids
        self.forbidden: dict = {}
        # and the masks of the most recent states where it forbids some
        self.masked = LRUCache(_MASKED_CACHE_SIZE)
        # per (grammar state, scan phase, innermost container's kind): the tokens whose
        # verdict holds whatever the keys written (they close no string and end in a key
        # with infinitely many completions)
        self.never_bad: dict = {}
        # per such place: the grammar's tokens there that may open a key after a separator,
        # safe ones left out (as of the safe set's size), those that may close the key being
        # read and open another, and whether the safe ones were learnt (see _separator_tokens)
        self.separators: dict = {}
        # the places (see _place) where no key may open at a token's start and no allowed
        # token opens one after a separator or closes the key being read and opens another:
        # a mask there is the grammar's whenever the key being read (if any) is a prefix of
        # no used key
        self.free: set = set()
        # per (closing place, token): whether a token that starts by closing a value string
        # is safe whatever the keys written (see _closing_place)
        self.closing_verdicts: dict = {}
        # the terminals that open arrays of distinct strings
        names = set(compiled.grammar.distinct_arrays)
        self.array_terms = frozenset(i for i, n in enumerate(compiled.prepared.terminal_names)
                                     if n in names) if names else frozenset()


class DistinctStringsMatcher(CFGMatcher):
    """A CFGMatcher that also keeps every JSON object's keys (and every array of distinct
    strings' items) distinct.

    ``state_key`` (the exact state) includes the keys written; ``search_key`` (the coarse key
    of completion searches) is the grammar's alone: states that differ only in the keys
    written are merged there, the first one reached standing for the others (a search
    replays what it finds, so merging can cost it a completion, never validity)."""

    def __init__(self, compiled) -> None:
        super().__init__(compiled)
        self._scans: list = [INITIAL]
        shared = compiled.__dict__.get("_distinct_shared")
        if shared is None:      # the first matcher of this grammar
            shared = compiled.__dict__.setdefault("_distinct_shared", _SharedFacts(compiled))
        self._cache = shared.forbidden
        self._masked = shared.masked
        self._never_bad = shared.never_bad
        self._separators = shared.separators
        self._free = shared.free
        self._closing_verdicts = shared.closing_verdicts
        self._array_terms = shared.array_terms
        self._index = None

    # masks ---------------------------------------------------------------------------------
    def _current_mask(self) -> np.ndarray:
        mask = super()._current_mask()
        state = self._stack[-1]
        if state is _TERMINATED:
            return mask
        scanned = self._scans[-1]
        if _place(state, scanned) in self._free and not _key_rests(scanned)[0]:
            return mask
        key = (state, scanned)
        bad = self._cache.get(key)
        if bad is None:
            bad = self._forbidden(state, scanned, mask)
            untrack_all(bad, key)   # token ids; a state and what the scan found
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = bad
        if not bad:
            return mask
        masked = self._masked.get(key)
        if masked is None:
            masked = mask.copy()
            clear_bits(masked, bad)
            if not masked.any():
                raise DeadEndError(f"no token can follow after {len(self._stack) - 1} accepted "
                                   f"steps: every continuation repeats a key of its object")
            masked.setflags(write=False)
            masked = self._masked.put(key, masked)
        return masked

    def _forbidden(self, state, scanned, mask: np.ndarray) -> list[int]:
        frames, phase, key_raw = scanned
        index = self._index
        if index is None:
            index = self._index = key_index(self.compiled.vocab)
        string_start = phase == KEY_OPEN or phase == KEY_NEXT or (
            phase == VALUE and frames and type(frames[-1]) is Items)
        context = ESCAPED if phase == KEY_ESC or phase == STRING_ESC else phase in IN_STRING
        in_key = phase == KEY or phase == KEY_ESC
        rests, partial = _key_rests(scanned)
        if not string_start and not rests:
            return self._separator_tokens(index, context, in_key, state, scanned, mask)
        parts = list(index.new_keys(context, frames,
                                    frames[-1] if string_start else None))
        crossing: list = []
        if in_key:
            if rests and partial:      # inside an escape: every allowed token is checked
                parts.append(allowed_token_ids(mask, self.compiled.vocab.size).astype(np.int32))
            elif rests:
                parts += index.current_key(rests)
            # tokens that close the key and open another one (rarely allowed in a key)
            crossing = allowed_ids(mask, [index.crossers_in[context]])
        found = allowed_ids(mask, parts) if parts else []
        if not found and not crossing:
            return []
        return self._repeating(state, scanned, dict.fromkeys(found + crossing))

    def _separator_tokens(self, index, context, in_key: bool, state, scanned,
                          mask: np.ndarray) -> list[int]:
        """The forbidden tokens where no key may open at the token's start and the key being
        read (if any) is a prefix of no used key: then only a token that opens a key after a
        separator in it (or closes this key and opens another) can repeat one. Few such
        tokens are ever allowed; those whose key text fits a used key are checked (and every
        one closing this key)."""
        where = _place(state, scanned)
        safe = self._safe_tokens(where)
        known = self._separators.get(where)
        if known is None or known[0] is not safe or known[1] != len(safe) or not known[4]:
            allowed = [t for t in allowed_ids(mask, [index.sep_any[context]]) if t not in safe]
            # met again: a token whose key text fits no used key is never checked below, so
            # those safe whatever the keys written are learnt now (a place met once, as most
            # of a first document's are, need not pay for what only later visits use)
            learnt = known is not None and known[0] is safe
            if allowed and learnt and not known[4]:
                self._learn_safe(state, scanned, allowed, safe)
                allowed = [t for t in allowed if t not in safe]
            crossers = allowed_ids(mask, [index.crossers_in[context]]) if in_key else []
            known = (safe, len(safe), allowed, crossers, learnt)
            if len(self._separators) >= _CACHE_SIZE:
                self._separators.clear()
            self._separators[where] = known
            untrack_all(known[2], known[3], where)
        allowed, check = known[2], list(known[3])
        if not allowed and not check:
            # so wherever this place is met with a key that is a prefix of no used key: the
            # safe set only grows, so no token will be allowed here later
            if len(self._free) >= _CACHE_SIZE:
                self._free.clear()
            self._free.add(where)
            return []
        if allowed:
            always = index.sep_always[context]
            texts = index.sep_texts[context]
            frames = [f for f in scanned[0] if f]
            for t in allowed:
                if t in always:
                    check.append(t)
                    continue
                # a key text after a separator fits a container when it is one of its
                # strings (closed in the token) or a prefix of one (left open)
                for text, whole in texts[t]:
                    if whole:
                        fits = any(text in used for used in frames)
                    elif not text:
                        fits = bool(frames)
                    else:
                        fits = _starts_any(text, frames)
                    if fits:
                        check.append(t)
                        break
        return self._repeating(state, scanned, dict.fromkeys(check))

    def _repeating(self, state, scanned, check) -> list[int]:
        """The tokens of ``check`` (allowed by the grammar at ``state``) that repeat a string or
        leave a key at a prefix whose every completion repeats one.

        A token is cut after its last quote: the scan of the head (one per distinct head)
        finds a repeated string, or where the text stands; the tail has no quote, so it only
        extends the key the head leaves open (if any), and is judged by walking the lexer of
        the state after the head over it. A tail the lexer reads across a lexeme's end (and
        a head opening an array the grammar must classify) is checked in full."""
        heads: dict = {}
        tokens = self._tokens
        bad = []
        safe = self._safe_tokens(_place(state, scanned))
        value_string = scanned[1] == STRING
        for t in check:
            if t in safe:
                continue
            data = tokens[t]
            cut = data.rfind(b'"') + 1
            head = data[:cut]
            after = heads.get(head)
            if after is None:
                after = heads[head] = self._after_head(state, scanned, head)
            if after is _OUTSIDE:
                if _closes_no_key(head, scanned[1]):
                    safe.add(t)     # whatever the keys written
                continue
            if after is _EMPTY:
                continue
            if after is not _CHECK:
                if after is _REPEATS:
                    bad.append(t)
                    continue
                key_raw, nq, lexer, used = after
                tail = data[cut:]
                raw = key_raw + tail
                rows = lexer.rows
                for b in tail:
                    nq = rows[nq][b]
                    if nq < 0:
                        break
                if nq >= 0:
                    if lexer.infinite[nq]:      # infinitely many keys go on from there
                        if not cut or (not key_raw and _opens_key_only(head, value_string)):
                            safe.add(t)     # whatever the keys written
                        continue
                    walk = _KeyWalk.of(lexer, used)
                    ends = walk.completions(nq) if b"\\" not in raw else None
                    if ends is not None:    # finitely many: is one unused?
                        if all(raw + end in used for end in ends):
                            bad.append(t)
                    elif not walk.live(nq, raw):
                        bad.append(t)
                    continue
                written, partial = decoded_prefix(raw)
                if not partial and not _starts_some(written, used):
                    continue
            if self._keeps_keys_distinct(scanned, data, state) is None:
                bad.append(t)
        return bad

    def _learn_safe(self, state, scanned, tokens: list[int], safe: set) -> None:
        """Adds to ``safe`` the ``tokens`` that close no key and end outside any key read
        from ``scanned``, and those that only open a key and end in it where infinitely
        many keys go on (their verdict holds whatever the keys written). Others are left:
        judging them costs a walk of their head."""
        phase = scanned[1]
        ends: dict = {}         # head -> whether it ends outside any key
        opening = []
        closing = self._closing_place(state, scanned)
        learnt, pending = self._closing_verdicts, []
        for t in tokens:
            data = self._tokens[t]
            if closing is not None and data[:1] == b'"':
                known = learnt.get((closing, t))
                if known is not None:
                    if known:
                        safe.add(t)
                    continue
                pending.append(t)
            head = data[:data.rfind(b'"') + 1]
            outside = ends.get(head)
            if outside is None:
                outside = _closes_no_key(head, phase) and not (
                    self._array_terms and b"[" in head)
                if outside:
                    after = scan(scanned, head)
                    outside = after is not None and after[1] != KEY and after[1] != KEY_ESC
                ends[head] = outside
            if outside:
                safe.add(t)
            elif _opens_key_only(head, phase == STRING):
                opening.append(t)
        if opening:
            self._repeating(state, scanned, opening)
        if pending:
            if len(learnt) >= _CACHE_SIZE:
                learnt.clear()
            # a token judged in a container without strings yet may hold elsewhere
            judged = bool(scanned[0][-1])
            for t in pending:
                if t in safe or judged:
                    learnt[(closing, t)] = t in safe

    def _closing_place(self, state, scanned) -> tuple | None:
        """Inside a value string: what decides the verdict of a token that starts by closing
        it (the column, the lexer state after the quote, the kinds of the containers around),
        which a string's positions share; None elsewhere."""
        if scanned[1] != STRING or not scanned[0]:
            return None
        col, q = state
        after = self._runtime.lexer(col.candidates).rows[q][_QUOTE]
        if after < 0:
            return None
        place = (col.id, after, tuple([type(f) is Items for f in scanned[0]]))
        untrack_all(place)      # ints and booleans
        return place

    def _safe_tokens(self, where: tuple) -> set:
        """The tokens known to repeat nothing whatever the keys written at ``where`` (a
        grammar state, scan phase and innermost container's kind): they close no key and end
        in a key with infinitely many completions, or in none."""
        safe = self._never_bad.get(where)
        if safe is None:
            if len(self._never_bad) >= _CACHE_SIZE:
                self._never_bad.clear()
            safe = self._never_bad[where] = set()
            untrack_all(safe, where)    # token ids; a state, a phase, a class
        return safe

    def _after_head(self, state, scanned, head: bytes):
        """Where the text stands after ``head`` (empty, or ending at a quote): _REPEATS
        when it repeats a string, _OUTSIDE when it is outside any key and _EMPTY inside a key
        of a container without strings (no text without a quote can then repeat one),
        _CHECK when its tokens must be checked in full, else (key text so far, lexer state,
        lexer, the container's strings)."""
        if head and self._array_terms and b"[" in head:
            return _CHECK
        after = scan(scanned, head) if head else scanned
        if after is None:
            return _REPEATS
        open_key = _key_in_use(after)
        if open_key is None:
            return _OUTSIDE if after[1] != KEY and after[1] != KEY_ESC else _EMPTY
        used, key_raw = open_key
        moved = self._runtime.step(state, head) if head else state
        if moved is None:
            return _CHECK
        col, q = moved
        lexer = self._runtime.lexer(col.candidates)
        return key_raw, q, lexer, used

    def _keeps_keys_distinct(self, scanned, data: bytes, before, after=None) -> tuple | None:
        """The scan state after ``data`` when it repeats no string and does not end at a
        prefix whose completions all repeat one; else None. ``before`` is the grammar state
        before ``data`` (``after`` the one after it, when known)."""
        opens = ()
        if self._array_terms and b"[" in data:
            opens = self._distinct_array_opens(before, data)
        scanned = scan(scanned, data, opens)
        if scanned is None:
            return None
        open_key = _key_in_use(scanned)
        if open_key is None:
            return scanned
        used, key_raw = open_key
        if not _may_repeat(key_raw, used):
            return scanned
        written, partial = decoded_prefix(key_raw)
        if not _starts_some(written, used):
            return scanned
        if after is None:
            after = self._runtime.step(before, data)
        if after is None or not unused_key_reachable(self._runtime, after, key_raw, used):
            return None
        return scanned

    def _distinct_array_opens(self, before, data: bytes) -> frozenset:
        """Offsets of the brackets in ``data`` that the grammar lexes as opening an array of
        distinct strings."""
        out = set()
        runtime = self._runtime
        state, done = before, 0
        i = data.find(b"[")
        while i >= 0:
            state = runtime.step(state, data[done:i + 1])
            if state is None:
                break
            done = i + 1
            col, q = state
            lexer = runtime.lexer(col.candidates)
            if q and lexer.acc_list[q] and lexer.accepting_terms[q] & self._array_terms:
                out.add(i)
            i = data.find(b"[", done)
        return frozenset(out)

    # steps -----------------------------------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        before = len(self._stack)
        if not super().accept_token(token_id):
            return False
        return self._follow(before, self._tokens[int(token_id)]
                            if self._stack[-1] is not _TERMINATED else b"")

    def accept_bytes(self, data: bytes) -> bool:
        before = len(self._stack)
        if not super().accept_bytes(data):
            return False
        return self._follow(before, bytes(data))

    def _follow(self, before: int, data: bytes) -> bool:
        after = self._keeps_keys_distinct(self._scans[-1], data, self._stack[before - 1],
                                          self._stack[-1])
        if after is None:
            del self._stack[before:]
            return False
        self._scans.append(after)
        return True

    def reserve_keys(self, by_depth: dict[int, frozenset[bytes]]) -> None:
        """Treat ``by_depth[k]`` as keys already written in the object open at depth ``k``
        (1 the outermost), for the rest of this matcher's text: an infill middle must not
        write the keys its suffix will write. Objects closed and opened later are new."""
        frames, phase, raw = self._scans[-1]
        frames = list(frames)
        for depth, keys in by_depth.items():
            k = depth - 1
            if 0 <= k < len(frames) and isinstance(frames[k], frozenset) \
                    and not isinstance(frames[k], Items):
                frames[k] = frames[k] | keys
        self._scans[-1] = (tuple(frames), phase, raw)

    def looping_bytes(self) -> np.ndarray:
        """The grammar's looping bytes that leave the scan as it is too."""
        loop = super().looping_bytes()
        state, scanned = self._stack[-1], self._scans[-1]
        for b in np.flatnonzero(loop).tolist():
            if self._keeps_keys_distinct(scanned, bytes((b,)), state, state) != scanned:
                loop[b] = False
        return loop

    def relaxed(self) -> CFGMatcher:
        """A matcher of the grammar alone at this state: its language holds this one's (keys
        may repeat there), so its fewest-token completions are a lower bound on this one's,
        and equal to them when the completion it finds is accepted here too."""
        plain = CFGMatcher(self.compiled)
        plain._stack = [self._stack[-1]]
        return plain

    def state_key(self):
        """The exact state: the grammar's and the scan's."""
        return (self._stack[-1], self._scans[-1])

    def rollback(self, n_tokens: int = 1) -> None:
        super().rollback(n_tokens)
        del self._scans[len(self._stack):]

    def reset(self) -> None:
        super().reset()
        self._scans = [INITIAL]


def _key_rests(scanned) -> tuple[list[bytes] | tuple, bytes]:
    """Inside a key that may still become one of its object's keys: the rest of each such
    key after the text written, and the unfinished escape the text ends in; else ((), b"")."""
    frames, phase, key_raw = scanned
    if (phase == KEY or phase == KEY_ESC) and _may_repeat(key_raw, frames[-1]):
        written, partial = decoded_prefix(key_raw)
        return [k[len(written):] for k in frames[-1] if k.startswith(written)], partial
    return (), b""


def _key_in_use(scanned) -> tuple | None:
    """(the innermost container's strings, the raw text of its key being read) when the scan
    state is inside a key (an item) of a container that already has strings, else None:
    only then can the text go on to repeat one."""
    frames, phase, key_raw = scanned
    if (phase != KEY and phase != KEY_ESC) or not frames[-1]:
        return None
    return frames[-1], key_raw


def _opens_key_only(head: bytes, value_string: bool) -> bool:
    """Whether ``head`` (ending at a quote) closes no key: it is separators and whitespace,
    then that quote (after the quote closing the value string being read, if
    ``value_string``)."""
    if value_string:
        if head[:1] != b'"':
            return False
        head = head[1:]
    return len(head) > 0 and not head[:-1].strip(b" \t\r\n,:")


def _place(state, scanned) -> tuple:
    """What a token's verdict whatever the keys written depends on: the grammar state, the
    scan phase and the innermost container's kind."""
    frames = scanned[0]
    return (state, scanned[1], type(frames[-1]) if frames else None)


def _closes_no_key(head: bytes, phase: int) -> bool:
    """Whether ``head`` read in scan ``phase`` surely closes no key (no item): outside a
    string its one quote opens one; in a value string, of two quotes at most one closes it
    and the other opens a string. (A key closes only after a quote that opens it.)"""
    quotes = head.count(b'"')
    if phase == STRING or phase == STRING_ESC:
        return quotes <= 2
    return quotes <= 1 and phase != KEY and phase != KEY_ESC


def _may_repeat(key_raw: bytes, used: frozenset) -> bool:
    """Whether a string whose raw text so far is ``key_raw`` may still become one of ``used``
    (a cheap test first: an escape spells at least one byte in six, so a text much longer
    than every used string is none of them; long texts are never decoded per token)."""
    return bool(used) and len(key_raw) <= 6 * max(map(len, used)) + 12


def unused_key_reachable(runtime, state, key_raw: bytes, used: frozenset) -> bool:
    """Whether the key lexeme at grammar ``state`` (whose text so far is ``key_raw``) can be
    completed to a key not in ``used``. Walks the lexer's automaton along the existing keys:
    a byte that leaves them, or an automaton state with infinitely many completions, finds
    an unused key (lexer states are live: each has a completion). The answers for the nodes
    walked are kept per (lexer, used keys): the tokens of one mask, and the masks of one key,
    walk the same few nodes."""
    col, q = state
    return _KeyWalk.of(runtime.lexer(col.candidates), used).live(int(q), key_raw)


class _KeyWalk:
    """Which (lexer state, key text) nodes of one lexer reach a key outside ``used``."""

    __slots__ = ("used", "acc", "rows", "exits", "infinite", "table", "byte_class", "memo",
                 "suffixes", "components", "parts")

    @classmethod
    def of(cls, lexer, used: frozenset) -> "_KeyWalk":
        walks = lexer.memo.get("key_walks")
        if walks is None:
            walks = lexer.memo.setdefault("key_walks", LRUCache(64))
        walk = walks.recent.get(used) or walks.get(used)
        return walk if walk is not None else walks.put(used, cls(lexer, used))

    def __init__(self, lexer, used: frozenset) -> None:
        self.used = used
        self.acc = lexer.acc_list
        self.rows = lexer.rows
        self.table = lexer.table
        self.byte_class = lexer.byte_class
        self.exits: dict = lexer.memo.setdefault("exits", {})
        self.infinite: list[bool] = lexer.infinite
        self.suffixes: dict = lexer.memo.setdefault("key_suffixes", {})  # see _suffixes
        self.components = lexer.components
        self.parts = lexer.parts
        self.memo: dict = {}        # node -> bool
        untrack_all(self)           # refers to a lexer's tables, never to itself

    def _out(self, q: int) -> tuple:
        out = self.exits.get(q)
        if out is None:
            row = self.table[q].take(self.byte_class)
            live = np.flatnonzero(row >= 0)
            out = self.exits[q] = tuple(zip(live.tolist(), row[live].tolist()))
        return out

    def _enter(self, q: int, raw: bytes):
        """(node, answer): the answer when known without walking below, else None."""
        written, partial = decoded_prefix(raw)
        if not partial and not _starts_some(written, self.used):
            return None, True
        if self.infinite[q]:
            return None, True
        node = (q, written, raw[-12:] if partial else b"", bool(partial))
        return node, self.memo.get(node)

    def _suffixes(self, q: int) -> frozenset | None:
        """The decoded texts that complete a key from lexer state ``q`` (which reaches no
        cycle: finitely many) when the text before ``q`` ends at a character boundary; None
        past MAX_COMPLETIONS of them, or when some text from ``q`` ends other than at a closing
        quote or goes on past an unescaped quote (a lexeme holding more than the key: the
        walk decides). The union of the live components' own (cfg.key_completions);
        kept per lexer: they do not depend on the keys written."""
        got = self.suffixes.get(q, False)
        if got is not False:
            return got
        out: set | None = set()
        for c, s in enumerate(self.components[q].tolist()):
            if s >= 0:
                part = self.parts[c]
                part = word_completions(part, s) if isinstance(part, bytes) else \
                    automaton_completions(part, s)
                if part is None:
                    out = None
                    break
                out |= part
                if len(out) > MAX_COMPLETIONS:
                    out = None
                    break
        got = self.suffixes[q] = None if out is None else frozenset(out)
        untrack_all(got)
        return got

    def completions(self, q: int) -> frozenset | None:
        """_suffixes(q) when finitely many texts lead on from ``q`` (else None)."""
        return None if self.infinite[q] else self._suffixes(q)

    def live(self, q: int, raw: bytes) -> bool:
        node, answer = self._enter(q, raw)
        if answer is not None:
            return answer
        if not node[3]:
            suffixes = self._suffixes(q)
            if suffixes is not None:
                # distinct completions, more than the used keys they could spell: one of
                # them is unused
                used, written = self.used, node[1]
                answer = self.memo[node] = len(suffixes) > _starting(written, used) or any(
                    written + x not in used for x in suffixes)
                return answer
        memo, acc, used = self.memo, self.acc, self.used
        stack = [(node, raw, iter(self._out(q)))]
        walked = 0
        while stack:
            node, raw, it = stack[-1]
            partial = node[3]
            for b, nxt in it:
                if b == _QUOTE and not partial and acc[nxt]:
                    if decode_key(raw) not in used:
                        break
                    continue
                child_raw = raw + bytes((b,))
                child, answer = self._enter(nxt, child_raw)
                if answer is None:
                    walked += 1
                    if walked > _MAX_WALK:
                        raise LimitExceededError("the duplicate-key check walked more than "
                                                 f"{_MAX_WALK} states of one key's completions")
                    stack.append((child, child_raw, iter(self._out(nxt))))
                    break
                if answer:
                    break
            else:
                memo[node] = False
                stack.pop()
                continue
            if stack[-1][0] is node:        # an unused key below: every node walked reaches it
                for n, _, _ in stack:
                    memo[n] = True
                return True
        return False


_PREFIXES = LRUCache(256)      # key set -> every prefix of its keys, with its count
_KEY_PREFIXES = LRUCache(8192)  # key -> its prefixes (a set grows a key at a time: the others recur)


def _starts_some(text: bytes, used: frozenset) -> bool:
    """Whether ``text`` is a prefix of some string of ``used``."""
    if len(used) <= 16:
        return any(k.startswith(text) for k in used)
    return text in _prefixes(used)


def _starts_any(text: bytes, frames: list[frozenset]) -> bool:
    """Whether ``text`` is a prefix of some string of some set of ``frames``."""
    for used in frames:
        if len(used) <= 16:
            for k in used:
                if k.startswith(text):
                    return True
        elif text in _prefixes(used):
            return True
    return False


def _starting(text: bytes, used: frozenset) -> int:
    """How many strings of ``used`` start with ``text``."""
    if len(used) <= 16:
        return sum(1 for k in used if k.startswith(text))
    return _prefixes(used)[text]


def _prefixes(used: frozenset) -> dict[bytes, int]:
    """Every prefix of every string of ``used``, with the number of those strings it starts."""
    out = _PREFIXES.recent.get(used) or _PREFIXES.get(used)
    if out is None:
        out = Counter(chain.from_iterable(map(_key_prefixes, used)))
        untrack_all(out)        # bytes and counts
        out = _PREFIXES.put(used, out)
    return out


def _key_prefixes(key: bytes) -> tuple[bytes, ...]:
    got = _KEY_PREFIXES.recent.get(key) or _KEY_PREFIXES.get(key)
    if got is None:
        got = tuple([key[:i] for i in range(len(key) + 1)])
        untrack_all(got)
        got = _KEY_PREFIXES.put(key, got)
    return got
