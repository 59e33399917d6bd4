"""Small test vocabularies: single bytes, grammar literals, document pieces, multibyte splits."""
from __future__ import annotations

import random
import re

from constrained.vocabulary import Vocabulary


def small_vocab(grammar_text: str, docs: list[str], seed: int = 0, n_pieces: int = 150,
                extra: tuple[bytes, ...] = ()) -> Vocabulary:
    rng = random.Random(seed)
    toks: list[bytes] = [bytes([b]) for b in range(256)]
    for lit in re.findall(r'"((?:[^"\\]|\\.)+)"', grammar_text):
        try:
            toks.append(lit.encode().decode("unicode_escape").encode("utf-8", "ignore")
                        if "\\" in lit else lit.encode())
        except UnicodeDecodeError:
            toks.append(lit.encode())
    blobs = [d.encode() for d in docs if d]
    for _ in range(n_pieces if blobs else 0):
        blob = rng.choice(blobs)
        i = rng.randrange(len(blob))
        toks.append(blob[i:i + rng.randint(2, 7)])
    for blob in blobs:  # multibyte characters cut inside
        for ch in blob.decode():
            enc = ch.encode()
            if len(enc) > 1:
                toks.extend([enc[:1], enc[1:], enc[:-1], enc + b" "])
    toks.extend(extra)
    toks.extend([b"},{", b'": "', b"\n  ", b" \n", b"(((", b")))", b"<<=<", b"ifx", b"=1;"])
    uniq = sorted(set(t for t in toks if t), key=lambda t: (len(t), t))
    special = [b"<eos>", b"<pad>"]
    return Vocabulary.from_token_bytes(uniq + special, eos_token_ids=[len(uniq)],
                                       special_token_ids=[len(uniq) + 1],
                                       vocab_size=len(uniq) + 2 + 5)
