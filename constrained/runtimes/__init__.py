"""Runtimes: what runs the model under the decode loop.

One small interface, implemented by ``hf.KVBatch`` (a Hugging Face transformers model with its
KV cache; the default) and ``llamacpp.LlamaCppBatch`` (a GGUF file through llama-cpp-python):

- ``join(prompts) -> logits [n, V]``: add rows after the current ones and run their prompts;
- ``step(chunks) -> logits [B, V]``: feed each row its new tokens (one or more: forced tokens go
  in the same pass); the logits after each row's last token;
- ``keep(rows)``: rows not listed leave (their cache is freed); ``reset()``: all rows leave;
- ``forward_time``: seconds of the last join or step.

A model object that has ``new_batch(pad_token_id)`` brings its own runtime; any other model is
run as a transformers causal LM.
"""
from __future__ import annotations


def batch_for(model, pad_token_id: int):
    """The runtime batch that runs ``model`` for one decode loop."""
    factory = getattr(model, "new_batch", None)
    if factory is not None:
        return factory(pad_token_id)
    from .hf import KVBatch
    return KVBatch(model, pad_token_id)
