"""Packed bitmask helpers equal a plain boolean reference, for small and large id sets."""
import numpy as np
import pytest

from constrained.bitmask import (allowed_token_ids, bitmask_words, clear_bits, set_bits,
                                 token_ids_to_bitmask, unpack_bitmask)


@pytest.mark.parametrize("size,count", [(1, 1), (31, 5), (33, 0), (1000, 300), (128_256, 40),
                                        (128_256, 90_000)])
def test_set_and_clear_bits_match_a_boolean_reference(size, count):
    rng = np.random.default_rng(size + count)
    ids = rng.integers(0, size, size=count)          # duplicates included
    words = token_ids_to_bitmask(ids, size)
    ref = np.zeros(size, dtype=bool)
    ref[ids] = True
    assert np.array_equal(unpack_bitmask(words, size), ref)
    assert np.array_equal(allowed_token_ids(words, size), np.nonzero(ref)[0])
    more = rng.integers(0, size, size=count // 2 + 1)
    set_bits(words, more)                            # ORs into what is already set
    ref[more] = True
    assert np.array_equal(unpack_bitmask(words, size), ref)
    gone = rng.integers(0, size, size=count // 3 + 1)
    clear_bits(words, gone)
    ref[gone] = False
    assert np.array_equal(unpack_bitmask(words, size), ref)
    assert len(words) == bitmask_words(size) and words.dtype == np.int32
