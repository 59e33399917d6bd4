"""Streaming: text pieces as they are generated, never splitting a UTF-8 character."""
from __future__ import annotations

from typing import Any, Iterator

from .loop import build_decoder
from .result import GenerationResult


class TextStream:
    """Iterator of text pieces (str) for one prompt, or (index, str) for a list of prompts.

    The pieces join to the final text; after the iteration ``result`` (one prompt) or
    ``results`` holds the GenerationResult(s).
    """

    def __init__(self, decoder, single: bool) -> None:
        self._decoder = decoder
        self._single = single
        self._events = decoder.events()

    def __iter__(self) -> Iterator:
        for index, piece in self._events:
            yield piece if self._single else (index, piece)

    @property
    def results(self) -> list[GenerationResult | None]:
        return self._decoder.results

    @property
    def result(self) -> GenerationResult | None:
        return self._decoder.results[0]

    def close(self) -> None:
        """Stop generating (the worker thread is shut down)."""
        self._events.close()


def stream(model, tokenizer_or_vocab, prompts: Any, **options) -> TextStream:
    """Like generate(), but returns a TextStream of text pieces as they appear."""
    decoder, single = build_decoder(model, tokenizer_or_vocab, prompts, **options)
    return TextStream(decoder, single)
