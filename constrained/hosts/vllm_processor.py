"""vLLM as a host: a batch-level logits processor that applies this engine's exact masks.

Register it with vLLM (v1 engine, CPU or GPU):

    vllm serve MODEL --logits-processors constrained.hosts.vllm_processor:ConstrainedLogitsProcessor
    LLM(model=MODEL, logits_processors=[ConstrainedLogitsProcessor])

and constrain a request through its extra arguments (``SamplingParams(extra_args=...)``, or
``vllm_xargs`` in a REST request): ``constrained_json_schema`` (the schema as JSON text or a
dict), ``constrained_grammar`` (Lark, or GBNF when the text has ``::=``), ``constrained_regex``.
Requests without them are left alone. Masks are computed for every constrained row of a step
and applied in place; rows follow vLLM's batch updates (added, removed, moved) and read their
generated tokens from the running output lists vLLM shares with processors.
"""
from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from ..bitmask import apply_token_bitmask_inplace, bitmask_words, token_ids_to_bitmask
from ..compiler import compile_grammar
from ..errors import ConstrainedError
from ..grammar import Grammar
from ..vocabulary import Vocabulary

KEYS = ("constrained_json_schema", "constrained_grammar", "constrained_regex")


def _constraint(params: SamplingParams) -> tuple[str, str] | None:
    """(key, text) of the request's constraint, or None; ValueError when malformed."""
    extra = params.extra_args or {}
    found = [k for k in KEYS if extra.get(k) is not None]
    if not found:
        return None
    if len(found) > 1:
        raise ValueError(f"give one of {', '.join(KEYS)}; got {', '.join(found)}")
    key = found[0]
    value = extra[key]
    if key == "constrained_json_schema" and isinstance(value, (dict, bool)):
        value = json.dumps(value)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return key, value


def _grammar(key: str, text: str) -> Grammar:
    if key == "constrained_json_schema":
        try:
            schema = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"constrained_json_schema is not JSON: line {exc.lineno}, column "
                             f"{exc.colno}: {exc.msg}") from None
        return Grammar.from_json_schema(schema)
    if key == "constrained_regex":
        from ..automata import regex_to_byte_dfa
        regex_to_byte_dfa(text)       # a bad regex fails here, at admission
        return Grammar.from_regex(text)
    return Grammar.from_gbnf(text) if "::=" in text else Grammar.from_lark(text)


@dataclass
class _Row:
    matcher: Any
    output: list[int]      # vLLM's running list of the request's generated tokens
    seen: int = 0          # how many of them the matcher has accepted
    failed: bool = False


class ConstrainedLogitsProcessor(LogitsProcessor):
    """Masks each constrained row of vLLM's batch to the tokens its grammar allows."""

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        spec = _constraint(sampling_params)
        if spec is None:
            return
        try:
            _grammar(*spec)
        except ConstrainedError as exc:
            raise ValueError(f"{spec[0]}: {exc}") from None

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool) -> None:
        from transformers import AutoTokenizer
        model_config = vllm_config.model_config
        tokenizer = AutoTokenizer.from_pretrained(model_config.tokenizer)
        width = int(model_config.get_vocab_size())
        self.vocab = Vocabulary.from_hf(tokenizer, vocab_size=width)
        self.words = bitmask_words(self.vocab.size)
        self.rows: dict[int, _Row] = {}
        self._compiled: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()
        self._eos_only = token_ids_to_bitmask(sorted(self.vocab.eos_token_ids),
                                              self.vocab.size)   # a finished row's mask

    def is_argmax_invariant(self) -> bool:
        return False          # masks change which token is the most likely

    def _compile(self, key: str, text: str):
        with self._lock:
            hit = self._compiled.get((key, text))
            if hit is not None:
                self._compiled.move_to_end((key, text))
                return hit
        compiled = compile_grammar(_grammar(key, text), self.vocab)
        with self._lock:
            self._compiled[(key, text)] = compiled
            while len(self._compiled) > 64:
                self._compiled.popitem(last=False)
        return compiled

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is not None:
            for index in batch_update.removed:
                self.rows.pop(index, None)
            for index, params, _prompt, output in batch_update.added:
                spec = _constraint(params)
                if spec is None:
                    self.rows.pop(index, None)
                    continue
                try:
                    matcher = self._compile(*spec).matcher()
                except ConstrainedError as exc:   # past validate_params: a compile limit
                    print(f"constrained: {spec[0]} cannot be compiled ({exc}); the request is "
                          "ended", file=sys.stderr)
                    self.rows[index] = _Row(None, output, failed=True)
                    continue
                self.rows[index] = _Row(matcher, output)
            for a, b, direction in batch_update.moved:
                row_a, row_b = self.rows.pop(a, None), self.rows.pop(b, None)
                if row_a is not None:
                    self.rows[b] = row_a
                if direction == MoveDirectionality.SWAP and row_b is not None:
                    self.rows[a] = row_b
        for row in self.rows.values():
            new = row.output[row.seen:]
            for token in new:
                if not row.failed and not row.matcher.accept_token(int(token)):
                    row.failed = True     # cannot happen with our masks; end the row
                    print(f"constrained: token {token} refused by the grammar; the request "
                          "is ended", file=sys.stderr)
            row.seen += len(new)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self.rows:
            return logits
        n = logits.shape[0]
        bitmask = np.full((n, self.words), -1, dtype=np.int32)
        for index, row in self.rows.items():
            if index >= n:
                continue
            if row.failed or row.matcher.is_terminated():
                bitmask[index] = self._eos_only
                continue
            row.matcher.fill_next_token_bitmask(bitmask, index)
        apply_token_bitmask_inplace(logits, torch.from_numpy(bitmask), self.vocab.size)
        return logits
