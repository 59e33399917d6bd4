"""The decode loop: logits -> grammar mask -> sampler chain -> token -> matcher -> model.

Every step the model runs once over the batch (with its KV cache) while a worker thread
computes the grammar masks of the rows' current states; torch releases the GIL inside its
kernels, so the two overlap. Masks are applied in place on the logits. Tokens the grammar
forces are appended without sampling (and fed to the model in the same forward pass).
"""
from __future__ import annotations

import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from samplers import SamplerError

from ..bitmask import apply_token_bitmask_inplace, bitmask_words
from ..errors import (BudgetError, ConstrainedError, DeadEndError, DecodingError,
                      VocabularyError)
from ..runtimes import batch_for
from .budget import CompletionPlanner, cfg_parts, state_key
from .shortest import ShortestCompletion
from .byte_tokens import ByteTokenizer
from .forcing import accept_forced, only_allowed_token
from .prompts import check_prompt_ids, encode_prompts, split_prompts
from .result import (FINISH_CANCELLED, FINISH_ERROR, FINISH_LENGTH, FINISH_STOP,
                     FINISH_STOP_STRING, GenerationResult, StepTiming)
from .rows import Row
from .setup import (logits_width, per_prompt, resolve_grammar, resolve_sampling, resolve_vocab,
                    seeds_for)


_SLOW_MASK_SECONDS = 0.002
_TIGHT_SEARCH_STATES = 24     # states one exact search may visit while the budget is tight
_TIGHT_SEARCH_GROUPS = 256    # distinct token remainders per state in those searches
_CHECK_SEARCH_STATES = 400    # states the check before decoding may visit (once per row)
_TIGHT_EXACT_WINDOW = 3       # tokens left below which the tight mask is computed exactly
_ROOM_MARGIN = 8              # tokens kept beyond the byte distance before plans are needed


@dataclass(frozen=True)
class DecodeOptions:
    """Loop options shared by every row (see generate())."""

    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    force_tokens: bool = True
    complete_within_budget: bool = False
    budget_window: int | None = None
    overlap: bool | str = "auto"
    max_forced_run: int = 64
    budget_retries: int = 4
    logprobs: int | None = None


class Decoder:
    """Decodes a batch of rows; ``events()`` yields (row index, text piece) as text appears."""

    def __init__(self, model, vocab, rows: list[Row], options: DecodeOptions,
                 pad_token_id: int, *, isolate_errors: bool = False) -> None:
        self.model = model
        self.vocab = vocab
        self.rows = rows
        self.options = options
        self.tool_format = None    # set when the rows answer with tool calls (results parsed)
        # isolate_errors: a row whose grammar fails (dead end, budget) finishes with reason
        # "error" and keeps its exception in row.error; the other rows go on
        self.isolate_errors = isolate_errors
        self.eos_ids = sorted(vocab.eos_token_ids)
        self._eos = frozenset(self.eos_ids)
        self._token_bytes = vocab.token_bytes
        self._n_tokens = vocab.n_tokens
        self.kv = batch_for(model, pad_token_id)
        self.words = bitmask_words(vocab.size)
        self.bitmask = np.zeros((max(1, len(rows)), self.words), dtype=np.int32)
        self._bytes_tok = ByteTokenizer.of(vocab)
        self._planner = CompletionPlanner(self._bytes_tok)
        self._shortest = ShortestCompletion(vocab, max_states=_TIGHT_SEARCH_STATES,
                                            max_groups=_TIGHT_SEARCH_GROUPS)
        self._single_bytes = all(t >= 0 for t in self._bytes_tok.single_byte)
        self.results: list[GenerationResult | None] = [None] * len(rows)
        self.active: list[Row] = []
        self._joining: list[Row] = []
        self._lock = threading.Lock()
        self._logits: torch.Tensor | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future | None = None
        self._mask_time = 0.0
        self.admit(rows)

    # masks (worker thread) ---------------------------------------------------------------------
    def _fill_masks(self, active: list[Row]) -> float:
        start = time.perf_counter()
        for i, row in enumerate(active):
            m = row.matcher
            if m is None:
                self.bitmask[i] = -1
                row.only = -1
                continue
            try:
                m.fill_next_token_bitmask(self.bitmask, i)
                words = self.bitmask[i]
                if not words.any():
                    raise DeadEndError(f"prompt {row.index}: no token can follow the "
                                       f"{len(row.tokens)} generated tokens")
            except ConstrainedError as exc:
                if not self.isolate_errors:
                    raise
                row.error = exc
                self.bitmask[i] = -1
                row.only = -1
                continue
            row.only = only_allowed_token(words)
        return time.perf_counter() - start

    # choosing tokens (main thread) -------------------------------------------------------------
    def _sample(self, row: Row, logits: torch.Tensor) -> int:
        return int(row.chain.sample(logits, [row.history()])[0])

    def _ends(self, row: Row, token: int) -> bool:
        """Whether an accepted token ended the row: an end-of-sequence token, unless the
        grammar read it as one of its own tokens (a grammar may name ``<|eot_id|>``) and is
        not complete after it."""
        m = row.matcher
        return token in self._eos and (m is None or m.is_terminated() or m.is_accepting())

    def _accept(self, row: Row, token: int) -> None:
        if row.matcher is not None and not row.matcher.accept_token(token):
            raise DeadEndError(f"prompt {row.index}: token {token} was sampled but the grammar "
                               "does not allow it (mask and matcher disagree)")

    def _forced_run(self, row: Row, room: int) -> list[int]:
        if not row.options.force_tokens or row.matcher is None:
            return []
        if row.skip is not None and row.skip.left > 0:  # healing: the model picks the token
            return []
        return accept_forced(row.matcher, self._bytes_tok,
                             min(room, row.options.max_forced_run))

    def _budget_active(self, row: Row, remaining: int) -> bool:
        opt = row.options
        return (opt.complete_within_budget and row.matcher is not None
                and (opt.budget_window is None or remaining <= opt.budget_window))

    def _plan_of(self, row: Row) -> list[int] | None:
        """A plan from the row's current state, remembered per state (text inside a string
        leaves the state as it was, and so does its plan)."""
        key = state_key(row.matcher)
        if key is not None and key in row.plans:
            return list(row.plans[key])
        plan = self._planner.plan(row.matcher)
        if key is not None and plan is not None:
            if len(row.plans) >= 64:
                row.plans.clear()
            row.plans[key] = tuple(plan)
        return plan

    def _check_budget(self, row: Row) -> None:
        """Before decoding: a completion must fit in the tokens left (end-of-sequence token
        included); BudgetError when the shortest one found does not."""
        if row.matcher is None:
            return
        room = row.options.max_new_tokens - len(row.tokens)
        plan = self._planner.plan(row.matcher)
        if plan is None:    # the planner found none: decode, and say so in the result
            return
        if len(plan) + 1 > room:
            exact = self._shortest.distance(row.matcher, room - 1,
                                            max_states=_CHECK_SEARCH_STATES)
            if exact.tokens is None:
                raise BudgetError(
                    f"prompt {row.index}: max_new_tokens={row.options.max_new_tokens} is too "
                    f"small: the shortest completion found needs {len(plan)} tokens and the "
                    f"end-of-sequence token ({room} left)")
            plan = exact.tokens
        row.plan = plan

    def _first_eos(self, row: Row) -> int:
        for t in self.eos_ids:
            if row.matcher is None or row.matcher.accept_token(t):
                if row.matcher is not None:
                    row.matcher.rollback(1)
                return t
        raise DeadEndError(f"prompt {row.index}: the grammar is complete but no "
                           "end-of-sequence token is allowed")

    def _advance(self, row: Row, logits: torch.Tensor) -> list[int]:
        """Choose and accept this step's tokens: [] means EOS (the row is finished)."""
        remaining = row.options.max_new_tokens - len(row.tokens)
        if self._budget_active(row, remaining):
            # forced text too is cut into tokens under the budget's plan
            return self._advance_in_budget(row, logits, remaining)
        if row.only >= 0:  # exactly one token allowed: no sampling
            row.forced += 1
            token = row.only
        else:
            token = self._sample(row, logits)
        self._accept(row, token)
        if self._ends(row, token):
            return []
        forced = self._forced_run(row, remaining - 1)
        row.forced += len(forced)
        row.plan = None
        return [token] + forced

    def _roomy(self, m, room: int) -> bool:
        """Whether the text can surely complete in ``room`` tokens without planning: the
        grammar's byte distance (each byte is a token at worst) is far below it."""
        parts = cfg_parts(m)
        if parts is None or not self._single_bytes:
            return False
        _, state, dist = parts
        return dist.distance(state) + _ROOM_MARGIN <= room

    def _advance_in_budget(self, row: Row, logits: torch.Tensor, remaining: int) -> list[int]:
        m = row.matcher
        plan = row.plan
        if plan is None and not self._roomy(m, remaining - 1):
            plan = self._plan_of(row)
            if plan is None:
                return self._unplanned(row, logits, remaining)
        if plan is not None and len(plan) + 1 >= remaining:
            # tight: a token the plan's length still allows
            allowed = self._shortest.budget_mask(m, remaining) \
                if remaining <= _TIGHT_EXACT_WINDOW else None
            if allowed is not None and allowed[:logits.shape[-1]].any():
                keep = torch.from_numpy(np.pad(allowed, (0, max(0, logits.shape[-1]
                                                                - allowed.size))))
                masked = logits.masked_fill(~keep[:logits.shape[-1]], -math.inf)
                token = self._sample(row, masked)
                self._accept(row, token)
                row.steered += 1
                row.plan = None
                return [] if self._ends(row, token) else [token]
            return self._follow(row, plan)
        saved = logits.clone()
        for _ in range(row.options.budget_retries):
            token = self._sample(row, logits)
            self._accept(row, token)
            if self._ends(row, token):
                row.plan = None
                return []
            forced = self._forced_run(row, remaining - 1)
            used = 1 + len(forced)
            if plan is not None and plan[:used] == [token] + forced:
                after = plan[used:]
            elif self._roomy(m, remaining - used - 1):   # far from the end: no plan needed
                row.forced += len(forced)
                row.plan = None
                return [token] + forced
            else:
                after = self._plan_of(row)
            if after is not None and used + len(after) + 1 <= remaining:
                row.forced += len(forced)
                row.plan = after
                return [token] + forced
            m.rollback(used)
            saved[0, token] = -math.inf
            if bool(torch.isneginf(saved).all()):
                break
            logits = saved.clone()
        if plan is None:
            plan = self._plan_of(row)
            if plan is None:
                return self._unplanned(row, logits, remaining)
        return self._follow(row, plan)

    def _unplanned(self, row: Row, logits: torch.Tensor, remaining: int) -> list[int]:
        """No completion was found: decode as without a budget."""
        token = self._sample(row, logits)
        self._accept(row, token)
        if self._ends(row, token):
            return []
        forced = self._forced_run(row, remaining - 1)
        row.forced += len(forced)
        return [token] + forced

    def _follow(self, row: Row, plan: list[int]) -> list[int]:
        """Takes the plan's next token (the end-of-sequence token when the plan is done)."""
        if not plan:
            self._accept(row, self._first_eos(row))
            row.steered += 1
            return []
        self._accept(row, plan[0])
        row.steered += 1
        row.plan = plan[1:]
        return [plan[0]]

    # logprobs ------------------------------------------------------------------------------------
    def _logprobs(self, row: Row, logits: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of the masked logits plus the row's logit_bias (before sampling)."""
        work = logits.to(torch.float64)  # a copy: the sampler chain may edit logits in place
        bias = row.params.logit_bias if row.params is not None else ()
        if bias:
            ids = torch.tensor([t for t, _ in bias], dtype=torch.long)
            work[ids] += torch.tensor([b for _, b in bias], dtype=torch.float64)
        return torch.log_softmax(work, dim=-1)

    def _note_logprobs(self, row: Row, lp: torch.Tensor, tokens: list[int]) -> None:
        """The first token's logprob and top alternatives; forced followers get 0.0 and {}."""
        k = int(row.options.logprobs)
        row.token_logprobs.append(float(lp[tokens[0]]))
        if k > 0:
            vals, ids = torch.topk(lp, min(k, lp.shape[-1]))
            row.top_logprobs.append({int(t): float(v) for t, v in zip(ids.tolist(), vals.tolist())
                                     if v != float("-inf")})
        else:
            row.top_logprobs.append({})
        for _ in tokens[1:]:
            row.token_logprobs.append(0.0)
            row.top_logprobs.append({})

    def _text(self, row: Row, tokens: Sequence[int]) -> bool:
        n = self._n_tokens
        data = b"".join(self._token_bytes[t] for t in tokens if t < n)
        if row.skip is not None:  # healing: bytes repeating the prompt's end are not returned
            data = row.skip(data)
        return row.tracker.feed(data)

    # the loop ------------------------------------------------------------------------------------
    def admit(self, rows: Sequence[Row]) -> None:
        """Queue rows to join the batch before the next forward pass (safe from any thread)."""
        with self._lock:
            for row in rows:
                if row.options is None:
                    row.options = self.options
            self._joining.extend(rows)

    @property
    def busy(self) -> bool:
        """Whether rows are decoding or waiting to join."""
        return bool(self.active or self._joining)

    def events(self) -> Iterator[tuple[int, str]]:
        """Run to the end, yielding (prompt index, text piece) as whole characters appear."""
        try:
            while self.busy:
                pieces, finished = self.step()
                for row in finished:
                    self.results[row.index] = row.result()
                yield from pieces
        finally:
            self.close()

    def close(self) -> None:
        """Stop the mask worker (rows still decoding are abandoned)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _start(self, row: Row) -> list[int]:
        """A joining row's first chunk: its prompt, plus text the grammar forces at the very
        start (not under a budget: cut on its own it can cost tokens the plan would save)."""
        opt = row.options
        forced = [] if opt.complete_within_budget else \
            self._forced_run(row, opt.max_new_tokens - 1)
        if forced:
            row.forced += len(forced)
            row.tokens.extend(forced)
            self._text(row, forced)
            if opt.logprobs is not None:  # forced: no choice, probability 1
                row.token_logprobs.extend([0.0] * len(forced))
                row.top_logprobs.extend({} for _ in forced)
        if opt.complete_within_budget:
            self._check_budget(row)
        return row.prompt_ids + forced

    def _fail(self, row: Row, error: Exception) -> None:
        if not self.isolate_errors:
            raise error
        row.error = error
        row.finish = FINISH_ERROR

    def _launch_masks(self, active: list[Row]) -> None:
        if not any(r.matcher is not None for r in active):
            return
        if self.bitmask.shape[0] < len(active):
            self.bitmask = np.zeros((max(len(active), 2 * self.bitmask.shape[0]), self.words),
                                    dtype=np.int32)
        overlap = self.options.overlap
        # "auto": hand the mask to the worker only after a slow (first-visit) mask; warm masks
        # take microseconds, less than waking a thread on a busy machine
        slow = _SLOW_MASK_SECONDS if overlap == "auto" else -1.0
        if overlap and self._mask_time > slow:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="constrained-mask")
            self._mask_time = 0.0
            self._pending = self._pool.submit(self._fill_masks, active)
        else:
            self._mask_time = self._fill_masks(active)

    def step(self) -> tuple[list[tuple[int, str]], list[Row]]:
        """One round: every active row chooses its tokens from the last logits, finished rows
        leave, joining rows enter with their prompts, and the model runs once over the batch.
        Returns the text pieces that appeared and the rows that finished."""
        pieces: list[tuple[int, str]] = []
        finished: list[Row] = []
        chunks: list[list[int]] = []
        keep: list[int] = []
        active = self.active
        step_start = time.perf_counter()
        if active:
            wait = 0.0
            if self._pending is not None:
                w0 = time.perf_counter()
                self._mask_time = self._pending.result()
                wait = time.perf_counter() - w0
                self._pending = None
            s0 = time.perf_counter()
            logits = self._logits
            n = len(active)
            if any(r.matcher is not None for r in active):
                apply_token_bitmask_inplace(logits, torch.from_numpy(self.bitmask[:n]),
                                            self.vocab.size)
            added: list[int] = []
            for i, row in enumerate(active):
                tokens = self._choose(row, logits, i)
                added.append(max(1, len(tokens)))
                piece = row.tracker.pending() if row.finish is None else ""
                if row.finish is None:
                    keep.append(i)
                    chunks.append(tokens)
                if piece:
                    pieces.append((row.index, piece))
            sample = time.perf_counter() - s0
            total = (time.perf_counter() - step_start) + self.kv.forward_time
            for i, row in enumerate(active):
                row.timings.steps.append(StepTiming(total=total, forward=self.kv.forward_time,
                                                    mask=self._mask_time, mask_wait=wait,
                                                    sample=sample, n_tokens=added[i]))
                if row.finish is not None:
                    row.tracker.finish()
                    tail = row.tracker.pending()
                    if tail:
                        pieces.append((row.index, tail))
                    finished.append(row)
            if len(keep) != n:
                self.kv.keep(keep)
            active = [active[i] for i in keep]
        with self._lock:
            joining, self._joining = self._joining, []
        entered = 0
        for row in joining:
            if row.cancelled:
                row.finish = FINISH_CANCELLED
                finished.append(row)
                continue
            try:
                chunk = self._start(row)
            except ConstrainedError as exc:
                self._fail(row, exc)
                finished.append(row)
                continue
            active.append(row)
            chunks.append(chunk)
            entered += 1
        self.active = active
        if not active:
            self._logits = None
            self.kv.reset()
            return pieces, finished
        self._launch_masks(active)
        parts, forward = [], 0.0
        if len(active) > entered:    # rows already decoding: their new tokens
            parts.append(self.kv.step(chunks[:len(active) - entered]))
            forward += self.kv.forward_time
        if entered:                  # joining rows: their prompts, in a pass of their own
            parts.append(self.kv.join(chunks[len(active) - entered:]))
            forward += self.kv.forward_time
            for row in active[len(active) - entered:]:
                row.timings.prefill = self.kv.forward_time
        self.kv.forward_time = forward
        logits = parts[0] if len(parts) == 1 else torch.cat(parts)
        if logits.shape[-1] < self.vocab.size:
            raise VocabularyError(f"the model produced {logits.shape[-1]} logits but the "
                                  f"vocabulary has {self.vocab.size} entries")
        self._logits = logits
        return pieces, finished

    def _choose(self, row: Row, logits: torch.Tensor, i: int) -> list[int]:
        """Row i's tokens for this step ([] when it finishes), its finish reason set."""
        opt = row.options
        if row.cancelled:
            row.finish = FINISH_CANCELLED
            return []
        if row.error is not None:
            row.finish = FINISH_ERROR
            return []
        if row.tracker.stopped:  # a stop string in the forced start text
            row.finish = FINISH_STOP_STRING
            return []
        try:
            lp = self._logprobs(row, logits[i]) if opt.logprobs is not None else None
            tokens = self._advance(row, logits[i:i + 1])
        except (ConstrainedError, SamplerError) as exc:   # e.g. logit_bias banned every token
            self._fail(row, exc)
            return []
        if lp is not None and tokens:
            self._note_logprobs(row, lp, tokens)
        if not tokens:
            row.finish = FINISH_STOP
            return []
        row.tokens.extend(tokens)
        if self._text(row, tokens):
            row.finish = FINISH_STOP_STRING
        elif len(row.tokens) >= opt.max_new_tokens:
            row.finish = FINISH_LENGTH
        return tokens


# public entry points ---------------------------------------------------------------------------
def build_row(vocab, index: int, prompt_ids: list[int], compiled, params, stop: Sequence[str],
              *, token_healing: bool = False, options: DecodeOptions | None = None) -> Row:
    """One prompt's decode state: its matcher (healed when asked) and its sampler chain."""
    from samplers import SamplerChain
    token_bytes, n_tok = vocab.token_bytes, vocab.n_tokens

    def _text_of(i: int) -> bytes:
        return token_bytes[i] if i < n_tok else b""

    chain = SamplerChain(params, vocab_size=vocab.size, token_texts=_text_of,
                         eos_token_ids=sorted(vocab.eos_token_ids))
    row = Row(index, list(prompt_ids), compiled, chain, tuple(stop), params, options)
    budgets = getattr(getattr(compiled, "grammar", None), "budgets", ())
    if budgets and row.matcher is not None:
        from .region_budget import budgeted_matcher
        row.matcher = budgeted_matcher(compiled, row.matcher, budgets[0])
    if token_healing:
        from ..healing.hook import heal_for_decoding
        healed = heal_for_decoding(vocab, row.prompt_ids, row.matcher)
        row.prompt_ids = list(healed.prompt_ids)
        row.matcher = healed.matcher
        row.skip = healed.skipper()
    return row


def build_decoder(model, tokenizer_or_vocab, prompts: Any, *, grammar=None, sampling=None,
                  max_new_tokens: int = 256, stop: str | Sequence[str] | None = None,
                  seed: int | Sequence[int] | None = None, chat: bool = False,
                  system: str | None = None, force_tokens: bool = True,
                  complete_within_budget: bool = False, budget_window: int | None = None,
                  overlap: bool | str = "auto",
                  logprobs: int | None = None,
                  token_healing: bool = False, tools=None, tool_choice="auto",
                  tool_format="hermes", parallel_tool_calls: bool = True,
                  reasoning_budget: int | None = None, reasoning_tags=("<think>", "</think>")
                  ) -> tuple[Decoder, bool]:
    """A Decoder for the prompts, and whether a single prompt (not a list) was given."""
    if logprobs is not None and (isinstance(logprobs, bool) or not isinstance(logprobs, int)
                                 or logprobs < 0):
        raise DecodingError(f"logprobs must be a non-negative integer or None, got {logprobs!r}")
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) \
            or max_new_tokens < 1:
        raise DecodingError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
    items, single = split_prompts(prompts)
    n = len(items)
    vocab, tokenizer = resolve_vocab(tokenizer_or_vocab, logits_width(model))
    tool_text, fmt = "", None
    if tools is not None:
        if grammar is not None:
            raise DecodingError("give either a grammar or tools: with tools the grammar is "
                                "the tool calls' structural tag")
        from ..grammar import Grammar
        from ..tools import tools_structural_tag
        from ..tools.spec import tool_format as _tool_format
        fmt = _tool_format(tool_format)
        grammar = Grammar.from_structural_tag(
            tools_structural_tag(tools, tool_choice, tool_format_name=fmt,
                                 parallel_tool_calls=parallel_tool_calls), vocab)
        tool_text = fmt.instructions(list(tools))
        chat = True
    if reasoning_budget is not None:
        if isinstance(grammar, (list, tuple)):
            raise DecodingError("reasoning_budget takes one grammar for every prompt")
        from ..grammar.reasoning import with_reasoning
        begin, end = reasoning_tags
        grammar = with_reasoning(grammar, reasoning_budget, vocab, begin, end)
    grammars = per_prompt(grammar, n, "grammar")
    samplings = per_prompt(sampling, n, "sampling")
    seeds = seeds_for(seed, n)
    compiled = [resolve_grammar(g, vocab) for g in grammars]
    params = []
    for r in range(n):
        p = resolve_sampling(samplings[r], seeds[r])
        if seed is None and p.seed is not None and not isinstance(sampling, (list, tuple)):
            p = p.replace(seed=p.seed + r)
        params.append(p)
    stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
    prompt_ids = encode_prompts(items, tokenizer, chat=chat, system=system,
                                tools=tools, tool_instructions=tool_text)
    for ids in prompt_ids:
        check_prompt_ids(ids, vocab.size)
    rows = [build_row(vocab, r, prompt_ids[r], compiled[r], params[r], stops,
                      token_healing=token_healing) for r in range(n)]
    pad = getattr(tokenizer, "pad_token_id", None) if tokenizer is not None else None
    if pad is None:
        pad = min(vocab.eos_token_ids)
    options = DecodeOptions(max_new_tokens=max_new_tokens, stop=stops,
                            force_tokens=force_tokens,
                            complete_within_budget=complete_within_budget,
                            budget_window=budget_window, overlap=overlap,
                            logprobs=None if logprobs is None else int(logprobs))
    decoder = Decoder(model, vocab, rows, options, pad)
    decoder.tool_format = fmt
    return decoder, single


def generate(model, tokenizer_or_vocab, prompts: Any, *, grammar=None, sampling=None,
             max_new_tokens: int = 256, stop: str | Sequence[str] | None = None,
             seed: int | Sequence[int] | None = None, chat: bool = False,
             system: str | None = None, force_tokens: bool = True,
             complete_within_budget: bool = False, budget_window: int | None = None,
             overlap: bool | str = "auto",
             logprobs: int | None = None,
             token_healing: bool = False, tools=None, tool_choice="auto",
             tool_format="hermes", parallel_tool_calls: bool = True,
             reasoning_budget: int | None = None, reasoning_tags=("<think>", "</think>")
             ) -> GenerationResult | list[GenerationResult]:
    """Generate from a Hugging Face causal LM, constrained by a grammar.

    ``prompts``: text, chat messages, token ids, or a list of those (one batch; rows leave it
    as they finish). ``grammar``: a Grammar, a CompiledGrammar for this vocabulary, None
    (unconstrained), or one per prompt. ``sampling``: samplers.SamplingParams or a dict of its
    field names (temperature, top_k, top_p, min_p, ...), or one per prompt. ``seed``: one seed
    (row r uses seed + r) or one per prompt. ``stop``: strings that end the text (cut before);
    under a grammar only where the text before them is a complete sentence.
    ``chat`` applies the tokenizer's chat template (with ``system`` as the system message).
    ``force_tokens`` appends forced text without sampling. ``complete_within_budget`` steers
    the last tokens so the output is a complete sentence within ``max_new_tokens`` (counting
    the end-of-sequence token); ``budget_window`` limits that to the last N tokens.
    ``overlap`` computes masks in a worker thread while the model runs: True every step,
    "auto" (default) after a step whose masks were slow (first visits of grammar states),
    False never. ``logprobs=n`` records each generated token's log-probability under the
    model's distribution plus logit_bias, masked by the grammar (before the rest of the sampler
    chain), and the n most likely tokens; tokens of a forced run after the first get 0.0.
    ``token_healing`` backs each prompt up over its last token(s) and lets the model regenerate
    them (constrained to start with the removed text); the repeated bytes are not in ``text``
    but their tokens are in ``token_ids``.
    ``tools`` (OpenAI-style function tools) and ``tool_choice`` ("auto", "required", "none" or
    ``{"type": "function", "function": {"name": ...}}``): the prompts are chats shown the tools,
    the output is free text and calls in ``tool_format`` ("hermes": ``<tool_call>`` JSON
    ``</tool_call>``; "llama3_json"; or a constrained.tools.ToolFormat), each call's
    arguments valid under its tool's schema; results carry ``tool_calls`` (parsed) and
    ``content`` (the text outside them). ``parallel_tool_calls=False`` allows one call.
    ``reasoning_budget=N``: the output opens with a reasoning block (``reasoning_tags``,
    ``<think>`` free text ``</think>``; special tokens where the vocabulary has them) closed
    within N tokens from the start, exactly, then the grammar (or the tools' calls).

    Returns one GenerationResult for a single prompt, else a list in prompt order.
    """
    decoder, single = build_decoder(
        model, tokenizer_or_vocab, prompts, grammar=grammar, sampling=sampling,
        max_new_tokens=max_new_tokens, stop=stop, seed=seed, chat=chat, system=system,
        force_tokens=force_tokens, complete_within_budget=complete_within_budget,
        budget_window=budget_window, overlap=overlap, logprobs=logprobs,
        token_healing=token_healing, tools=tools, tool_choice=tool_choice,
        tool_format=tool_format, parallel_tool_calls=parallel_tool_calls,
        reasoning_budget=reasoning_budget, reasoning_tags=reasoning_tags)
    for _ in decoder.events():
        pass
    results = decoder.results
    if decoder.tool_format is not None:
        from ..tools import parse_tool_calls
        for result in results:
            result.content, result.tool_calls = parse_tool_calls(result.text,
                                                                 decoder.tool_format)
    return results[0] if single else results


def generate_healed(model, tokenizer_or_vocab, prompts: Any, **options: Any
                    ) -> GenerationResult | list[GenerationResult]:
    """``generate`` with ``token_healing=True``: each result's ``text`` is exactly the
    continuation after its original prompt (``token_ids`` list the regenerated tokens too)."""
    return generate(model, tokenizer_or_vocab, prompts, token_healing=True, **options)
