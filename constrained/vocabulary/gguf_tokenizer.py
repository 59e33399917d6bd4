"""Vocabulary from the tokenizer stored in a GGUF model file (llama.cpp's format)."""
from __future__ import annotations

import os

from ..errors import ModelNotFoundError, VocabularyError
from .byte_mappings import byte_level_token_bytes, sentencepiece_token_bytes
from .hf_tokenizer import END_OF_GENERATION_NAMES

# llama.cpp token types
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_EOS_KEYS = ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
             "tokenizer.ggml.eom_token_id")


def _field_value(reader, key: str):
    field = reader.fields.get(key)
    if field is None:
        return None
    if field.types and field.types[0].name == "ARRAY":
        return [field.parts[i] for i in field.data]
    return field.parts[field.data[0]]


def vocabulary_from_gguf(cls, path: str, vocab_size: int | None):
    """See Vocabulary.from_gguf."""
    if not os.path.isfile(path):
        raise ModelNotFoundError(f"GGUF file not found: {path}")
    try:
        from gguf import GGUFReader
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise VocabularyError("reading GGUF files needs the 'gguf' package "
                              "(pip install gguf)") from exc
    try:
        reader = GGUFReader(path)
        model = bytes(_field_value(reader, "tokenizer.ggml.model")).decode()
        raw_tokens = _field_value(reader, "tokenizer.ggml.tokens")
        raw_types = _field_value(reader, "tokenizer.ggml.token_type")
    except Exception as exc:  # the gguf reader raises many kinds of errors on bad files
        raise VocabularyError(f"cannot read the tokenizer of GGUF file {path}: {exc}") from exc
    if raw_tokens is None:
        raise VocabularyError(f"GGUF file {path} has no tokenizer.ggml.tokens")
    pieces = [bytes(t).decode("utf-8", errors="surrogateescape") for t in raw_tokens]
    types = [int(t[0]) for t in raw_types] if raw_types is not None else [_NORMAL] * len(pieces)

    tokens: list[bytes] = []
    special: set[int] = set()
    for tid, (piece, ttype) in enumerate(zip(pieces, types)):
        if ttype in (_CONTROL, _UNKNOWN, _UNUSED):
            special.add(tid)
            tokens.append(piece.encode("utf-8", errors="surrogateescape"))
        elif ttype == _USER_DEFINED:
            tokens.append(piece.encode("utf-8", errors="surrogateescape"))
        elif model == "gpt2":
            raw = byte_level_token_bytes(piece)
            tokens.append(raw if raw is not None else piece.encode("utf-8", "surrogateescape"))
        elif model == "llama":
            tokens.append(sentencepiece_token_bytes(piece))
        else:
            raise VocabularyError(f"GGUF file {path}: tokenizer model {model!r} is not supported "
                                  "(supported: gpt2, llama)")
    eos = set()
    for key in _EOS_KEYS:
        value = _field_value(reader, key)
        if value is not None:
            eos.add(int(value[0]))
    if not eos:
        raise VocabularyError(f"GGUF file {path} defines no end-of-sequence token")
    names = {name.encode() for name in END_OF_GENERATION_NAMES}
    eos |= {i for i in special if tokens[i] in names}
    return cls.from_token_bytes(tokens, eos, special, vocab_size, name=os.path.basename(path))
