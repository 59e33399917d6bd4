"""The transformers runtime: left-padded prompts, a KV cache, chunks of new tokens, row removal.

Rows may add different numbers of tokens in one step (forced tokens): each step's chunk is
left-padded per row, padding is masked out in the attention mask, and position ids count only
real tokens, so every row sees exactly what it would see alone.
"""
from __future__ import annotations

import functools
import inspect
import time
from typing import Any, Sequence

import torch


@functools.lru_cache(maxsize=None)
def _cache_argument(forward_type: type) -> str:
    """The forward() argument that takes the KV cache: ``cache`` in current transformers,
    ``past_key_values`` before it."""
    fn = getattr(forward_type, "forward", None) or getattr(forward_type, "__call__", None)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def run_with_cache(model, cache, **inputs) -> tuple[Any, Any]:
    """model(**inputs) with a KV cache under the argument name this transformers uses;
    (output, the cache after the call)."""
    name = _cache_argument(type(model))
    out = model(**inputs, **{name: cache}, use_cache=True)
    after = getattr(out, "cache", None)
    return out, after if after is not None else getattr(out, "past_key_values", None)


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
        self.reset()
        return self.join(prompts)

    def reset(self) -> None:
        """Forget every row."""
        self.cache = None
        self.attention = None
        self.lengths = []

    @torch.no_grad()
    def join(self, prompts: Sequence[Sequence[int]]) -> torch.Tensor:
        """Add rows after the current ones: their prompts run in a forward pass of their own
        (rows already decoding are not padded to the prompts' width), then their cache joins
        the batch's. Logits [n, V] of the new rows."""
        if self.cache is None:
            from transformers import DynamicCache
            self.cache = DynamicCache()
            self.attention = torch.zeros((len(prompts), 0), dtype=torch.long)
            self.lengths = [0] * len(prompts)
            return self.step(prompts)
        new = KVBatch(self.model, self.pad)
        logits = new.prefill(prompts)
        self._append(new)
        self.forward_time = new.forward_time
        return logits

    def _append(self, other: "KVBatch") -> None:
        """Stack another batch's rows under these, the shorter past left-padded (masked)."""
        width = max(self.attention.shape[1], other.attention.shape[1])

        def pad(t: torch.Tensor, dim: int) -> torch.Tensor:
            missing = width - t.shape[dim]
            if missing == 0:
                return t
            shape = list(t.shape)
            shape[dim] = missing
            return torch.cat([t.new_zeros(shape), t], dim=dim)

        self.attention = torch.cat([pad(self.attention, 1), pad(other.attention, 1)], dim=0)
        for mine, theirs in zip(self.cache.layers, other.cache.layers):
            if getattr(mine, "keys", None) is None or getattr(theirs, "keys", None) is None \
                    or mine.keys.dim() != 4 or theirs.keys.dim() != 4:
                raise RuntimeError("cannot join KV caches of this layer type")
            mine.keys = torch.cat([pad(mine.keys, 2), pad(theirs.keys, 2)], dim=0)
            mine.values = torch.cat([pad(mine.values, 2), pad(theirs.values, 2)], dim=0)
        self.lengths.extend(other.lengths)

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
        out, self.cache = run_with_cache(self.model, self.cache, input_ids=ids,
                                         attention_mask=self.attention, position_ids=pos,
                                         logits_to_keep=1)
        self.forward_time = time.perf_counter() - start
        return out.logits[:, -1, :]

    def keep(self, rows: Sequence[int]) -> None:
        """Drop every row not listed (finished sequences leave the batch)."""
        rows = list(rows)
        if rows == list(range(self.size)):
            return
        if not rows:
            self.reset()
            return
        index = torch.as_tensor(rows, dtype=torch.long)
        self.cache.batch_select_indices(index)
        self.attention = self.attention.index_select(0, index)
        self.lengths = [self.lengths[r] for r in rows]
        self._trim()

    def _trim(self) -> None:
        """Drop leading cache positions no remaining row attends to (rows that left)."""
        used = self.attention.any(dim=0).nonzero()
        first = int(used[0]) if used.numel() else self.attention.shape[1]
        if first == 0:
            return
        self.attention = self.attention[:, first:]
        for layer in self.cache.layers:
            keys = getattr(layer, "keys", None)
            if keys is None or keys.dim() != 4:
                continue
            layer.keys = keys[:, :, first:]
            layer.values = layer.values[:, :, first:]
