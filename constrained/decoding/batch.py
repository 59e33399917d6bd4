"""The model side of a batch: left-padded prompts, a KV cache, chunks of new tokens, row removal.

Rows may add different numbers of tokens in one step (forced tokens): each step's chunk is
left-padded per row, padding is masked out in the attention mask, and position ids count only
real tokens, so every row sees exactly what it would see alone.
"""
from __future__ import annotations

import time
from typing import Sequence

import torch


class KVBatch:
    """Runs a causal LM over a shrinking batch of sequences, keeping one KV cache."""

    def __init__(self, model, pad_token_id: int = 0) -> None:
        self.model = model
        self.pad = int(pad_token_id)
        self.cache = None
        self.attention: torch.Tensor | None = None   # [B, past] (1 = real token)
        self.lengths: list[int] = []                 # real tokens per row so far
        self.forward_time = 0.0

    @property
    def size(self) -> int:
        return len(self.lengths)

    @torch.no_grad()
    def prefill(self, prompts: Sequence[Sequence[int]]) -> torch.Tensor:
        """Run the prompts (left-padded); logits [B, V] of each row's last position."""
        from transformers import DynamicCache
        self.cache = DynamicCache()
        self.attention = torch.zeros((len(prompts), 0), dtype=torch.long)
        self.lengths = [0] * len(prompts)
        return self.step(prompts)

    @torch.no_grad()
    def step(self, chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        """Feed each row its new tokens (at least one each); logits [B, V] after them."""
        width = max(len(c) for c in chunks)
        ids = torch.full((len(chunks), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(chunks), width), dtype=torch.long)
        pos = torch.zeros((len(chunks), width), dtype=torch.long)
        for r, chunk in enumerate(chunks):
            n = len(chunk)
            if n:
                ids[r, width - n:] = torch.as_tensor(list(chunk), dtype=torch.long)
                mask[r, width - n:] = 1
                start = self.lengths[r]
                pos[r, width - n:] = torch.arange(start, start + n)
                self.lengths[r] += n
        self.attention = torch.cat([self.attention, mask], dim=1)
        start = time.perf_counter()
        out = self.model(input_ids=ids, attention_mask=self.attention, position_ids=pos,
                         past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        self.forward_time = time.perf_counter() - start
        self.cache = out.past_key_values
        return out.logits[:, -1, :]

    def keep(self, rows: Sequence[int]) -> None:
        """Drop every row not listed (finished sequences leave the batch)."""
        rows = list(rows)
        if rows == list(range(self.size)):
            return
        index = torch.as_tensor(rows, dtype=torch.long)
        self.cache.batch_select_indices(index)
        self.attention = self.attention.index_select(0, index)
        self.lengths = [self.lengths[r] for r in rows]
