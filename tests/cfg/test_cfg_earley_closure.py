"""The C closure of Earley columns: bad input is refused with typed errors, not a crash."""
import numpy as np
import pytest

from constrained.cfg._earley import closure, grammar


def _toy():
    # symbols: 0 = "a" (terminal), 1 = $start, 2 = S;  $start -> S ; S -> "a" S | <empty>
    flat = np.array([2, 0, 2], dtype=np.int32)
    starts = np.array([0, 1, 3, 3], dtype=np.int32)
    lhs = np.array([1, 2, 2], dtype=np.int32)
    nullable = np.array([0, 1, 1], dtype=np.uint8)
    return grammar(flat, starts, lhs, nullable, 1)


def test_inconsistent_grammar_tables_raise():
    with pytest.raises(ValueError):
        grammar(np.array([5], np.int32), np.array([0, 1], np.int32), np.array([1], np.int32),
                np.zeros(3, np.uint8), 1)
    with pytest.raises(TypeError):
        grammar(np.array([0], np.int64), np.array([0, 1], np.int32), np.array([1], np.int32),
                np.zeros(3, np.uint8), 1)


def test_kernel_items_out_of_range_raise():
    g = _toy()
    with pytest.raises(ValueError):
        closure(g, [(7, 0, None)], None)
    with pytest.raises(ValueError):
        closure(g, [(1, 5, None)], None)
    with pytest.raises(TypeError):
        closure(g, [(1, 0)], None)


def test_scanned_item_is_closed_over_the_nullable_rest():
    from types import SimpleNamespace
    g = _toy()
    # an origin column expecting S with $start -> . S (static item, origin -1 = itself)
    origin = SimpleNamespace(by_next={}, static=SimpleNamespace(by_next={2: ((0, 0, -1),)}),
                             origins=())
    origins, items, by_next, predicted, started = closure(g, [(1, 1, origin)], None)
    assert origins == (origin,)
    # S -> "a" . S, and S nullable: S -> "a" S . as well (completed: origin consulted later)
    assert (1, 1, 0) in items and set(by_next) == {2} and predicted == {2}
    # completing S from the origin advances $start -> S . there: the start is done from it
    assert (1, 2, 0) in items and (0, 1, 0) in items
    assert not started                                  # origin is not the initial column
    assert closure(g, [(1, 1, origin)], origin)[4]      # ... unless it is
