"""The per-worker generator: loads the model and compiles the grammar once, then turns batches
of records into result dicts.

The same class runs in the single-process runner, inside Ray actors and inside Ray Data's
``map_batches``; only where it lives changes, so results do not depend on the runner.
"""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from ..compiler import compile_grammar
from ..vocabulary import Vocabulary
from .records import Record, error_result

DECODE_PER_RECORD = "per_record"   # one generate() call per record: results independent of batching
DECODE_BATCHED = "batched"         # one generate() call per batch: faster, batch-dependent floats


@dataclass(frozen=True)
class JobSpec:
    """Everything a worker needs to build its generator (picklable, sent to every worker).

    ``grammar`` is a ``Grammar`` built by the caller (None: unconstrained); ``sampling`` maps
    SamplingParams field names to values; ``seed`` is the base seed (record seed, else
    ``seed + index``); ``decode`` is DECODE_PER_RECORD or DECODE_BATCHED; ``chat`` (None: when the
    tokenizer has a chat template), ``system`` and ``complete_within_budget`` are generate()'s.
    """

    model: str = "smollm2"
    grammar: Any = None
    sampling: dict = field(default_factory=dict)
    max_new_tokens: int = 64
    seed: int = 0
    chat: bool | None = None
    decode: str = DECODE_PER_RECORD
    num_threads: int | None = None
    token_ids: bool = False
    complete_within_budget: bool = False
    system: str | None = None


def _logits_width(model) -> int:
    head = model.get_output_embeddings()
    return int(head.weight.shape[0]) if head is not None else int(model.config.vocab_size)


class BatchGenerator:
    """Holds one model and one compiled grammar; ``run`` turns records into result dicts."""

    def __init__(self, spec: JobSpec, *, loaded: tuple | None = None) -> None:
        """``loaded``: an already loaded (model, tokenizer) to use instead of ``spec.model``."""
        import torch
        from ..model import load_model
        start = time.perf_counter()
        if spec.num_threads:
            torch.set_num_threads(int(spec.num_threads))
        self.spec = spec
        self.model, self.tokenizer = loaded if loaded is not None else load_model(spec.model)
        self.load_seconds = time.perf_counter() - start
        start = time.perf_counter()
        self.vocab = Vocabulary.from_hf(self.tokenizer, vocab_size=_logits_width(self.model))
        self.compiled = (None if spec.grammar is None
                         else compile_grammar(spec.grammar, self.vocab))
        self.compile_seconds = time.perf_counter() - start
        self.max_positions = getattr(self.model.config, "max_position_embeddings", None)
        from ..decoding import generate
        self._generate = generate
        self.chat = (spec.chat if spec.chat is not None
                     else bool(getattr(self.tokenizer, "chat_template", None)))
        self.worker = f"{socket.gethostname()}:{os.getpid()}"

    def info(self) -> dict:
        """Where this generator lives and what its setup cost."""
        return {"worker": self.worker, "pid": os.getpid(), "load_s": self.load_seconds,
                "compile_s": self.compile_seconds}

    def run(self, records: list[Record]) -> list[dict]:
        """One result dict per record, in the given order; a failing record gets ``error``."""
        good = [r for r in records if r.error is None]
        results = {r.index: error_result(r, r.error) for r in records if r.error is not None}
        if self.spec.decode == DECODE_BATCHED and len(good) > 1:
            results.update(self._run_batched(good))
        else:
            for record in good:
                results[record.index] = self._run_one(record)
        return [results[r.index] for r in records]

    def _encode(self, prompt: Any) -> list[int]:
        """Token ids of a prompt (chat template applied); ValueError when it is too long."""
        from ..decoding.prompts import encode_prompt
        ids = encode_prompt(prompt, self.tokenizer, chat=self.chat, system=self.spec.system)
        limit = self.max_positions
        if limit is not None and len(ids) + self.spec.max_new_tokens > limit:
            raise ValueError(f"the prompt has {len(ids)} tokens; with max_new_tokens="
                             f"{self.spec.max_new_tokens} that exceeds the model's {limit} "
                             f"positions")
        return ids

    def _call(self, prompts: list[list[int]], seeds: list[int]):
        return self._generate(self.model, self.tokenizer, prompts, grammar=self.compiled,
                              sampling=dict(self.spec.sampling),
                              max_new_tokens=self.spec.max_new_tokens, seed=seeds,
                              complete_within_budget=self.spec.complete_within_budget)

    def _run_one(self, record: Record) -> dict:
        seed = record.seed_for(self.spec.seed)
        start = time.perf_counter()
        try:
            [result] = self._call([self._encode(record.prompt)], [seed])
        except Exception as exc:  # noqa: BLE001 - a bad record never stops the job
            return error_result(record, f"{type(exc).__name__}: {exc}")
        return self._to_dict(record, seed, result, time.perf_counter() - start)

    def _run_batched(self, records: list[Record]) -> dict[int, dict]:
        seeds = [r.seed_for(self.spec.seed) for r in records]
        start = time.perf_counter()
        try:
            results = self._call([self._encode(r.prompt) for r in records], seeds)
        except Exception:  # noqa: BLE001 - isolate the failing record(s) one by one
            return {r.index: self._run_one(r) for r in records}
        wall = (time.perf_counter() - start) / len(records)
        return {r.index: self._to_dict(r, s, res, wall)
                for r, s, res in zip(records, seeds, results)}

    def _to_dict(self, record: Record, seed: int, result, wall: float) -> dict:
        out: dict[str, Any] = {"index": record.index}
        if record.id is not None:
            out["id"] = record.id
        out.update(text=result.text, finish_reason=result.finish_reason,
                   complete=bool(result.complete), seed=seed,
                   prompt_tokens=int(result.prompt_tokens),
                   completion_tokens=len(result.token_ids),
                   forced_tokens=int(result.forced_tokens))
        if self.spec.token_ids:
            out["token_ids"] = [int(t) for t in result.token_ids]
        timings = {k: round(v, 3) for k, v in result.timings.summary().items()}
        timings["wall_ms"] = round(wall * 1e3, 3)
        out["timings"] = timings
        out["worker"] = self.worker
        return out


def build_grammar(*, schema: Any = None, grammar: Any = None, regex: str | None = None):
    """A Grammar from at most one of: a JSON Schema (dict, JSON text or .json path), a grammar
    file (.lark, .gbnf, .json) or Grammar, a regex. None when none is given (unconstrained)."""
    import json
    from ..grammar import Grammar
    given = [x is not None for x in (schema, grammar, regex)]
    if sum(given) > 1:
        raise ValueError("give at most one of schema, grammar and regex")
    if regex is not None:
        return Grammar.from_regex(regex)
    if grammar is not None:
        return grammar if isinstance(grammar, Grammar) else Grammar.from_file(grammar)
    if schema is None:
        return None
    if isinstance(schema, (str, os.PathLike)) and not str(schema).lstrip().startswith("{"):
        with open(schema, encoding="utf-8") as f:
            schema = json.load(f)
    elif isinstance(schema, str):
        schema = json.loads(schema)
    from_schema = getattr(Grammar, "from_json_schema", None)
    if from_schema is None:
        raise ValueError("JSON Schema needs Grammar.from_json_schema, not available in this build")
    return from_schema(schema)
