"""The C closure and advance of Earley columns: bad input is refused with typed errors, not a crash."""
import numpy as np
import pytest

from constrained.cfg._earley import advance, closure, grammar


def _pack(*items):
    return np.array(items, dtype=np.int32).tobytes()


def _unpack(packed):
    return [tuple(t) for t in np.frombuffer(packed, np.int32).reshape(-1, 3).tolist()]


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
        closure(g, [(7, 0, None)], None, None)
    with pytest.raises(ValueError):
        closure(g, [(1, 5, None)], None, None)
    with pytest.raises(TypeError):
        closure(g, [(1, 0)], None, None)


def test_scanned_item_is_closed_over_the_nullable_rest():
    from types import SimpleNamespace
    g = _toy()
    # an origin column expecting S with $start -> . S (static item, origin -1 = itself)
    origin = SimpleNamespace(id=5, by_next={}, origins=(),
                             static=SimpleNamespace(by_next={2: _pack((0, 0, -1))}))
    key, origins, items, by_next, predicted, started, nexts = closure(
        g, [(1, 1, origin)], None, None)
    assert origins == (origin,)
    # the key: sorted (alternative, dot, origin id) of the kernel, int64
    assert np.frombuffer(key, np.int64).tolist() == [1, 1, 5]
    # S -> "a" . S, and S nullable: S -> "a" S . as well (completed: origin consulted later)
    items = _unpack(items)
    assert (1, 1, 0) in items and set(by_next) == {2}
    assert np.frombuffer(predicted, np.int32).tolist() == [2]
    assert np.frombuffer(nexts, np.int32).tolist() == [2]
    # completing S from the origin advances $start -> S . there: the start is done from it
    assert (1, 2, 0) in items and (0, 1, 0) in items
    assert not started                                     # origin is not the initial column
    assert closure(g, [(1, 1, origin)], origin, None)[5]   # ... unless it is
    # an interned kernel is returned as is
    assert closure(g, [(1, 1, origin)], None, {key: "col"}) == "col"


def test_advance_moves_the_dot_over_the_terminal():
    from types import SimpleNamespace
    g = _toy()
    # a column with S -> . "a" S predicted here (origin -1 is the column itself)
    col = SimpleNamespace(id=9, by_next={}, origins=(),
                          static=SimpleNamespace(by_next={0: _pack((1, 0, -1))}))
    assert advance(g, col, frozenset({2}), {}, None) is None     # nothing expects S's id 2 here
    key, origins, items, *_ = advance(g, col, frozenset({0}), {}, None)
    assert origins == (col,) and np.frombuffer(key, np.int64).tolist() == [1, 1, 9]
    assert (1, 1, 0) in _unpack(items)
    assert advance(g, col, frozenset({0}), {key: "col"}, None) == "col"
    bad = SimpleNamespace(id=9, by_next={}, origins=(),
                          static=SimpleNamespace(by_next={0: _pack((1, 7, -1))}))
    with pytest.raises(ValueError):
        advance(g, bad, frozenset({0}), {}, None)
    bad.static.by_next = {0: b"\x01\x00"}                  # not whole triples
    with pytest.raises(TypeError):
        advance(g, bad, frozenset({0}), {}, None)
    bad.static.by_next = {0: _pack((1, 0, 3))}             # origin 3 of none
    with pytest.raises(ValueError):
        advance(g, bad, frozenset({0}), {}, None)
