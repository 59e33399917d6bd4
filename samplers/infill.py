"""The infill sampler (llama.cpp's ``infill``, chain letter ``i``): end-of-generation handling.

Meant to run after the truncation samplers, on the candidates still in play. Steps:

1. softmax; ``p_eog`` is the mass of end-of-generation tokens, ``p_txt`` the rest;
2. if ``3 * p_eog * n > p_txt`` (n = number of candidates): keep only the EOG tokens, done;
3. merge tokens whose text is a prefix of another candidate's text: the less likely one's
   probability moves into the more likely one and it drops out (tokens with empty text, such as
   control tokens, never merge; end-of-generation tokens count as control tokens whatever text
   the caller gives them, e.g. "<|endoftext|>" never merges with "<");
4. drop non-EOG tokens with p < 0.2; if no non-EOG token is left, return the single EOT token;
   renormalise;
5. drop non-EOG tokens with p < 1 / (n_non_eog + 1); renormalise.

A *candidate* is a token whose logit is finite: truncation samplers and masks set the others to
-inf. ``infill`` returns the log of the new probabilities (-inf for dropped tokens): what
llama.cpp's infill step writes into its candidates' ``p``. As a chain stage (InfillSampler) the
survivors keep their input logits instead: llama.cpp's next ``dist`` step recomputes the softmax
from the logits, so it draws from the survivors' unchanged logits, and so does this chain.

Deviation, on purpose: when step 4 would return an EOT token that is not a candidate (masked, for
example by a grammar that does not allow the end here), that step is skipped rather than
reviving a forbidden token.
"""
from __future__ import annotations

import bisect
from typing import Iterable, Sequence

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

NAME = "infill"
LETTER = "i"

EOG_RATIO = 3.0
FIRST_THRESHOLD = 0.2


def infill_candidates(candidates: Sequence[tuple[int, float]], eog_ids: Iterable[int],
                      token_texts: Sequence[bytes | str], eot_id: int | None = None
                      ) -> list[tuple[int, float]]:
    """Apply the infill sampler to ``(token_id, logit)`` candidates.

    ``token_texts[i]`` is the rendered text of token i (bytes or str; empty for control tokens).
    ``eot_id`` is the token returned when no text token survives (default: the first EOG id).
    Returns ``(token_id, p)`` pairs in candidate order (logit descending, then id), with
    probabilities summing to 1.
    """
    eog = frozenset(int(t) for t in eog_ids)
    if not eog:
        raise ValueError("eog_ids is empty: the infill sampler needs end-of-generation tokens")
    cands = [(int(t), float(l)) for t, l in candidates if np.isfinite(l)]
    if not cands:
        raise ValueError("no candidate with a finite logit")
    cands.sort(key=lambda c: (-c[1], c[0]))  # logit descending, then token id
    ids = np.array([c[0] for c in cands], dtype=np.int64)
    logits = np.array([c[1] for c in cands], dtype=np.float64)
    p = np.exp(logits - logits[0])
    p /= p.sum()
    is_eog = np.array([t in eog for t in ids.tolist()], dtype=bool)
    p = _infill_probs(ids, p, is_eog, token_texts, _default_eot(eog, eot_id))
    return [(int(ids[i]), float(p[i])) for i in np.nonzero(p > 0)[0]]


def infill(logits, eog_ids: Iterable[int], token_texts: Sequence[bytes | str],
           eot_id: int | None = None, ids=None, keep_logits: bool = False):
    """Apply the infill sampler to logits [V] or [B, V] (torch tensor or numpy array).

    Returns a new array of the same type and shape holding log-probabilities: the kept tokens'
    log p, -inf elsewhere (``keep_logits``: the kept tokens' input logits instead, as a
    following llama.cpp ``dist`` step sees them). Rows are processed independently. With
    ``ids`` (same shape, integer) the logits are a compact block: entry j of row b is token
    ``ids[b, j]``.
    """
    eog = frozenset(int(t) for t in eog_ids)
    if not eog:
        raise ValueError("eog_ids is empty: the infill sampler needs end-of-generation tokens")
    eot = _default_eot(eog, eot_id)
    is_torch = torch is not None and isinstance(logits, torch.Tensor)
    # numpy for the conversions: a torch dtype cast wakes its thread pool (slow when busy)
    arr = logits.detach().cpu().numpy().astype(np.float64) if is_torch \
        else np.asarray(logits, dtype=np.float64)
    rows = arr.reshape(1, -1) if arr.ndim == 1 else arr
    if ids is None:
        id_rows = np.broadcast_to(np.arange(rows.shape[1]), rows.shape)
    else:
        is_tensor = torch is not None and isinstance(ids, torch.Tensor)
        id_arr = ids.detach().cpu().numpy() if is_tensor else np.asarray(ids)
        id_rows = id_arr.reshape(rows.shape).astype(np.int64)
    eog_list = np.fromiter(eog, dtype=np.int64)
    out = np.full(rows.shape, -np.inf)
    for r in range(rows.shape[0]):
        out[r] = _infill_row(rows[r], id_rows[r], np.isin(id_rows[r], eog_list), token_texts, eot)
        if keep_logits:
            kept = np.isfinite(out[r])
            out[r][kept] = rows[r][kept]
    out = out.reshape(arr.shape)
    if is_torch:
        host = out.astype(np.float32) if logits.dtype == torch.float32 else out
        return torch.from_numpy(host).to(dtype=logits.dtype, device=logits.device)
    return out


class InfillSampler:
    """The infill sampler as a chain stage: ``sampler(logits) -> logits``; the survivors keep
    their logits, so a following ``dist`` draws what llama.cpp's would."""

    name = NAME
    letter = LETTER

    def __init__(self, eog_ids: Iterable[int], token_texts: Sequence[bytes | str],
                 eot_id: int | None = None) -> None:
        self.eog_ids = frozenset(int(t) for t in eog_ids)
        if not self.eog_ids:
            raise ValueError("eog_ids is empty: the infill sampler needs end-of-generation tokens")
        self.token_texts = token_texts
        self.eot_id = _default_eot(self.eog_ids, eot_id)

    def __call__(self, logits):
        return infill(logits, self.eog_ids, self.token_texts, self.eot_id, keep_logits=True)

    def __repr__(self) -> str:
        return f"InfillSampler(eog={sorted(self.eog_ids)}, eot={self.eot_id})"


# internals ------------------------------------------------------------------------------------
def _default_eot(eog: frozenset[int], eot_id: int | None) -> int:
    return int(eot_id) if eot_id is not None else min(eog)


def _infill_row(row: np.ndarray, row_ids: np.ndarray, eog_flags: np.ndarray, texts, eot: int
                ) -> np.ndarray:
    finite = np.nonzero(np.isfinite(row))[0]
    if finite.size == 0:
        raise ValueError("no candidate with a finite logit")
    # candidate order: logit descending, then token id ascending
    order = finite[np.lexsort((row_ids[finite], -row[finite]))]
    logits = row[order]
    p = np.exp(logits - logits[0])
    p /= p.sum()
    p = _infill_probs(row_ids[order], p, eog_flags[order], texts, eot)
    out = np.full(row.shape, -np.inf)
    with np.errstate(divide="ignore"):
        out[order] = np.log(p)
    return out


def _infill_probs(ids: np.ndarray, p: np.ndarray, is_eog: np.ndarray, texts, eot: int
                  ) -> np.ndarray:
    """New probabilities for candidates sorted by logit (p sums to 1); zeros are dropped."""
    n = len(ids)
    p_eog = float(p[is_eog].sum())
    p_txt = float(p[~is_eog].sum())
    if EOG_RATIO * p_eog * n > p_txt:
        return _normalised(np.where(is_eog, p, 0.0))
    p = _merge_prefixes(ids, p.copy(), texts, is_eog)
    alive = p > 0
    keep = is_eog | (p >= FIRST_THRESHOLD)
    n_text = int((keep & ~is_eog).sum())
    if n_text == 0:
        at = np.nonzero(ids == eot)[0]
        if at.size:
            single = np.zeros(n)
            single[at[0]] = 1.0
            return single
        keep = alive | is_eog  # EOT is not a candidate: skip this step (see module docstring)
        n_text = int((keep & ~is_eog).sum())
    p = _normalised(np.where(keep, p, 0.0))
    keep = is_eog | (p >= 1.0 / (n_text + 1))
    return _normalised(np.where(keep, p, 0.0))


def _normalised(p: np.ndarray) -> np.ndarray:
    total = p.sum()
    return p / total if total > 0 else p


def _as_bytes(text) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


def _merge_prefixes(ids: np.ndarray, p: np.ndarray, texts, is_eog: np.ndarray | None = None
                    ) -> np.ndarray:
    """Merge candidates whose text is a prefix of another's, in llama.cpp's pair order.

    The reference walks every ordered pair (i0, i1) in candidate order; only pairs where the text
    of i0 is a non-empty prefix of the text of i1 change anything, so those are found through a
    sorted list of texts (the candidates sharing a prefix are contiguous) and visited in the
    same order. A token that lost its mass is skipped, as in the reference.
    """
    n = len(ids)
    tx = [_as_bytes(texts[int(t)]) if 0 <= int(t) < len(texts) else b"" for t in ids]
    if is_eog is not None:  # end tokens are control tokens: they render empty, never merge
        tx = [b"" if e else t for t, e in zip(tx, is_eog.tolist())]
    by_text = sorted(range(n), key=lambda i: tx[i])
    keys = [tx[i] for i in by_text]
    # a text has a partner iff its successor in sorted order starts with it (equal texts are
    # partners of each other both ways)
    has_partner = [False] * n
    for j in range(n - 1):
        if keys[j] and keys[j + 1].startswith(keys[j]):
            has_partner[by_text[j]] = True
            if keys[j + 1] == keys[j]:
                has_partner[by_text[j + 1]] = True
    dead = np.zeros(n, dtype=bool)
    for i0 in range(n):
        t0 = tx[i0]
        if not has_partner[i0] or dead[i0]:
            continue
        lo = bisect.bisect_left(keys, t0)
        hi = lo
        while hi < n and keys[hi].startswith(t0):
            hi += 1
        partners = sorted(by_text[j] for j in range(lo, hi) if by_text[j] != i0)
        for i1 in partners:
            if dead[i0]:
                break
            if dead[i1]:
                continue
            dst, src = (i1, i0) if p[i1] > p[i0] else (i0, i1)
            p[dst] += p[src]
            p[src] = 0.0
            dead[src] = True
    return p
