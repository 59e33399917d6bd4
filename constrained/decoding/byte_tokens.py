"""Tokenize raw bytes into vocabulary tokens that a matcher accepts (longest match first).

Forced text and budget completions are bytes; the model must see them as tokens. Each token is
checked with ``matcher.accept_token``, so the result is always a valid tokenization under the
grammar (the mask is exact: a token whose bytes start a viable continuation is allowed).
"""
from __future__ import annotations

import threading
import weakref

from ..vocabulary import Vocabulary, special_spelling

_tables: "weakref.WeakKeyDictionary[Vocabulary, ByteTokenizer]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


class ByteTokenizer:
    """Greedy longest-match over the vocabulary's text tokens (lowest id wins ties) and its
    special tokens' spellings (constrained.vocabulary.special_spelling)."""

    def __init__(self, vocab: Vocabulary) -> None:
        text_ok = vocab.text_token_mask
        by_bytes: dict[bytes, int] = {}
        for tid, data in enumerate(vocab.token_bytes):
            if data and text_ok[tid] and data not in by_bytes:
                by_bytes[data] = tid
        # special tokens as the grammar spells them (forced or planned where it names them)
        for tid in vocab.special_token_ids - vocab.eos_token_ids:
            by_bytes[special_spelling(tid)] = tid
        self._ids = by_bytes
        self._bytes_of = {tid: data for data, tid in by_bytes.items()}
        self._longest = max((len(b) for b in by_bytes), default=1)
        self.single_byte = [by_bytes.get(bytes((b,)), -1) for b in range(256)]

    @classmethod
    def of(cls, vocab: Vocabulary) -> "ByteTokenizer":
        """The shared tokenizer of ``vocab``."""
        with _lock:
            tok = _tables.get(vocab)
            if tok is None:
                tok = cls(vocab)
                _tables[vocab] = tok
            return tok

    def accept(self, matcher, data: bytes, limit: int | None = None) -> tuple[list[int], int]:
        """Accept ``data`` token by token (at most ``limit`` tokens): (tokens, bytes consumed).

        Stops early (leaving the rest of ``data`` unread) when no token fits; the matcher has
        accepted exactly the returned tokens.
        """
        out: list[int] = []
        pos, n = 0, len(data)
        while pos < n and (limit is None or len(out) < limit):
            for size in range(min(self._longest, n - pos), 0, -1):
                tid = self._ids.get(data[pos:pos + size])
                if tid is not None and matcher.accept_token(tid):
                    out.append(tid)
                    pos += size
                    break
            else:
                break
        return out, pos

    def fewest(self, matcher, data: bytes) -> list[int] | None:
        """The fewest tokens spelling ``data`` that ``matcher`` accepts one by one (it is left
        where it was), or None when no such tokenization was found."""
        out = self._cut(data, ())
        return out if out is not None and accepts_tokens(matcher, out, False) else None

    def fewest_spaced(self, matcher, data: bytes) -> list[int] | None:
        """The fewest tokens taking ``matcher`` to a complete sentence through ``data`` with
        single spaces inserted where the grammar takes one (before a byte at which the matcher
        accepts a space): a vocabulary often has `` []`` but not ``[]``, so ``": []`` is fewer
        tokens than ``":[]``. Each token may start with such a space. None when the tiling
        found is not accepted to a complete sentence (a space that the grammar takes there
        but that changes what may follow, as in a string of bounded length)."""
        spaced = []
        for i in range(len(data)):
            if matcher.accept_bytes(b" "):
                matcher.rollback(1)
                spaced.append(i)
            if not matcher.accept_bytes(data[i:i + 1]):
                if i:
                    matcher.rollback(i)
                return None
        if data:
            matcher.rollback(len(data))
        if not spaced:
            return None
        out = self._cut(data, frozenset(spaced))
        return out if out is not None and accepts_tokens(matcher, out, True) else None

    def _cut(self, data: bytes, spaced) -> list[int] | None:
        """The fewest tokens spelling ``data``, where a token that starts at a position in
        ``spaced`` may have one space before it (None when no tiling exists)."""
        n = len(data)
        best = [0] + [n + 1] * n
        back = [(-1, 0)] * (n + 1)      # (token, data bytes it spells) ending at each position
        ids = self._ids
        for i in range(n):
            if best[i] > n:
                continue
            for prefix in (b"", b" ") if i in spaced else (b"",):
                for size in range(1, min(self._longest - len(prefix), n - i) + 1):
                    tid = ids.get(prefix + data[i:i + size])
                    if tid is not None and best[i] + 1 < best[i + size]:
                        best[i + size] = best[i] + 1
                        back[i + size] = (tid, size)
        if best[n] > n:
            return None
        out: list[int] = []
        pos = n
        while pos > 0:
            tid, size = back[pos]
            out.append(tid)
            pos -= size
        out.reverse()
        return out


def accepts_tokens(matcher, tokens: list[int], complete: bool) -> bool:
    """Whether ``matcher`` accepts ``tokens`` one by one (and, with ``complete``, is then at a
    complete sentence); it is left where it was."""
    accepted = 0
    for tid in tokens:
        if not matcher.accept_token(tid):
            break
        accepted += 1
    ok = accepted == len(tokens) and (not complete or matcher.is_accepting())
    if accepted:
        matcher.rollback(accepted)
    return ok
