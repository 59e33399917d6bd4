"""Per-sequence decode state: matcher, sampler chain, tokens, text and finish reason."""
from __future__ import annotations

from .result import FINISH_STOP_STRING, GenerationResult, Timings
from .text import TextTracker


class Row:
    """One prompt being decoded."""

    def __init__(self, index: int, prompt_ids: list[int], compiled, chain, stop,
                 params=None) -> None:
        self.index = index
        self.prompt_ids = prompt_ids
        self.compiled = compiled
        self.matcher = compiled.matcher() if compiled is not None else None
        self.chain = chain
        self.params = params
        self.token_logprobs: list[float] = []
        self.top_logprobs: list[dict[int, float]] = []
        self.tracker = TextTracker(stop)
        self.tokens: list[int] = []
        self.forced = 0
        self.steered = 0
        self.finish: str | None = None
        self.only = -1            # the single token the last mask allowed, or -1
        self.plan: list[int] | None = None  # budget plan from the current state
        self.timings = Timings()

    def history(self) -> list[int]:
        """Prompt and generated tokens, oldest first (for repetition penalties)."""
        return self.prompt_ids + self.tokens

    def result(self) -> GenerationResult:
        self.tracker.finish()
        complete = self.matcher is None or self.matcher.is_accepting()
        if self.finish == FINISH_STOP_STRING and self.matcher is not None:
            complete = False
        return GenerationResult(text=self.tracker.text, token_ids=list(self.tokens),
                                finish_reason=self.finish or "length",
                                forced_tokens=self.forced, steered_tokens=self.steered,
                                prompt_tokens=len(self.prompt_ids), complete=complete,
                                timings=self.timings, token_logprobs=list(self.token_logprobs),
                                top_logprobs=list(self.top_logprobs))
