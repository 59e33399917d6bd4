"""Batched candidate sets: the working form every sampler reads and writes.

A row's candidates are the finite entries of ``logits``; removed or masked tokens are -inf and
never come back. The set is *dense* (``ids is None``: column j is token j, width V) until a
truncating step compacts it to a narrow ``[B, N]`` block with explicit token ``ids``. After
compaction the finite entries of each row are ordered by (logit descending, token id ascending)
(``sorted``); masking keeps that order, so -inf holes may appear between them.
"""
from __future__ import annotations

import torch
from torch import Tensor

NEG_INF = float("-inf")


class Candidates:
    __slots__ = ("logits", "ids", "vocab_size", "sorted")

    def __init__(self, logits: Tensor, vocab_size: int, ids: Tensor | None = None,
                 sorted: bool = False) -> None:
        self.logits = logits
        self.ids = ids
        self.vocab_size = vocab_size
        self.sorted = sorted

    # ------------------------------------------------------------------ basics
    @property
    def batch(self) -> int:
        return self.logits.shape[0]

    @property
    def width(self) -> int:
        return self.logits.shape[1]

    @property
    def dense(self) -> bool:
        return self.ids is None

    def token_ids(self) -> Tensor:
        if self.ids is not None:
            return self.ids
        return torch.arange(self.width, device=self.logits.device).expand(self.batch, -1)

    def finite(self) -> Tensor:
        return self.logits > NEG_INF

    def n_finite(self) -> Tensor:
        return self.width - torch.isneginf(self.logits).sum(dim=1)

    def probs(self) -> Tensor:
        """Softmax over the candidates (0 for removed entries)."""
        return torch.softmax(self.logits, dim=1)

    def remove(self, mask: Tensor) -> None:
        """Remove (set to -inf) the entries where ``mask`` is True."""
        self.logits = self.logits.masked_fill(mask, NEG_INF)

    def subset(self, rows: Tensor) -> "Candidates":
        return Candidates(self.logits[rows], self.vocab_size,
                          None if self.ids is None else self.ids[rows], self.sorted)

    def to_dense(self) -> Tensor:
        """Full ``[B, V]`` logits with -inf for every token outside the set."""
        if self.ids is None:
            return self.logits
        out = torch.full((self.batch, self.vocab_size), NEG_INF, dtype=self.logits.dtype,
                         device=self.logits.device)
        fin = self.finite()
        rows = torch.arange(self.batch, device=self.logits.device)[:, None].expand_as(self.ids)
        out[rows[fin], self.ids[fin]] = self.logits[fin]
        return out

    # ------------------------------------------------------------------ ordering
    def _order_compact(self, values: Tensor, ids: Tensor) -> None:
        """Set the compact block, ordered by (value desc, id asc)."""
        by_id = torch.argsort(ids, dim=1)
        ids = ids.gather(1, by_id)
        values = values.gather(1, by_id)
        order = torch.sort(values, dim=1, descending=True, stable=True).indices
        self.logits = values.gather(1, order)
        self.ids = ids.gather(1, order)
        self.sorted = True

    def ensure_sorted(self) -> None:
        """Compact to all finite candidates, ordered by (logit desc, id asc)."""
        if self.sorted:
            return
        if self.ids is None:
            width = int(self.n_finite().max())
            width = max(width, 1)
            if width >= self.width:
                vals, idx = torch.sort(self.logits, dim=1, descending=True, stable=True)
                self.logits, self.ids, self.sorted = vals, idx, True
                return
            vals, idx = torch.topk(self.logits, width, dim=1)
            self._order_compact(vals, idx)
        else:
            self._order_compact(self.logits, self.ids)

    def shrink(self) -> None:
        """Drop trailing columns that are -inf in every row (sorted compact sets only)."""
        if self.ids is None or not self.sorted:
            return
        fin = self.finite()
        last = fin.any(dim=0).nonzero()
        n = int(last[-1]) + 1 if last.numel() else 1
        if n < self.width:
            self.logits = self.logits[:, :n]
            self.ids = self.ids[:, :n]

    def compact_if_sparse(self, fraction: int = 8) -> None:
        """Compact a dense set once at most 1/fraction of the vocabulary is left (sorted)."""
        if self.ids is not None:
            return
        n = int(self.n_finite().max())
        if n * fraction <= self.width:
            vals, idx = torch.topk(self.logits, max(n, 1), dim=1)
            self._order_compact(vals, idx)

    def rank(self) -> Tensor:
        """Rank of each finite entry in (logit desc, id asc) order; sorts first if needed."""
        self.ensure_sorted()
        return self.finite().cumsum(dim=1) - 1

    def top_k_compact(self, k: Tensor, active: Tensor) -> None:
        """Keep the k[b] best candidates of each active row (ties to the lower id) and compact."""
        fin_n = None
        kk = torch.where(active, k, torch.zeros_like(k))
        width = int(kk.max())
        if not bool(active.all()):
            fin_n = self.n_finite()
            width = max(width, int(fin_n[~active].max()))
        width = max(1, min(width, self.width))
        if self.ids is None and width < self.width:
            vals, idx = torch.topk(self.logits, min(width + 1, self.width), dim=1)
            # A tie group crossing the window edge makes topk's choice arbitrary: fall back.
            b_idx = torch.arange(self.batch, device=k.device)
            edge = vals[b_idx, (kk.clamp(min=1, max=width) - 1)]
            crossing = active & (vals[:, width] == edge) & (edge > NEG_INF) if vals.shape[1] > width \
                else torch.zeros_like(active)
            if bool(crossing.any()):
                self.ensure_sorted()
            else:
                self._order_compact(vals[:, :width], idx[:, :width])
        else:
            self.ensure_sorted()
        rank = self.finite().cumsum(dim=1) - 1
        self.remove(active[:, None] & (rank >= k[:, None]))
        self.shrink()

    # ------------------------------------------------------------------ sparse access
    def locate(self, rows: Tensor, toks: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Columns of (row, token) pairs: returns (rows, cols, keep) for the pairs present."""
        if self.ids is None:
            keep = torch.ones_like(rows, dtype=torch.bool)
            return rows, toks, keep
        if rows.numel() == 0:
            return rows, toks, torch.zeros_like(rows, dtype=torch.bool)
        eq = self.ids[rows] == toks[:, None]
        present = eq.any(dim=1)
        cols = eq.to(torch.int8).argmax(dim=1)
        return rows[present], cols[present], present
