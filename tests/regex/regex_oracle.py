"""Brute-force viability oracle for regex prefixes, independent of the engine's byte automaton.

It walks interegular's own character-level FSM (interegular's to_fsm, not the engine's byte DFA)
over the decoded characters, and decides a trailing partial UTF-8 character by arithmetic over
the code points that byte prefix can still become.
"""
from __future__ import annotations

import codecs
import random
import re

from interegular import parse_pattern
from interegular.fsm import anything_else

_LEN_RANGES = {1: (0, 0x7F), 2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}


def oracle_pattern(pattern: str) -> str:
    """The pattern as interegular reads it: edge anchors dropped, \\uXXXX made literal."""
    p = pattern
    for a in ("^", r"\A"):
        if p.startswith(a):
            p = p[len(a):]
    for z in ("$", r"\Z"):
        if p.endswith(z) and not p.endswith("\\" + z):
            p = p[:-len(z)]
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), p)


def _candidates(tail: bytes) -> list[tuple[int, int]]:
    """Code-point ranges a partial UTF-8 sequence can still complete to (may be empty)."""
    lead = tail[0]
    if lead < 0xC0 or lead > 0xF7:
        return []
    n = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if any(not 0x80 <= b <= 0xBF for b in tail[1:]):
        return []
    bits = lead & (0x7F >> n)
    for b in tail[1:]:
        bits = (bits << 6) | (b & 0x3F)
    free = 6 * (n - len(tail))
    lo, hi = bits << free, (bits << free) | ((1 << free) - 1)
    vlo, vhi = _LEN_RANGES[n]
    lo, hi = max(lo, vlo), min(hi, vhi)
    out = []
    for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
        if a <= b:
            out.append((a, b))
    return out


class Oracle:
    """viable(data) and complete(data) for the full matches of one pattern."""

    def __init__(self, pattern: str) -> None:
        self.fsm = parse_pattern(oracle_pattern(pattern)).to_fsm()
        fsm = self.fsm
        self.alphabet = fsm.alphabet
        self.explicit = sorted(ord(c) for c in fsm.alphabet if c is not anything_else)
        # states that can reach a final state
        live = set(fsm.finals)
        changed = True
        while changed:
            changed = False
            for s, row in fsm.map.items():
                if s not in live and any(t in live for t in row.values()):
                    live.add(s)
                    changed = True
        self.live = live

    def _key(self, ch: str):
        if ch in self.alphabet:
            return self.alphabet[ch]
        if anything_else in self.alphabet:
            return self.alphabet[anything_else]
        return None

    def _walk(self, data: bytes, state=None):
        """(state after the complete characters, trailing partial bytes) or None when invalid."""
        dec = codecs.getincrementaldecoder("utf-8")()
        try:
            text = dec.decode(data, final=False)
        except UnicodeDecodeError:
            return None
        tail = dec.getstate()[0]
        state = self.fsm.initial if state is None else state
        for ch in text:
            key = self._key(ch)
            state = self.fsm.map.get(state, {}).get(key) if key is not None else None
            if state is None or state not in self.live:
                return None
        return state, tail

    def viable(self, data: bytes, start=None) -> bool:
        """Whether ``data`` is a viable prefix; ``start`` = (state, tail) of an earlier prefix."""
        walked = self._walk(data) if start is None else self._walk(start[1] + data, start[0])
        if walked is None:
            return False
        state, tail = walked
        if not tail:
            return state in self.live
        row = self.fsm.map.get(state, {})
        for lo, hi in _candidates(tail):
            n_explicit = 0
            for cp in self.explicit:
                if lo <= cp <= hi:
                    n_explicit += 1
                    if row.get(self.alphabet[chr(cp)]) in self.live:
                        return True
            if n_explicit < hi - lo + 1 and anything_else in self.alphabet:
                if row.get(self.alphabet[anything_else]) in self.live:
                    return True
        return False

    def complete(self, data: bytes) -> bool:
        walked = self._walk(data)
        return walked is not None and not walked[1] and walked[0] in self.fsm.finals

    def random_text(self, rng: random.Random, max_chars: int = 24) -> str:
        """A random viable text made by walking live transitions (a full match when possible)."""
        state, out = self.fsm.initial, []
        pool = [chr(c) for c in (0x7A, 0xE9, 0x4E2D, 0x1F600, 0x3B1, 0x21, 0x20, 0x5F)]
        while len(out) < max_chars:
            if state in self.fsm.finals and rng.random() < 0.25:
                break
            moves = [(k, t) for k, t in self.fsm.map.get(state, {}).items() if t in self.live]
            if not moves:
                break
            key, nxt = rng.choice(moves)
            chars = [c for c in self.alphabet.by_transition[key] if c is not anything_else]
            if anything_else in self.alphabet.by_transition[key]:
                chars += [c for c in pool if c not in self.alphabet] or chars
            if not chars:
                break
            out.append(rng.choice(chars))
            state = nxt
        return "".join(out)


def oracle_allowed(oracle: Oracle, vocab, prefix: bytes):
    """bool[vocab.size]: the oracle's verdict for every token after ``prefix`` (EOS included)."""
    import numpy as np

    allowed = np.zeros(vocab.size, dtype=bool)
    start = oracle._walk(prefix)
    assert start is not None, "prefix must be viable"
    first = [oracle.viable(bytes([b]), start) for b in range(256)]
    for tid, tok in enumerate(vocab.token_bytes):
        if tid in vocab.special_token_ids or not tok or not first[tok[0]]:
            continue
        allowed[tid] = oracle.viable(tok, start)
    for tid in vocab.eos_token_ids:
        allowed[tid] = oracle.complete(prefix)
    return allowed
