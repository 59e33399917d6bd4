"""How tokenizers spell bytes as text: GPT-2's byte-level alphabet and SentencePiece's markers."""
from __future__ import annotations

import re
from functools import lru_cache

SENTENCEPIECE_SPACE = "\u2581"
_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


@lru_cache(maxsize=1)
def gpt2_unicode_to_byte() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: printable bytes map to themselves, others to 256+n."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    mapping: dict[str, int] = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            mapping[chr(256 + extra)] = b
            extra += 1
    return mapping


def byte_level_token_bytes(piece: str) -> bytes | None:
    """Bytes of a GPT-2 byte-level token, or None when the piece is not in that alphabet."""
    table = gpt2_unicode_to_byte()
    try:
        return bytes(table[c] for c in piece)
    except KeyError:
        return None


def sentencepiece_token_bytes(piece: str) -> bytes:
    """Bytes of a SentencePiece piece: <0xNN> byte pieces, and the space marker as a space."""
    m = _BYTE_PIECE.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    return piece.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8")
