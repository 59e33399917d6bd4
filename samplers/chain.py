"""The sampler chain: per-row parameters, an ordered list of samplers, seeded selection.

Rows whose parameters resolve to the same sampler order are processed together as one batch;
each sampler is vectorised over its rows and skips the rows its parameters disable.
State: every row owns a selection generator, an XTC generator and (for mirostat) mu.
``sample`` advances that state; ``filter`` only reads it (except XTC's coin, which it draws).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
from torch import Tensor

from . import penalties as _pen
from . import truncation as _tr
from ._candidates import Candidates
from ._rng import STREAM_SELECT, STREAM_XTC, make_generator
from .dry import BreakerTable, build_breakers, dry as _dry
from .errors import AllMaskedError, InvalidLogitsError, InvalidParameterError
from .infill import infill as _infill
from .mirostat import mirostat_v1, mirostat_v2
from .params import SamplingParams
from .selection import select_dist, select_greedy, select_race
from .temperature import temperature as _temperature
from .xtc import xtc as _xtc

_TRUNCATING = frozenset({"top_n_sigma", "min_p", "top_a", "xtc", "mirostat"})

TokenTexts = Sequence[str] | Sequence[bytes] | Callable[[int], str | bytes]


def _f(vals: list[float]) -> Tensor:
    return torch.tensor(vals, dtype=torch.float32)


def _i(vals: list[int]) -> Tensor:
    return torch.tensor(vals, dtype=torch.int64)


class _ThreadLimit:
    """Temporarily set torch's intra-op thread count (no-op for None)."""

    def __init__(self, n: int | None) -> None:
        self.n = n
        self.old = 0

    def __enter__(self) -> None:
        if self.n is not None:
            self.old = torch.get_num_threads()
            if self.old != self.n:
                torch.set_num_threads(self.n)

    def __exit__(self, *exc) -> None:
        if self.n is not None and self.old != self.n:
            torch.set_num_threads(self.old)


class _Group:
    """Rows sharing one sampler order, with their parameters as tensors."""

    def __init__(self, chain: "SamplerChain", rows: list[int], order: tuple[str, ...]) -> None:
        self.rows = rows
        self.order = order
        self.index = None if len(rows) == chain.batch_size else torch.tensor(rows, dtype=torch.int64)
        ps = [chain.row_params[r] for r in rows]
        self.params = ps
        n = len(ps)
        self.min_keep = _i([p.min_keep for p in ps])
        # truncation
        self.top_k = _i([p.top_k for p in ps])
        self.top_p = _f([p.top_p for p in ps])
        self.min_p = _f([p.min_p for p in ps])
        self.typical = _f([p.typical_p for p in ps])
        self.tfs = _f([p.tfs_z for p in ps])
        self.top_a = _f([p.top_a for p in ps])
        self.nsigma = _f([p.top_n_sigma for p in ps])
        self.xtc_p = [p.xtc_probability for p in ps]
        self.xtc_t = _f([p.xtc_threshold for p in ps])
        mir = [p.mirostat for p in ps]
        self.mirostat = _i(mir)
        self.temp = _f([p.temperature for p in ps])
        self.dyn_range = _f([0.0 if p.mirostat else p.dynatemp_range for p in ps])
        self.dyn_exp = _f([p.dynatemp_exponent for p in ps])
        self.active = {
            "top_k": self.top_k > 0,
            "top_p": self.top_p < 1,
            "min_p": self.min_p > 0,
            "typical": self.typical < 1,
            "tfs": self.tfs < 1,
            "tfs_kai": self.tfs < 1,
            "top_a": self.top_a > 0,
            "top_n_sigma": self.nsigma > 0,
            "xtc": torch.tensor([p.xtc_probability > 0 and p.xtc_threshold <= 0.5 for p in ps]),
            "temperature": (self.temp != 1) | (self.dyn_range > 0),
        }
        # penalties (python lists: they index histories)
        self.last_n = [p.repeat_last_n for p in ps]
        self.repeat = _f([p.repeat_penalty for p in ps])
        self.freq = _f([p.frequency_penalty for p in ps])
        self.presence = _f([p.presence_penalty for p in ps])
        self.pen_rows = [b for b, p in enumerate(ps) if p.repeat_last_n != 0 and not (
            p.repeat_penalty == 1 and p.frequency_penalty == 0 and p.presence_penalty == 0)]
        nl = chain.newline_token_ids
        self.skip_nl = [None if p.penalize_nl or not nl else list(nl) for p in ps]
        if all(s is None for s in self.skip_nl):
            self.skip_nl = None
        self.kai_rows = [b for b, p in enumerate(ps) if p.repeat_penalty != 1]
        self.kcpp_rows = [b for b, p in enumerate(ps) if p.rep_pen_range > 0 and not (
            p.repeat_penalty == 1 and p.presence_penalty == 0)]
        # logit bias (+ ignore_eos)
        br, bt, bb = [], [], []
        for b, p in enumerate(ps):
            items = list(p.logit_bias)
            if p.ignore_eos:
                items += [(t, -math.inf) for t in chain.eos_token_ids]
            for t, v in items:
                if t >= chain.vocab_size:
                    raise InvalidParameterError("logit_bias", f"token id {t} is outside the vocabulary "
                                                              f"[0, {chain.vocab_size})", row=rows[b])
                br.append(b)
                bt.append(t)
                bb.append(v)
        self.bias = (_i(br), _i(bt), torch.tensor(bb, dtype=torch.float32))
        # DRY
        self.dry_rows = [b for b, p in enumerate(ps) if p.dry_multiplier != 0 and p.dry_base >= 1
                         and p.dry_penalty_last_n != 0]
        self.dry_tables: list[BreakerTable | None] = [None] * n
        if "dry" in order:
            for b in self.dry_rows:
                self.dry_tables[b] = chain._breakers(ps[b].dry_sequence_breakers)
        self.mir_rows = [b for b, m in enumerate(mir) if m]
        if "infill" in order:
            if not chain.eos_token_ids:
                raise InvalidParameterError("samplers", "the infill sampler needs eos_token_ids (end-of-generation tokens)",
                                            row=rows[0])
            if chain.token_texts is None:
                raise InvalidParameterError("samplers", "the infill sampler needs token_texts", row=rows[0])
        self.selection = order[-1]


class SamplerChain:
    """A batch of samplers turning logits [B, V] into next tokens.

    ``params`` is one :class:`SamplingParams` for every row (row r then uses seed + r; the
    chain adapts to the batch size of each call, re-seeding when it changes) or one per row. ``token_texts`` (a list of token strings/bytes or a callable id -> text) maps DRY's
    breaker strings to tokens and finds the newline token; ``tokenize`` (optional, text -> ids)
    gives llama.cpp's exact multi-token breakers. ``eos_token_ids`` serve ``ignore_eos`` and are
    the end-of-generation tokens of the ``infill`` sampler (letter 'i', see :mod:`samplers.infill`).
    ``num_threads`` (optional) runs each call with that many torch intra-op threads (restored
    afterwards); 1 avoids OpenMP contention on busy machines, where a step is mostly small ops.

    ``sample`` returns token ids and advances each row's generators and mirostat mu; histories
    (each row's tokens so far, oldest first) are passed on every call, the chain keeps none.
    """

    def __init__(self, params: SamplingParams | Sequence[SamplingParams] | None = None,
                 vocab_size: int | None = None, token_texts: TokenTexts | None = None, *,
                 eos_token_ids: Sequence[int] = (), newline_token_ids: Sequence[int] | None = None,
                 tokenize: Callable[[str], Sequence[int]] | None = None,
                 num_threads: int | None = None) -> None:
        if num_threads is not None and (isinstance(num_threads, bool) or not isinstance(num_threads, int)
                                        or num_threads < 1):
            raise InvalidParameterError("num_threads", f"must be a positive integer or None, got {num_threads!r}")
        self.num_threads = num_threads
        if vocab_size is None or isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= 0:
            raise InvalidParameterError("vocab_size", f"must be a positive integer, got {vocab_size!r}")
        self.vocab_size = vocab_size
        if params is None:
            params = SamplingParams()
        if isinstance(params, SamplingParams):
            self._broadcast: SamplingParams | None = params
            self._given: list[SamplingParams] | None = None
        else:
            plist = list(params)
            if not plist:
                raise InvalidParameterError("params", "needs at least one SamplingParams")
            for i, p in enumerate(plist):
                if not isinstance(p, SamplingParams):
                    raise InvalidParameterError("params", f"entry {i} is not a SamplingParams: {p!r}")
            self._broadcast, self._given = None, plist
        self._texts_src = token_texts
        self._texts: list | None = None
        self._tokenize = tokenize
        self.eos_token_ids = [int(t) for t in eos_token_ids]
        for t in self.eos_token_ids:
            if not 0 <= t < vocab_size:
                raise InvalidParameterError("eos_token_ids", f"token id {t} is outside the vocabulary")
        self._newline = None if newline_token_ids is None else [int(t) for t in newline_token_ids]
        self._breaker_cache: dict[tuple, BreakerTable] = {}
        self.batch_size = 0
        self.row_params: list[SamplingParams] = []
        self._groups: list[_Group] = []
        # broadcast mode builds one row now (validating parameters against the vocabulary)
        # and rebuilds for the batch size of the first call
        self._setup(len(self._given) if self._given is not None else 1)

    # ------------------------------------------------------------------ setup
    @property
    def token_texts(self) -> list | None:
        if self._texts is None and self._texts_src is not None:
            src = self._texts_src
            if callable(src):
                self._texts = [src(i) for i in range(self.vocab_size)]
            else:
                self._texts = list(src)
            if len(self._texts) != self.vocab_size:
                raise InvalidParameterError("token_texts", f"has {len(self._texts)} entries, "
                                                           f"vocab_size is {self.vocab_size}")
        return self._texts

    @property
    def newline_token_ids(self) -> list[int]:
        if self._newline is None:
            texts = self.token_texts
            self._newline = [] if texts is None else [i for i, t in enumerate(texts) if t in ("\n", b"\n")]
        return self._newline

    def _breakers(self, breakers: tuple) -> BreakerTable:
        tab = self._breaker_cache.get(breakers)
        if tab is None:
            needs_text = any(isinstance(b, str) for b in breakers)
            tab = build_breakers(breakers, self.vocab_size, self.token_texts if needs_text else None,
                                 self._tokenize)
            self._breaker_cache[breakers] = tab
        return tab

    def _setup(self, batch: int) -> None:
        if self._given is not None:
            rows = self._given
        else:
            base = self._broadcast
            assert base is not None
            rows = [base] * batch
        self.batch_size = batch
        self.row_params = rows
        if self._given is not None:
            self.row_seeds = [p.seed for p in rows]
        else:
            self.row_seeds = [None if rows[0].seed is None else rows[0].seed + r for r in range(batch)]
        self._sel_rng = [make_generator(sd, STREAM_SELECT) for sd in self.row_seeds]
        self._xtc_rng: list = [None] * batch  # created on first use
        self.mu = torch.tensor([2.0 * p.mirostat_tau for p in rows], dtype=torch.float64)
        by_order: dict[tuple, list[int]] = {}
        cache: dict[int, tuple] = {}
        for r, p in enumerate(rows):
            order = cache.get(id(p))
            if order is None:
                order = cache[id(p)] = p.resolved_order()
            by_order.setdefault(order, []).append(r)
        self._groups = [_Group(self, rs, order) for order, rs in by_order.items()]

    def _xtc_generator(self, row: int):
        gen = self._xtc_rng[row]
        if gen is None:
            gen = self._xtc_rng[row] = make_generator(self.row_seeds[row], STREAM_XTC)
        return gen

    def reset(self) -> None:
        """Re-seed every row and restore mirostat's mu to 2 * tau."""
        self._setup(self.batch_size)

    def _ensure_batch(self, batch: int) -> None:
        if self._given is not None:
            if batch != self.batch_size:
                raise InvalidLogitsError(f"logits have {batch} rows but the chain was built for "
                                         f"{self.batch_size} rows of parameters")
        elif batch != self.batch_size:
            self._setup(batch)

    # ------------------------------------------------------------------ running
    def _check(self, logits: Tensor, histories) -> tuple[Tensor, list]:
        if not isinstance(logits, Tensor):
            logits = torch.as_tensor(logits)
        if logits.dim() == 1:
            logits = logits[None, :]
        if logits.dim() != 2:
            raise InvalidLogitsError(f"logits must be [B, V], got shape {tuple(logits.shape)}")
        if logits.shape[1] != self.vocab_size:
            raise InvalidLogitsError(f"logits have {logits.shape[1]} columns but vocab_size is {self.vocab_size}")
        if logits.dtype != torch.float32:
            logits = logits.to(torch.float32)
        self._ensure_batch(logits.shape[0])
        mx = logits.amax(dim=1)
        if bool(torch.isnan(mx).any()):
            raise InvalidLogitsError(f"logits contain NaN in row(s) {torch.isnan(mx).nonzero().flatten().tolist()}")
        if bool(torch.isposinf(mx).any()):
            raise InvalidLogitsError(f"logits contain +inf in row(s) {torch.isposinf(mx).nonzero().flatten().tolist()}")
        dead = torch.isneginf(mx)
        if bool(dead.any()):
            raise AllMaskedError(dead.nonzero().flatten().tolist(), "input")
        if histories is None:
            histories = [()] * logits.shape[0]
        else:
            histories = list(histories)
            if len(histories) != logits.shape[0]:
                raise InvalidParameterError("histories", f"has {len(histories)} rows, logits have {logits.shape[0]}")
        return logits, histories

    def _run_group(self, g: _Group, logits: Tensor, histories: list) -> Candidates:
        sub = logits if g.index is None else logits[g.index]
        hist = histories if g.index is None else [histories[r] for r in g.rows]
        c = Candidates(sub, self.vocab_size)
        for name in g.order[:-1]:
            if self._step(name, c, g, hist) is not False and c.ids is None and name in _TRUNCATING:
                c.compact_if_sparse()
        return c

    def _step(self, name: str, c: Candidates, g: _Group, hist: list) -> bool | None:
        """Run one sampler on the group; returns False when every row skips it."""
        act = g.active.get(name)
        if act is not None and not bool(act.any()):
            return False
        if name == "logit_bias":
            rows, toks, bias = g.bias
            if rows.numel():
                _pen.logit_bias(c, rows, toks, bias)
                dead = torch.isneginf(c.logits.amax(dim=1))
                if bool(dead.any()):
                    raise AllMaskedError([g.rows[i] for i in dead.nonzero().flatten().tolist()], "logit_bias")
        elif name == "penalties":
            if g.pen_rows:
                _pen.penalties(c, hist, g.pen_rows, g.last_n, g.repeat, g.freq, g.presence, g.skip_nl)
        elif name == "rep_pen":
            if g.kai_rows:
                _pen.rep_pen_koboldai(c, hist, g.kai_rows, [p.repeat_penalty for p in g.params],
                                      [p.rep_pen_range for p in g.params], [p.rep_pen_slope for p in g.params])
        elif name == "rep_pen_kcpp":
            if g.kcpp_rows:
                _pen.rep_pen_koboldcpp(c, hist, g.kcpp_rows, [p.repeat_penalty for p in g.params],
                                       [p.rep_pen_range for p in g.params], [p.rep_pen_slope for p in g.params],
                                       [p.presence_penalty for p in g.params])
        elif name == "dry":
            if g.dry_rows:
                ps = g.params
                _dry(c, hist, g.dry_rows, [p.dry_multiplier for p in ps], [p.dry_base for p in ps],
                     [p.dry_allowed_length for p in ps], [p.dry_penalty_last_n for p in ps], g.dry_tables)
        elif name == "top_n_sigma":
            _tr.top_n_sigma(c, g.nsigma, act)
        elif name == "top_k":
            _tr.top_k(c, g.top_k, act)
        elif name == "top_p":
            _tr.top_p(c, g.top_p, g.min_keep, act)
        elif name == "min_p":
            _tr.min_p(c, g.min_p, g.min_keep, act)
        elif name == "typical":
            _tr.typical(c, g.typical, g.min_keep, act)
        elif name == "tfs":
            _tr.tail_free(c, g.tfs, g.min_keep, act)
        elif name == "tfs_kai":
            _tr.tail_free_kai(c, g.tfs, g.min_keep, act)
        elif name == "top_a":
            _tr.top_a(c, g.top_a, g.min_keep, act)
        elif name == "xtc":
            n = c.n_finite()
            fire = torch.zeros(c.batch, dtype=torch.bool)
            for b in act.nonzero().flatten().tolist():
                if int(n[b]) >= 2:
                    chance = self._xtc_generator(g.rows[b]).random()
                    fire[b] = chance <= g.xtc_p[b]
            _xtc(c, g.xtc_t, g.min_keep, fire)
        elif name == "temperature":
            _temperature(c, g.temp, g.dyn_range, g.dyn_exp, act)
        elif name == "infill":
            out = _infill(c.logits, self.eos_token_ids, self.token_texts, ids=c.ids,
                          keep_logits=True)   # later stages see the logits, as in llama.cpp
            c.logits = out.to(c.logits.dtype)
            c.sorted = False
        elif name == "mirostat":
            mu = self.mu if g.index is None else self.mu[g.index]
            mir = g.mirostat
            mirostat_v2(c, mu, mir == 2)
            mirostat_v1(c, mu, self.vocab_size, mir == 1)
        else:  # pragma: no cover - orders are validated in SamplingParams
            raise InvalidParameterError("samplers", f"unknown sampler {name!r}")

    def _select(self, g: _Group, c: Candidates) -> tuple[Tensor, Tensor]:
        if g.selection == "greedy":
            return select_greedy(c)
        if g.selection == "race":
            keys = torch.tensor([int(self._sel_rng[r].integers(0, 2 ** 63 - 1)) for r in g.rows],
                                dtype=torch.int64)
            return select_race(c, keys)
        u = torch.tensor([self._sel_rng[r].random() for r in g.rows], dtype=torch.float64)
        return select_dist(c, u)

    # ------------------------------------------------------------------ public
    def _threads(self):
        return _ThreadLimit(self.num_threads)

    def sample(self, logits: Tensor, histories: Sequence[Sequence[int]] | None = None,
               return_probs: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Next token per row: ids [B] (and, with ``return_probs``, their probabilities [B]
        under the filtered distribution).

        ``logits`` [B, V] (masked tokens -inf) may be modified in place; ``histories`` holds each
        row's tokens so far, oldest first (None: empty). Advances each row's generators and
        updates mirostat's mu with the chosen token; there is no separate accept step."""
        with torch.no_grad(), self._threads():
            return self._sample(logits, histories, return_probs)

    def _sample(self, logits: Tensor, histories, return_probs: bool):
        logits, histories = self._check(logits, histories)
        B = logits.shape[0]
        if len(self._groups) == 1:
            g = self._groups[0]
            tok, p = self._select(g, self._run_group(g, logits, histories))
        else:
            tok = torch.empty(B, dtype=torch.int64)
            p = torch.empty(B, dtype=torch.float64)
            for g in self._groups:
                t_g, p_g = self._select(g, self._run_group(g, logits, histories))
                tok[g.index] = t_g
                p[g.index] = p_g
        self._update_mirostat(p)
        tok = tok.to(torch.int64)
        return (tok, p.to(torch.float32)) if return_probs else tok

    def _update_mirostat(self, p: Tensor) -> None:
        for g in self._groups:
            if not g.mir_rows:
                continue
            for b in g.mir_rows:
                r = g.rows[b]
                prm = self.row_params[r]
                surprise = -math.log2(max(float(p[r]), 1e-300))
                self.mu[r] = float(self.mu[r]) - prm.mirostat_eta * (surprise - prm.mirostat_tau)

    def filter(self, logits: Tensor, histories: Sequence[Sequence[int]] | None = None) -> Tensor:
        """The logits after every sampler but the selection: [B, V], -inf outside the kept set.
        ``softmax`` of the result is the distribution ``sample`` draws from (for logprobs and
        tests). Does not advance the selection generators or mu, but does draw XTC's coin;
        ``logits`` may be modified in place."""
        with torch.no_grad(), self._threads():
            return self._filter(logits, histories)

    def _filter(self, logits: Tensor, histories) -> Tensor:
        logits, histories = self._check(logits, histories)
        if len(self._groups) == 1:
            return self._run_group(self._groups[0], logits, histories).to_dense()
        out = torch.empty_like(logits)
        for g in self._groups:
            out[g.index] = self._run_group(g, logits, histories).to_dense()
        return out

    def probs(self, logits: Tensor, histories: Sequence[Sequence[int]] | None = None) -> Tensor:
        """Softmax of :meth:`filter` — the sampling distribution, [B, V]."""
        return torch.softmax(self.filter(logits, histories), dim=1)

    def __repr__(self) -> str:
        orders = sorted({g.order for g in self._groups}) if self._groups else \
            [self._broadcast.resolved_order()] if self._broadcast else []
        return f"SamplerChain(vocab_size={self.vocab_size}, rows={self.batch_size}, orders={orders})"
