"""write_row writes a mask into the row a matcher fills, whatever the bitmask's layout, and
refuses what bitmask_row refuses."""
import numpy as np
import pytest

from constrained.bitmask import write_row
from constrained.errors import MatcherError

WORDS = 5
MASK = np.arange(1, WORDS + 1, dtype=np.int32)


@pytest.mark.parametrize("shape,index", [((WORDS,), 0), ((3, WORDS), 2), ((WORDS + 3,), 0),
                                         ((2, WORDS + 3), 1), ((3, WORDS), np.int64(1))])
def test_the_row_holds_the_mask_and_zeros_after_it(shape, index):
    bitmask = np.full(shape, -1, dtype=np.int32)
    write_row(bitmask, index, WORDS, MASK)
    row = bitmask if bitmask.ndim == 1 else bitmask[int(index)]
    assert np.array_equal(row[:WORDS], MASK) and not row[WORDS:].any()
    if bitmask.ndim == 2:       # the other rows are left alone
        others = np.delete(bitmask, int(index), axis=0)
        assert (others == -1).all()


def test_a_torch_row_is_written_in_place():
    torch = pytest.importorskip("torch")
    bitmask = torch.full((2, WORDS), -1, dtype=torch.int32)
    write_row(bitmask, 1, WORDS, MASK)
    assert bitmask[1].tolist() == MASK.tolist() and bitmask[0].tolist() == [-1] * WORDS


@pytest.mark.parametrize("make,index,message", [
    (lambda: _read_only(np.zeros(WORDS, dtype=np.int32)), 0, "read-only"),
    (lambda: _read_only(np.zeros((2, WORDS), dtype=np.int32)), 1, "read-only"),
    (lambda: np.zeros((2, WORDS), dtype=np.int32), 2, "out of range"),
    (lambda: np.zeros((2, WORDS), dtype=np.int32), -1, "out of range"),
    (lambda: np.zeros((2, WORDS), dtype=np.int32), True, "must be an int"),
    (lambda: np.zeros(WORDS - 1, dtype=np.int32), 0, "needs 5"),
    (lambda: np.zeros(WORDS, dtype=np.int64), 0, "dtype"),
    (lambda: [0] * WORDS, 0, "numpy array"),
])
def test_bad_bitmasks_raise_a_matcher_error(make, index, message):
    with pytest.raises(MatcherError, match=message):
        write_row(make(), index, WORDS, MASK)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
