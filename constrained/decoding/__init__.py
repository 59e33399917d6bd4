"""The decode loop on top of the grammar engine: generate(), streaming, batches, HF processor."""
from .loop import DecodeOptions, Decoder, generate, generate_healed
from .result import (FINISH_LENGTH, FINISH_STOP, FINISH_STOP_STRING, GenerationResult,
                     StepTiming, Timings)
from .streaming import TextStream, stream

__all__ = ["generate", "generate_healed", "stream", "GenerationResult", "Timings", "StepTiming", "TextStream",
           "Decoder", "DecodeOptions", "FINISH_STOP", "FINISH_LENGTH", "FINISH_STOP_STRING",
           "GrammarLogitsProcessor"]


def __getattr__(name: str):
    if name == "GrammarLogitsProcessor":
        from .hf_processor import GrammarLogitsProcessor
        return GrammarLogitsProcessor
    raise AttributeError(name)
