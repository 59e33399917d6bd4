"""An OpenAI-compatible HTTP server: constrained generation for any OpenAI client.

``python -m constrained serve --model smollm2`` (needs the ``server`` extra). Layers, top down:
``app`` (routes, streams, errors) -> ``protocol`` (request fields) and ``service`` (prompts,
grammars, limits) -> ``engine`` (one thread, continuous batching over the decode loop).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

from .protocol import RequestError
from .service import ServerLimits, Service

__all__ = ["RequestError", "ServerLimits", "Service", "create_app", "load_service", "serve"]


def create_app(service: Service):
    """The ASGI application of a Service."""
    from .app import create_app as _create
    return _create(service)


def load_service(model: str = "smollm2", limits: ServerLimits = ServerLimits(),
                 overlap: bool | str = "auto", runtime: str = "transformers") -> Service:
    """Load a model (name, folder or GGUF file) on a runtime ("transformers" or "llama.cpp")
    and start its batch engine."""
    from ..model.loading import load_model
    from ..vocabulary import Vocabulary
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass
    if runtime == "llama.cpp":
        lm, tokenizer = load_model(model, runtime=runtime, max_rows=limits.max_rows)
        width = lm.n_vocab
    else:
        lm, tokenizer = load_model(model)
        width = lm.get_output_embeddings().weight.shape[0]
    vocab = Vocabulary.from_hf(tokenizer, vocab_size=width)
    name = model if model == "smollm2" else model.rstrip("/").split("/")[-1]
    return Service(lm, tokenizer, vocab, name, limits, overlap)


def serve(model: str = "smollm2", host: str = "127.0.0.1", port: int = 8000,
          limits: ServerLimits = ServerLimits(), log_level: str = "warning",
          runtime: str = "transformers") -> None:
    """Load the model and serve it until interrupted."""
    import sys

    import uvicorn
    service = load_service(model, limits, runtime=runtime)
    print(f"serving {service.model_name} on http://{host}:{port}/v1", file=sys.stderr,
          flush=True)
    with _frozen_heap():
        uvicorn.run(create_app(service), host=host, port=port, log_level=log_level)


@contextmanager
def _frozen_heap():
    """Everything loaded so far (the model, its tokenizer, the imported modules: about 400,000
    tracked objects with SmolLM2 on transformers) is kept out of the garbage collector's later
    collections while the block runs: a full collection then walks what serving created, not
    the whole heap (about 200 ms each otherwise, landing in some request's token step)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()       # at shutdown the interpreter frees them as usual
