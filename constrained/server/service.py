"""From a checked request to rows the engine can decode: prompts, constraint, samplers, limits.

This runs in a worker thread (tokenizing and compiling take time), never in the engine's loop,
so a slow compile does not hold up other requests' tokens.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from ..decoding.loop import DecodeOptions, build_row
from ..decoding.prompts import check_prompt_ids, encode_prompt
from ..errors import ConstrainedError
from ..tools.formats import HERMES
from ..vocabulary import Vocabulary
from .engine import BatchEngine, Job
from .grammars import GrammarCache
from .protocol import RequestError, RequestPlan

_row_ids = itertools.count()


@dataclass(frozen=True)
class ServerLimits:
    """What one server accepts."""

    max_rows: int = 32                 # rows decoding at once (choices of all requests)
    max_waiting: int = 64              # requests queued beyond that (then 503)
    max_n: int = 16                    # choices per request
    max_tokens: int = 4096             # max_tokens / max_completion_tokens
    default_chat_tokens: int = 512     # chat requests without a max_tokens
    default_completion_tokens: int = 16  # OpenAI's default for /v1/completions
    max_request_bytes: int = 2_000_000
    max_grammar_bytes: int = 256_000
    max_prompt_tokens: int | None = None   # None: the model's context length
    compile_timeout: float = 30.0


class Service:
    """The model, its vocabulary, the grammar cache and the batch engine of one server."""

    def __init__(self, model, tokenizer, vocab: Vocabulary, model_name: str,
                 limits: ServerLimits = ServerLimits(), overlap: bool | str = "auto") -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.model_name = model_name
        self.limits = limits
        self.grammars = GrammarCache(vocab, max_grammar_bytes=limits.max_grammar_bytes,
                                     compile_timeout=limits.compile_timeout)
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = min(vocab.eos_token_ids)
        self.context = int(getattr(getattr(model, "config", None), "max_position_embeddings",
                                   0) or 0) or None
        self.engine = BatchEngine(model, vocab, pad, max_rows=limits.max_rows,
                                  max_waiting=limits.max_waiting, overlap=overlap)

    def close(self) -> None:
        self.engine.close()

    def check_model(self, name: str | None) -> None:
        if name is not None and name != self.model_name:
            raise RequestError(f"the model {name!r} does not exist: this server runs "
                               f"{self.model_name!r}", "model", status=404,
                               code="model_not_found")

    def prepare(self, plan: RequestPlan, loop: asyncio.AbstractEventLoop) -> tuple[Job, list[int]]:
        """The job for a request (rows in choice order: prompt by prompt, n each) and the
        prompt length of each row. RequestError when anything in it is unusable."""
        compiled = self.grammars.compiled(plan.constraint) if plan.constraint else None
        default = (self.limits.default_chat_tokens if plan.chat
                   else self.limits.default_completion_tokens)
        max_tokens = plan.max_tokens if plan.max_tokens is not None else default
        if max_tokens > self.limits.max_tokens:
            raise RequestError(f"max_tokens is {max_tokens}; this server allows at most "
                               f"{self.limits.max_tokens}", plan.max_tokens_param)
        options = DecodeOptions(max_new_tokens=max_tokens, stop=plan.stop,
                                complete_within_budget=plan.complete_within_budget,
                                logprobs=plan.logprobs)
        rows, lengths = [], []
        for p, prompt in enumerate(plan.prompts):
            ids, grammar = self._prompt(plan, p, prompt, compiled)
            self._check_length(plan, len(ids), max_tokens)
            for j in range(plan.n):
                seed = None if plan.seed is None else plan.seed + p * plan.n + j
                params = plan.sampling.replace(seed=seed if seed is not None else -1)
                try:
                    row = build_row(self.vocab, len(rows), ids, grammar, params, plan.stop,
                                    token_healing=plan.token_healing, options=options)
                except ConstrainedError as exc:
                    raise RequestError(f"token healing failed: {exc}", "token_healing") \
                        from None
                rows.append(row)
                lengths.append(len(ids))
        for row in rows:   # engine-wide ids (errors name them; the job maps them back)
            row.index = next(_row_ids)
        return Job(rows, loop), lengths

    def _prompt(self, plan: RequestPlan, p: int, prompt, compiled):
        param = "messages" if plan.chat else "prompt"
        if plan.suffix is not None:
            return self._infill(plan, p, prompt, compiled)
        try:
            tools = plan.tools
            ids = encode_prompt(prompt, self.tokenizer, chat=plan.chat, tools=tools,
                                tool_instructions=HERMES.instructions(tools) if tools else "")
            check_prompt_ids(ids, self.vocab.size)
        except ConstrainedError as exc:
            raise RequestError(str(exc), param) from None
        except Exception as exc:   # the tokenizer's chat template refused the messages
            raise RequestError(f"the prompt cannot be encoded: {exc}", param) from None
        return ids, compiled

    def _infill(self, plan: RequestPlan, p: int, prompt, compiled):
        from ..infill import InfillGrammar
        from ..infill.prompts import build_fim_prompt_text, detect_fim_tokens
        if not isinstance(prompt, str):
            raise RequestError("with 'suffix' the prompt must be text (the prefix)", "prompt")
        fim = detect_fim_tokens(self.vocab)
        if fim is None and compiled is None:
            raise RequestError("'suffix' needs a constraint (response_format, grammar or "
                               "regex) on a model without fill-in-the-middle tokens", "suffix")
        grammar = None
        if compiled is not None:
            try:
                grammar = InfillGrammar(compiled, prompt, plan.suffix)
            except ConstrainedError as exc:
                raise RequestError(f"no text joins this prompt and suffix under the "
                                   f"constraint: {exc}", "suffix") from None
        if fim is None:
            return encode_prompt(prompt, self.tokenizer, chat=False), grammar
        encode = lambda text: self.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
        return build_fim_prompt_text(prompt, plan.suffix, encode, fim).ids, grammar

    def _check_length(self, plan: RequestPlan, n_prompt: int, max_tokens: int) -> None:
        param = "messages" if plan.chat else "prompt"
        limit = self.limits.max_prompt_tokens
        if limit is not None and n_prompt > limit:
            raise RequestError(f"the prompt has {n_prompt} tokens; this server allows at "
                               f"most {limit}", param)
        if self.context is not None and n_prompt + max_tokens > self.context:
            raise RequestError(f"the model's context holds {self.context} tokens: the prompt "
                               f"({n_prompt}) and max_tokens ({max_tokens}) do not fit",
                               plan.max_tokens_param)
