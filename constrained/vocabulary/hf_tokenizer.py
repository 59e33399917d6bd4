"""Vocabulary from a Hugging Face tokenizer: byte-level BPE, SentencePiece, added tokens."""
from __future__ import annotations

import json
import re
from typing import Iterable

from ..errors import VocabularyError
from .byte_mappings import SENTENCEPIECE_SPACE, byte_level_token_bytes, sentencepiece_token_bytes

# Added tokens the tokenizer does not mark special but that are markup, not text (Qwen3's
# <think> and <tool_call>, Mistral's [TOOL_CALLS]): they count as special tokens.
_MARKUP = re.compile(r"<[^<>\s]+>|\[[A-Z_]+\]")

# Names that end a turn or a document in common chat families, counted as end-of-generation
# when the tokenizer marks them special.
END_OF_GENERATION_NAMES = ("<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|endoftext|>", "<|end|>",
                           "<end_of_turn>", "<|end_of_text|>", "</s>", "<|return|>")


def _byte_scheme(tokenizer, pieces: list[str | None]) -> str:
    """'byte_level' (GPT-2 alphabet) or 'sentencepiece' (space marker, <0xNN> byte fallback)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        spec = json.loads(backend.to_str())
        text = json.dumps(spec.get("decoder"))
        if '"ByteLevel"' in text:
            return "byte_level"
        if "ByteFallback" in text or "Metaspace" in text or SENTENCEPIECE_SPACE in text:
            return "sentencepiece"
    if getattr(tokenizer, "sp_model", None) is not None:
        return "sentencepiece"
    marker = sum(1 for p in pieces if p and p.startswith(SENTENCEPIECE_SPACE))
    gpt2_space = sum(1 for p in pieces if p and p.startswith("\u0120"))
    return "sentencepiece" if marker > gpt2_space else "byte_level"


def vocabulary_from_hf(cls, tokenizer, vocab_size: int | None,
                       eos_token_ids: Iterable[int] | None):
    """See Vocabulary.from_hf."""
    vocab: dict[str, int] = tokenizer.get_vocab()
    if not vocab:
        raise VocabularyError(f"tokenizer {type(tokenizer).__name__} has an empty vocabulary")
    n = max(vocab.values()) + 1
    pieces: list[str | None] = [None] * n
    for piece, tid in vocab.items():
        pieces[tid] = piece
    added = {int(i): tok for i, tok in getattr(tokenizer, "added_tokens_decoder", {}).items()}
    scheme = _byte_scheme(tokenizer, pieces)

    special: set[int] = set(int(i) for i in getattr(tokenizer, "all_special_ids", []) or [])
    tokens: list[bytes] = []
    for tid, piece in enumerate(pieces):
        if piece is None:
            tokens.append(b"")
            continue
        if tid in added:
            tokens.append(added[tid].content.encode("utf-8"))
            if getattr(added[tid], "special", False) or _MARKUP.fullmatch(added[tid].content):
                special.add(tid)
            continue
        if scheme == "byte_level":
            raw = byte_level_token_bytes(piece)
            tokens.append(raw if raw is not None else piece.encode("utf-8"))
        else:
            tokens.append(sentencepiece_token_bytes(piece))

    if eos_token_ids is None:
        eos: set[int] = set()
        if tokenizer.eos_token_id is not None:
            eos.add(int(tokenizer.eos_token_id))
        for name in END_OF_GENERATION_NAMES:
            tid = vocab.get(name)
            if tid is not None and tid in special:
                eos.add(tid)
    else:
        eos = set(int(i) for i in eos_token_ids)
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    if not eos:
        raise VocabularyError(
            f"tokenizer {name!r} defines no end-of-sequence token; pass eos_token_ids=[...]")
    return cls.from_token_bytes(tokens, eos, special, vocab_size, name=str(name))
