"""A random token sequence (with rollbacks) into a matcher: every answer agrees with the mask,
a refused token leaves the state as it was, nothing is accepted after the end of sequence, and
rolling back past the history is a typed error."""
import numpy as np
import pytest

from constrained import ConstrainedError


def check_token_sequence(m, vocab_size: int, tokens: list[int], rnd) -> None:
    mask = np.zeros((vocab_size + 31) // 32, dtype=np.int32)
    accepted: list[int] = []
    for tok in tokens:
        m.fill_next_token_bitmask(mask)
        before = mask.copy()
        if m.is_terminated():
            assert not m.accept_token(tok)      # nothing after the end of sequence
        else:
            allowed = 0 <= tok < vocab_size and bool((mask[tok >> 5] >> (tok & 31)) & 1)
            assert m.accept_token(tok) == allowed
            if allowed:
                accepted.append(tok)
                before = None
        if before is not None:  # a refused token leaves the state exactly as it was
            m.fill_next_token_bitmask(mask)
            assert np.array_equal(mask, before)
        if accepted and rnd.random() < 0.2:
            n = rnd.randint(1, len(accepted))
            m.rollback(n)
            del accepted[-n:]
    with pytest.raises(ConstrainedError):
        m.rollback(len(accepted) + 1)
