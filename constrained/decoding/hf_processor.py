"""A Hugging Face LogitsProcessor that constrains ``model.generate`` with compiled grammars.

One matcher per batch row. The first call sees the prompts and only masks; every later call
first feeds each row's newest token to its matcher. A row whose matcher accepted an
end-of-sequence token stays masked to the vocabulary's end-of-sequence tokens, so nothing
follows the grammar's end even when ``generate`` does not stop the row: pass those ids
(``vocab.eos_token_ids``) as ``eos_token_id`` to ``generate`` so it stops and pads the row.
Beam search reorders rows between calls and is not supported; sampling and greedy search
(with num_return_sequences) are.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from transformers import LogitsProcessor

from ..bitmask import apply_token_bitmask_inplace, bitmask_words, token_ids_to_bitmask
from ..errors import DeadEndError, DecodingError, VocabularyError
from .setup import resolve_grammar, resolve_vocab


class GrammarLogitsProcessor(LogitsProcessor):
    """Masks each row's scores to the tokens its grammar allows.

    ``grammar``: a CompiledGrammar (shared by every row), or a list with one per row; a Grammar
    (or list) is compiled against ``tokenizer_or_vocab`` (required then). Create a new processor
    for every ``generate`` call: it keeps per-row state.
    """

    def __init__(self, grammar, tokenizer_or_vocab=None, *, vocab_size: int | None = None) -> None:
        grammars = list(grammar) if isinstance(grammar, (list, tuple)) else [grammar]
        if not grammars:
            raise DecodingError("empty batch: give at least one grammar")
        from ..compiler import CompiledGrammar
        if tokenizer_or_vocab is None:
            if not all(isinstance(g, CompiledGrammar) for g in grammars):
                raise DecodingError("a Grammar needs tokenizer_or_vocab to be compiled")
            vocab = grammars[0].vocab
        else:
            vocab, _ = resolve_vocab(tokenizer_or_vocab, vocab_size)
        self.vocab = vocab
        self.compiled = [resolve_grammar(g, vocab) for g in grammars]
        self.matchers: list | None = None
        self._bitmask: np.ndarray | None = None
        self._prompt_len = 0

    def _start(self, batch: int) -> None:
        if len(self.compiled) not in (1, batch):
            raise DecodingError(f"{len(self.compiled)} grammars for a batch of {batch} rows")
        compiled = self.compiled * batch if len(self.compiled) == 1 else self.compiled
        self.matchers = [c.matcher() for c in compiled]
        self._bitmask = np.zeros((batch, bitmask_words(self.vocab.size)), dtype=np.int32)
        self._eos_only = token_ids_to_bitmask(sorted(self.vocab.eos_token_ids), self.vocab.size)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        batch, width = scores.shape
        if width < self.vocab.size:
            raise VocabularyError(f"the scores have {width} columns but the vocabulary has "
                                  f"{self.vocab.size} entries: it does not fit the model")
        if self.matchers is None:
            self._start(batch)
            self._prompt_len = input_ids.shape[1]
        elif batch != len(self.matchers):
            raise DecodingError(f"the batch changed from {len(self.matchers)} to {batch} rows "
                                "(beam search is not supported)")
        else:
            last = input_ids[:, -1].tolist()
            for r, m in enumerate(self.matchers):
                if m.is_terminated():
                    continue
                if not m.accept_token(int(last[r])):
                    raise DeadEndError(f"row {r}: token {last[r]} is not allowed by the grammar "
                                       "(was the processor reused across generate calls?)")
        bitmask = self._bitmask
        for r, m in enumerate(self.matchers):
            if m.is_terminated():
                bitmask[r] = self._eos_only     # after the end: end-of-sequence tokens only
            else:
                m.fill_next_token_bitmask(bitmask, r)
        apply_token_bitmask_inplace(scores, torch.from_numpy(bitmask), self.vocab.size)
        return scores

    @property
    def complete(self) -> Sequence[bool]:
        """Per row, whether its text so far is a complete sentence."""
        return [m.is_accepting() for m in (self.matchers or [])]
