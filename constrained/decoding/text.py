"""Incremental text of a generated token stream: whole UTF-8 characters, stop strings.

Tokens are byte strings that may hold part of a character; the tracker only ever releases
whole characters, and holds back a tail that could still grow into a stop string.

Under a grammar a stop string ends the text only where the text before it is a complete
sentence (``SentenceGate``); elsewhere it is part of the document, so a stop string never cuts
a constrained output short of valid.
"""
from __future__ import annotations

import codecs
from typing import Sequence


class SentenceGate:
    """Whether the text up to a position is a complete sentence of a grammar.

    Positions are asked in increasing order and one fresh matcher (made by ``new_matcher``
    when a stop string first appears) reads the text once, so a text with many stop-string
    occurrences costs one pass, not one per occurrence.
    """

    def __init__(self, new_matcher) -> None:
        self._new_matcher = new_matcher
        self._matcher = None
        self._read = 0        # characters of the text the matcher has read
        self._dead = False    # the matcher refused the text (it holds a replaced byte)

    def complete_at(self, text: str, end: int) -> bool:
        if self._dead or end < self._read:
            return False
        if self._matcher is None:
            self._matcher = self._new_matcher()
        if end > self._read:
            if not self._matcher.accept_bytes(text[self._read:end].encode("utf-8")):
                self._dead = True
                return False
            self._read = end
        return self._matcher.is_accepting()


class TextTracker:
    """Accumulates token bytes into text; ``pending()`` hands out the text safe to show.

    ``gate``: under a grammar, the ``SentenceGate`` a stop string's position must pass.
    """

    def __init__(self, stop: Sequence[str] = (), gate: SentenceGate | None = None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = tuple(s for s in stop if s)
        self._longest = max((len(s) for s in self._stop), default=0)
        self._gate = gate
        self._judged = 0       # stop strings starting before this were refused by the gate
        self.text = ""
        self.stopped = False   # a stop string was found; text is cut before it
        self._emitted = 0
        self._final = False

    def feed(self, data: bytes) -> bool:
        """Add token bytes; True when a stop string has now appeared."""
        if self.stopped or self._final:
            return self.stopped
        piece = self._decoder.decode(data)
        if not piece:
            return False
        start = max(self._judged, len(self.text) - self._longest + 1)
        self.text += piece
        if self._stop:
            cut = self._first_stop(start)
            if cut >= 0:
                self.text = self.text[:cut]
                self.stopped = True
        return self.stopped

    def _first_stop(self, start: int) -> int:
        """Where the first stop string that ends the text begins (-1: none)."""
        text = self.text
        found = []
        for s in self._stop:
            i = text.find(s, start)
            if self._gate is None:
                if i >= 0:
                    found.append(i)
                continue
            while i >= 0:
                found.append(i)
                i = text.find(s, i + 1)
        if self._gate is None:
            return min(found, default=-1)
        for i in sorted(set(found)):
            if self._gate.complete_at(text, i):
                return i
            self._judged = i + 1
        return -1

    def finish(self) -> None:
        """No more tokens: flush an incomplete character (as U+FFFD) unless stopped."""
        if not self.stopped and not self._final:
            self.text += self._decoder.decode(b"", final=True)
        self._final = True

    def _held(self) -> int:
        """Length of the text's tail that could be the start of a stop string."""
        if self.stopped or self._final or not self._stop:
            return 0
        text = self.text
        for k in range(min(self._longest - 1, len(text)), 0, -1):
            tail = text[-k:]
            if any(s.startswith(tail) for s in self._stop):
                return k
        return 0

    def pending(self) -> str:
        """Text not handed out yet that can no longer change (whole characters only)."""
        end = len(self.text) - self._held()
        if end <= self._emitted:
            return ""
        piece = self.text[self._emitted:end]
        self._emitted = end
        return piece
