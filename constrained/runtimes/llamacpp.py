"""llama.cpp as the runtime under the decode loop (llama-cpp-python's low-level bindings).

A GGUF file loads directly (no conversion). The batch's rows are llama.cpp sequences in one
context: a step puts every row's new tokens into one ``llama_batch`` (each at its own positions,
under its own sequence id), asks for logits at each row's last token only, and runs one
``llama_decode``; forced tokens are fed in that same batch. A row that leaves has its sequence
removed from the KV memory and its id reused. Logits come back as a torch tensor [rows, vocab]
for the project's masks and sampler chain: llama.cpp's own samplers and grammar are not used.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from ..errors import DecodingError, ModelNotFoundError

_backend_lock = threading.Lock()
_backend_ready = False


def _lib():
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelNotFoundError(
            "the llama.cpp runtime needs llama-cpp-python: pip install "
            "'grammar-constrained-engine[llamacpp]' (builds from source, about 8 minutes)") \
            from exc
    global _backend_ready
    with _backend_lock:
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


def _quiet(lib) -> None:
    """Silence llama.cpp's log lines on stderr (errors still raise here)."""
    callback = getattr(lib, "llama_log_callback", None)
    if callback is None or getattr(_quiet, "_cb", None) is not None:
        return

    @callback
    def _drop(level, text, user_data):  # pragma: no cover - called from C
        return None

    _quiet._cb = _drop  # keep a reference: C holds the pointer
    lib.llama_log_set(_drop, ctypes.c_void_p())


class LlamaCppModel:
    """A GGUF model loaded by llama.cpp, ready to hand to ``generate`` as the model.

    ``n_ctx`` is the context shared by all rows of a batch (each row's prompt and output count
    against it); ``max_rows`` the number of sequences one batch may hold.
    """

    def __init__(self, path: str | Path, *, n_ctx: int = 4096, max_rows: int = 16,
                 n_threads: int | None = None, n_batch: int = 512, verbose: bool = False) -> None:
        path = Path(path)
        if not path.is_file():
            raise ModelNotFoundError(f"GGUF file not found: {path}")
        lib = _lib()
        if not verbose:
            _quiet(lib)
        self._lib = lib
        self.path = path
        self.n_ctx = int(n_ctx)
        self.max_rows = int(max_rows)
        self.n_batch = int(n_batch)
        params = lib.llama_model_default_params()
        self._model = lib.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if not self._model:
            raise ModelNotFoundError(f"llama.cpp could not load {path}")
        self._vocab = lib.llama_model_get_vocab(self._model)
        self.n_vocab = int(lib.llama_vocab_n_tokens(self._vocab))
        self.n_threads = int(n_threads or os.cpu_count() or 1)
        self.config = _Config(self.n_vocab, self.n_ctx)

    def new_batch(self, pad_token_id: int = 0) -> "LlamaCppBatch":
        """A fresh batch (its own llama.cpp context) for one decode loop."""
        return LlamaCppBatch(self)

    def _new_context(self):
        lib = self._lib
        params = lib.llama_context_default_params()
        params.n_ctx = self.n_ctx
        params.n_batch = max(self.n_batch, 1)
        params.n_ubatch = max(self.n_batch, 1)
        params.n_seq_max = self.max_rows
        params.n_threads = self.n_threads
        params.n_threads_batch = self.n_threads
        if hasattr(params, "kv_unified"):
            params.kv_unified = True     # sequences share the whole context
        ctx = lib.llama_init_from_model(self._model, params)
        if not ctx:
            raise DecodingError("llama.cpp could not create a context "
                                f"(n_ctx={self.n_ctx}, max_rows={self.max_rows})")
        return ctx

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        model = getattr(self, "_model", None)
        if model:
            try:
                self._lib.llama_model_free(model)
            except Exception:
                pass
            self._model = None

    def get_output_embeddings(self):
        return None


class _Config:
    def __init__(self, vocab_size: int, n_ctx: int) -> None:
        self.vocab_size = vocab_size
        self.max_position_embeddings = n_ctx


class LlamaCppBatch:
    """The rows of one decode loop as sequences of one llama.cpp context (the runtime
    interface: ``join``, ``step``, ``keep``, ``reset``, ``forward_time``)."""

    def __init__(self, model: LlamaCppModel) -> None:
        self.model = model
        self._lib = model._lib
        self._ctx = None
        self.seqs: list[int] = []       # sequence id of each row
        self.lengths: list[int] = []    # tokens in each row's sequence
        self.forward_time = 0.0
        self._batch = None
        self._batch_size = 0

    @property
    def cache(self):
        """The llama.cpp context while rows are held (None once the batch is empty)."""
        return self._ctx

    def reset(self) -> None:
        if self._ctx is not None:
            self._lib.llama_memory_clear(self._lib.llama_get_memory(self._ctx), True)
        self.seqs, self.lengths = [], []

    def join(self, prompts: Sequence[Sequence[int]]) -> torch.Tensor:
        """Add rows (new sequences) and run their prompts; logits [n, V] of the new rows."""
        if self._ctx is None:
            self._ctx = self.model._new_context()
        free = sorted(set(range(self.model.max_rows)) - set(self.seqs))
        if len(prompts) > len(free):
            raise DecodingError(f"the llama.cpp batch holds at most {self.model.max_rows} rows "
                                f"(max_rows); {len(self.seqs) + len(prompts)} were asked for")
        start = len(self.seqs)
        self.seqs.extend(free[:len(prompts)])
        self.lengths.extend([0] * len(prompts))
        return self._run(list(range(start, start + len(prompts))), prompts)

    def step(self, chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        """Feed each row its new tokens (at least one each); logits [B, V] after them."""
        if len(chunks) != len(self.seqs):
            raise DecodingError(f"{len(chunks)} chunks for {len(self.seqs)} rows")
        return self._run(list(range(len(self.seqs))), chunks)

    def keep(self, rows: Sequence[int]) -> None:
        """Drop every row not listed: their sequences leave the KV memory."""
        rows = list(rows)
        memory = self._lib.llama_get_memory(self._ctx) if self._ctx is not None else None
        kept = set(rows)
        for r, seq in enumerate(self.seqs):
            if r not in kept and memory is not None:
                self._lib.llama_memory_seq_rm(memory, seq, -1, -1)
        self.seqs = [self.seqs[r] for r in rows]
        self.lengths = [self.lengths[r] for r in rows]

    # internals -----------------------------------------------------------------------------------
    def _ensure_batch(self, n_tokens: int) -> None:
        if self._batch is not None and self._batch_size >= n_tokens:
            return
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
        size = max(n_tokens, 64)
        self._batch = self._lib.llama_batch_init(size, 0, 1)
        self._batch_size = size

    def _run(self, rows: list[int], chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        lib = self._lib
        total = sum(len(c) for c in chunks)
        if any(not c for c in chunks):
            raise DecodingError("every row needs at least one new token per step")
        for r, chunk in zip(rows, chunks):
            if self.lengths[r] + len(chunk) > self.model.n_ctx:
                raise DecodingError(f"a row needs {self.lengths[r] + len(chunk)} positions; the "
                                    f"llama.cpp context holds {self.model.n_ctx} (n_ctx)")
        n_vocab = self.model.n_vocab
        out = np.empty((len(rows), n_vocab), dtype=np.float32)
        start = time.perf_counter()
        # tokens go in pieces of at most n_batch; a row's logits are read after the piece that
        # holds its last token
        flat = [(i, r, t, j == len(c) - 1) for i, (r, c) in enumerate(zip(rows, chunks))
                for j, t in enumerate(c)]
        step = max(1, self.model.n_batch)
        for begin in range(0, total, step):
            piece = flat[begin:begin + step]
            self._ensure_batch(len(piece))
            batch = self._batch
            wanted = []
            for k, (i, r, token, last) in enumerate(piece):
                batch.token[k] = token
                batch.pos[k] = self.lengths[r]
                batch.n_seq_id[k] = 1
                batch.seq_id[k][0] = self.seqs[r]
                batch.logits[k] = bool(last)
                self.lengths[r] += 1
                if last:
                    wanted.append((k, i))
            batch.n_tokens = len(piece)
            status = lib.llama_decode(self._ctx, batch)
            if status != 0:
                raise DecodingError(f"llama_decode failed with status {status} (the context "
                                    f"may be full: n_ctx={self.model.n_ctx})")
            for k, i in wanted:
                ptr = lib.llama_get_logits_ith(self._ctx, k)
                out[i] = np.ctypeslib.as_array(ptr, shape=(n_vocab,))
        self.forward_time = time.perf_counter() - start
        return torch.from_numpy(out)

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        try:
            if self._batch is not None:
                self._lib.llama_batch_free(self._batch)
            if self._ctx is not None:
                self._lib.llama_free(self._ctx)
        except Exception:
            pass
