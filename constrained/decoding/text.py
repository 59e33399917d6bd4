"""Incremental text of a generated token stream: whole UTF-8 characters, stop strings.

Tokens are byte strings that may hold part of a character; the tracker only ever releases
whole characters, and holds back a tail that could still grow into a stop string.
"""
from __future__ import annotations

import codecs
from typing import Sequence


class TextTracker:
    """Accumulates token bytes into text; ``pending()`` hands out the text safe to show."""

    def __init__(self, stop: Sequence[str] = ()) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = tuple(s for s in stop if s)
        self._longest = max((len(s) for s in self._stop), default=0)
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
        start = max(0, len(self.text) - self._longest + 1)
        self.text += piece
        if self._stop:
            cut = -1
            for s in self._stop:
                i = self.text.find(s, start)
                if i >= 0 and (cut < 0 or i < cut):
                    cut = i
            if cut >= 0:
                self.text = self.text[:cut]
                self.stopped = True
        return self.stopped

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
