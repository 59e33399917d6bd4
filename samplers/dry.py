"""DRY ("don't repeat yourself"), as llama.cpp's dry sampler (ported there from koboldcpp).

The longest suffix of the recent context that also occurred earlier is found for every earlier
position (a reverse Z-function, computed here as a batched comparison matrix for windows up to
512 tokens and with the linear Z-algorithm beyond). Every earlier match of length
L >= allowed_length penalises the token that followed it by multiplier * base^(L - allowed_length)
(exponent capped so the power stays finite in float32); a token takes its longest match.
Sequence breakers cut matching: the scan from the newest token stops at the first breaker, and
tokens that are single-token breakers are never penalised.

Breakers are strings mapped to tokens through the token texts given to the chain: a token
whose text contains the breaker is a single-token breaker; a token whose text ends with a proper
prefix of the breaker is the head of a multi-token breaker whose remaining text must be spelt by
the following tokens (matched on text, or on the ids of ``tokenize(rest)`` when a tokenize
callable is given, as llama.cpp does). Breakers may also be given directly as token-id sequences.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from ._candidates import Candidates
from .errors import InvalidParameterError

MAX_CHAR_LEN = 40
MAX_SEQ_LEN = 20
_FLOAT_MAX_LOG = 88.7228391
_DENSE_LIMIT = 512


@dataclass
class BreakerTable:
    """Processed sequence breakers: single-token breakers and heads of multi-token ones."""

    single: np.ndarray                      # bool [V]
    heads: dict = field(default_factory=dict)  # head token -> list of tails (tuple of ids or str)
    texts: Sequence | None = None

    @property
    def is_head(self) -> np.ndarray:
        if not hasattr(self, "_is_head"):
            m = np.zeros_like(self.single)
            if self.heads:
                m[np.fromiter(self.heads.keys(), dtype=np.int64)] = True
            self._is_head = m
        return self._is_head


def build_breakers(breakers: Sequence, vocab_size: int, texts: Sequence | None,
                   tokenize: Callable[[str], Sequence[int]] | None = None) -> BreakerTable:
    """Map breaker strings (or token-id sequences) to a :class:`BreakerTable`."""
    single = np.zeros(vocab_size, dtype=bool)
    heads: dict[int, list] = {}

    def add_head(tok: int, tail) -> None:
        lst = heads.setdefault(tok, [])
        if tail not in lst:
            lst.append(tail)

    for br in breakers:
        if isinstance(br, tuple):  # explicit token ids
            if any(t >= vocab_size for t in br):
                raise InvalidParameterError("dry_sequence_breakers", f"token id in {br} is outside the vocabulary")
            if len(br) == 1:
                single[br[0]] = True
            add_head(br[0], tuple(br[1:]))
            continue
        if texts is None:
            raise InvalidParameterError("dry_sequence_breakers",
                                        "string breakers need token_texts (or give token-id sequences)")
        s = br[:MAX_CHAR_LEN]
        is_bytes = len(texts) > 0 and isinstance(texts[0], (bytes, bytearray))
        key = s.encode("utf-8") if is_bytes else s
        for tok, word in enumerate(texts):
            if not word:
                continue
            if key in word:
                single[tok] = True
                continue
            for j in range(1, len(key)):
                if word.endswith(key[:j]):
                    rest = key[j:]
                    if tokenize is not None:
                        rest_s = rest.decode("utf-8", "replace") if is_bytes else rest
                        tail = tuple(int(t) for t in tokenize(rest_s))[:MAX_SEQ_LEN]
                    else:
                        tail = rest
                    add_head(tok, tail)
    for tok, tails in heads.items():
        if () in tails:
            single[tok] = True
    return BreakerTable(single=single, heads=heads, texts=texts)


def _rep_limit(rev: np.ndarray, table: BreakerTable) -> int:
    """Newest-first scan for the first breaker; returns the maximum repeat length allowed."""
    w = rev.size
    cand = table.single[rev]
    if table.heads:
        cand = cand | table.is_head[rev]
    pos = np.flatnonzero(cand)
    for i in pos:
        i = int(i)
        tok = int(rev[i])
        longest = -1
        for tail in table.heads.get(tok, [()] if table.single[tok] else []):
            if isinstance(tail, tuple):
                ln = len(tail)
                if ln > longest and ln <= i and all(tail[o] == rev[i - o - 1] for o in range(ln)):
                    longest = ln
            else:  # remaining text spelt by the following (newer) tokens
                acc = tail[:0]
                used = 0
                while len(acc) < len(tail) and used < i:
                    acc = acc + table.texts[int(rev[i - used - 1])]
                    used += 1
                if acc.startswith(tail) and used > longest:
                    longest = used
        if longest >= 0:
            return i - longest
    return w


def _z_matrix(revs: list[np.ndarray]) -> Tensor:
    """n[b, k]: length of the common prefix of rev and rev shifted by k (padding never matches)."""
    L = max(r.size for r in revs)
    pad = -(torch.arange(2 * L, dtype=torch.int64) + 1)
    R = pad[:L].repeat(len(revs), 1)
    for b, r in enumerate(revs):
        R[b, : r.size] = torch.from_numpy(r)
    R2 = torch.cat([R, pad[L:].expand(len(revs), L)], dim=1)
    eq = R[:, None, :] == R2.unfold(1, L, 1)[:, :L, :]  # window k of R2 is R2[:, k:k+L]
    return eq.to(torch.int32).cumprod(dim=2).sum(dim=2), R


def _z_linear(rev: np.ndarray) -> np.ndarray:
    """Z-function of ``rev`` (z[0] = len) by the linear algorithm."""
    n = rev.size
    z = np.zeros(n, dtype=np.int64)
    if n == 0:
        return z
    z[0] = n
    s = rev.tolist()
    l = r = 0
    for k in range(1, n):
        if k < r:
            z[k] = min(r - k, z[k - l])
        while k + z[k] < n and s[z[k]] == s[k + z[k]]:
            z[k] += 1
        if k + z[k] > r:
            l, r = k, k + z[k]
    return z


def dry(c: Candidates, histories: Sequence[Sequence[int]], rows_active: Sequence[int],
        multiplier: Sequence[float], base: Sequence[float], allowed: Sequence[int],
        last_n: Sequence[int], tables: Sequence[BreakerTable]) -> None:
    """Apply DRY penalties to the active rows (see the module docstring)."""
    work = []  # (row, rev, rep_limit)
    for b in rows_active:
        h = np.asarray(histories[b], dtype=np.int64).reshape(-1)
        n = int(last_n[b])
        w = h.size if n < 0 else min(h.size, n)
        if w <= allowed[b]:
            continue
        rev = h[h.size - w:][::-1].copy()
        if rev.size and (rev.min() < 0 or rev.max() >= c.vocab_size):
            raise InvalidParameterError("histories", "token id outside the vocabulary")
        lim = _rep_limit(rev, tables[b])
        if lim < allowed[b]:
            continue
        work.append((b, rev, lim))
    if not work:
        return
    rows_l, toks_l, len_l = [], [], []
    small = [x for x in work if x[1].size <= _DENSE_LIMIT]
    large = [x for x in work if x[1].size > _DENSE_LIMIT]
    if small:
        n_mat, R = _z_matrix([x[1] for x in small])
        for j, (b, rev, lim) in enumerate(small):
            w = rev.size
            nk = n_mat[j, 1:w].numpy()  # shifts k = 1..w-1
            toks = rev[: w - 1]          # token following each earlier occurrence: rev[k-1]
            nk = np.minimum(nk, lim)
            sel = nk >= allowed[b]
            if sel.any():
                rows_l.append(np.full(int(sel.sum()), b, dtype=np.int64))
                toks_l.append(toks[sel])
                len_l.append(nk[sel])
    for b, rev, lim in large:
        w = rev.size
        nk = np.minimum(_z_linear(rev)[1:w], lim)
        toks = rev[: w - 1]
        sel = nk >= allowed[b]
        if sel.any():
            rows_l.append(np.full(int(sel.sum()), b, dtype=np.int64))
            toks_l.append(toks[sel])
            len_l.append(nk[sel])
    if not rows_l:
        return
    rows = np.concatenate(rows_l)
    toks = np.concatenate(toks_l)
    lens = np.concatenate(len_l).astype(np.int64)
    keep = np.array([not tables[r].single[t] for r, t in zip(rows.tolist(), toks.tolist())], dtype=bool)
    rows, toks, lens = rows[keep], toks[keep], lens[keep]
    if rows.size == 0:
        return
    keys = torch.from_numpy(rows * c.vocab_size + toks)
    uniq, inv = torch.unique(keys, return_inverse=True)
    best = torch.zeros(uniq.numel(), dtype=torch.int64).scatter_reduce(
        0, inv, torch.from_numpy(lens), reduce="amax", include_self=False)
    r_u = uniq // c.vocab_size
    t_u = uniq % c.vocab_size
    pen = []
    for r, L in zip(r_u.tolist(), best.tolist()):
        bs = float(base[r])
        e = L - int(allowed[r])
        max_e = int(_FLOAT_MAX_LOG / math.log(bs)) if bs > 1.000001 else 0
        if max_e > 0 and e > max_e:
            e = max_e
        pen.append(float(multiplier[r]) * bs ** e)
    pen_t = torch.tensor(pen, dtype=torch.float64)
    rr, col, present = c.locate(r_u, t_u)
    if rr.numel() == 0:
        return
    c.logits[rr, col] = c.logits[rr, col] - pen_t[present].to(c.logits.dtype)
    if c.ids is not None:
        c.sorted = False
