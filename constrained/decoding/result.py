"""What a generation returns: the text, its tokens, why it stopped, and where the time went."""
from __future__ import annotations

from dataclasses import dataclass, field

FINISH_STOP = "stop"                # the grammar was complete and an end-of-sequence token came
FINISH_LENGTH = "length"            # max_new_tokens ran out first
FINISH_STOP_STRING = "stop_string"  # one of the ``stop`` strings appeared (text cut before it)
FINISH_ERROR = "error"              # the row failed (Decoder(isolate_errors=True)): row.error
FINISH_CANCELLED = "cancelled"      # the row was cancelled before it finished


@dataclass
class StepTiming:
    """Seconds spent on one decode step (one forward pass) of one row's batch."""

    total: float
    forward: float
    mask: float       # computing the grammar mask (possibly overlapped with the forward pass)
    mask_wait: float  # time the loop waited for the mask after the forward pass returned
    sample: float     # applying the mask and running the sampler chain
    n_tokens: int     # tokens this step added to the row (1 + forced tokens)


@dataclass
class Timings:
    """Per-step timings and their sums (seconds)."""

    prefill: float = 0.0
    steps: list[StepTiming] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.prefill + sum(s.total for s in self.steps)

    @property
    def forward(self) -> float:
        return sum(s.forward for s in self.steps)

    @property
    def mask(self) -> float:
        return sum(s.mask for s in self.steps)

    @property
    def mask_wait(self) -> float:
        return sum(s.mask_wait for s in self.steps)

    @property
    def sample(self) -> float:
        return sum(s.sample for s in self.steps)

    @property
    def outside_forward(self) -> float:
        """Decode time not spent in the forward pass (what constraining can cost)."""
        return sum(s.total - s.forward for s in self.steps)

    def summary(self) -> dict[str, float]:
        """Totals in milliseconds, for printing."""
        n = sum(s.n_tokens for s in self.steps)
        decode = sum(s.total for s in self.steps)
        return {
            "prefill_ms": self.prefill * 1e3,
            "decode_ms": decode * 1e3,
            "forward_ms": self.forward * 1e3,
            "mask_ms": self.mask * 1e3,
            "mask_wait_ms": self.mask_wait * 1e3,
            "sample_ms": self.sample * 1e3,
            "ms_per_token": decode * 1e3 / n if n else 0.0,
        }


@dataclass
class GenerationResult:
    """One prompt's generation.

    ``token_ids`` are the generated tokens (forced ones included, the final end-of-sequence
    token excluded); ``text`` is their UTF-8 decoding, cut before a stop string.
    ``forced_tokens`` counts tokens appended without sampling because the grammar allowed
    exactly one continuation; ``steered_tokens`` those the budget option chose to finish the
    sentence in time. ``complete`` says whether the text is a complete sentence of the
    grammar (always True without a grammar). With ``logprobs=n``: ``token_logprobs`` (one per
    token id) and ``top_logprobs`` (the n likeliest ids -> logprob, per token).
    """

    text: str
    token_ids: list[int]
    finish_reason: str
    forced_tokens: int = 0
    steered_tokens: int = 0
    prompt_tokens: int = 0
    complete: bool = True
    timings: Timings = field(default_factory=Timings)
    token_logprobs: list[float] = field(default_factory=list)
    top_logprobs: list[dict[int, float]] = field(default_factory=list)
    # with tools: the text outside the calls, and the calls (constrained.tools.ToolCall)
    content: str | None = None
    tool_calls: list = field(default_factory=list)

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)
