"""Vocabulary from a tiktoken-style encoding (tiktoken, quicktok): raw bytes per token id."""
from __future__ import annotations

from typing import Iterable

from .hf_tokenizer import END_OF_GENERATION_NAMES


def vocabulary_from_tiktoken(cls, encoding, vocab_size: int | None,
                             eos_token_ids: Iterable[int] | None):
    """See Vocabulary.from_tiktoken."""
    n = int(encoding.n_vocab)
    tokens: list[bytes] = []
    special: set[int] = set()
    is_special = getattr(encoding, "is_special_token", None)
    special_names = set(getattr(encoding, "special_tokens_set", ()) or ())
    for i in range(n):
        try:
            raw = encoding.decode_single_token_bytes(i)
        except (KeyError, ValueError):  # holes in the id space
            raw = b""
        tokens.append(raw)
        if (is_special is not None and is_special(i)) or (
                special_names and raw.decode("utf-8", "replace") in special_names):
            special.add(i)
    if eos_token_ids is None:
        eos = {int(encoding.eot_token)}
        names = {name.encode() for name in END_OF_GENERATION_NAMES}
        eos |= {i for i in special if tokens[i] in names}
    else:
        eos = set(int(i) for i in eos_token_ids)
    return cls.from_token_bytes(tokens, eos, special, vocab_size,
                                name=str(getattr(encoding, "name", "tiktoken")))
