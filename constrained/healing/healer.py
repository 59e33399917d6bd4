"""Token healing: back the prompt up by whole tokens and let the model re-choose the boundary.

A prompt ending in ":" biases the model away from "://" (its tokenizer would have merged them).
``TokenHealer.prepare`` removes prompt tokens from the end (never a special token, never the
last remaining token, at most ``max_bytes`` bytes, by default the longest token) and keeps the
longest removed tail ``s`` that some vocabulary token strictly extends with an excess the grammar
accepts (or, for two or more removed tokens, that is itself one token). The generation is then
forced to start with ``s`` (see :class:`HealingMatcher`), and the text handed back is the
generation minus ``s``: exactly the continuation after the original prompt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..matching import GrammarMatcher
from ..vocabulary import Vocabulary
from .matcher import HealingMatcher
from .prefix import PrefixIndex


@dataclass(frozen=True)
class HealingPlan:
    """The healed prompt: feed ``trimmed_ids``; the generation must start with ``prefix_bytes``."""

    trimmed_ids: list[int]
    prefix_bytes: bytes
    removed_ids: list[int]

    @property
    def healed(self) -> bool:
        """Whether any token was removed."""
        return bool(self.removed_ids)


class TokenHealer:
    """Plans token healing for prompts over one vocabulary.

    ``max_tokens`` caps how many prompt tokens may be removed (default: no cap besides
    ``max_bytes``); ``max_bytes`` caps the removed bytes (default: the longest text token).
    """

    def __init__(self, vocab: Vocabulary, *, max_tokens: int | None = None,
                 max_bytes: int | None = None) -> None:
        self.vocab = vocab
        self.index = PrefixIndex.of(vocab)
        self.max_tokens = max_tokens
        self.max_bytes = self.index.max_token_bytes if max_bytes is None else int(max_bytes)

    def prepare(self, prompt_ids: Sequence[int], matcher: GrammarMatcher | None = None
                ) -> HealingPlan:
        """Choose how far to back up ``prompt_ids``; ``matcher`` is the grammar of the
        continuation, at its start (left in that state)."""
        ids = [int(t) for t in prompt_ids]
        tokens = self.vocab.token_bytes
        best = 0
        removed = b""
        j = 0
        while j < len(ids) - 1 and (self.max_tokens is None or j < self.max_tokens):
            tid = ids[len(ids) - 1 - j]
            if not (0 <= tid < self.vocab.n_tokens) or not self.vocab.text_token_mask[tid]:
                break  # special token (or padding id): never healed across
            if len(removed) + len(tokens[tid]) > self.max_bytes:
                break
            removed = tokens[tid] + removed
            j += 1
            if self._useful(removed, j, matcher):
                best = j
        cut = len(ids) - best
        return HealingPlan(ids[:cut], b"".join(tokens[t] for t in ids[cut:]), ids[cut:])

    def _useful(self, tail: bytes, n_removed: int, matcher: GrammarMatcher | None) -> bool:
        """Some token runs past ``tail`` into text the grammar accepts, or (two or more removed
        tokens) ``tail`` is a single token."""
        if n_removed >= 2 and self.index.token_id(tail) is not None:
            return True
        return self.index.viable_extensions(matcher, tail, first_only=True).size > 0

    def matcher(self, plan: HealingPlan, inner: GrammarMatcher | None = None) -> HealingMatcher:
        """The matcher for the healed generation: ``plan.prefix_bytes``, then ``inner``."""
        return HealingMatcher(self.vocab, plan.prefix_bytes, inner)

    def step_mask(self, remaining: bytes, matcher: GrammarMatcher | None = None):
        """Packed int32 mask of the tokens allowed while ``remaining`` healed bytes are owed,
        composed with ``matcher`` (the grammar at its start state)."""
        return HealingMatcher(self.vocab, remaining, matcher).healing_mask()


def heal_prompt(vocab: Vocabulary, prompt_ids: Sequence[int],
                matcher: GrammarMatcher | None = None, **options) -> tuple[list[int], bytes]:
    """``(trimmed_ids, prefix_bytes)`` for ``prompt_ids`` (see :class:`TokenHealer`)."""
    plan = TokenHealer(vocab, **options).prepare(prompt_ids, matcher)
    return plan.trimmed_ids, plan.prefix_bytes
