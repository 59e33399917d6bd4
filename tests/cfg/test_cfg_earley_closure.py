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


def _reference_predictions(rhs, by_lhs, nullable, n_term, roots):
    """The prediction closure as the textbook states it (a Python oracle)."""
    items = {(a, 0, -1) for n in roots for a in by_lhs.get(n, ())}
    agenda, predicted = list(items), set(roots)
    while agenda:
        a, d, _ = agenda.pop()
        if d >= len(rhs[a]):
            continue
        sym = rhs[a][d]
        if sym < n_term:
            continue
        new = []
        if sym not in predicted:
            predicted.add(sym)
            new += [(a2, 0, -1) for a2 in by_lhs.get(sym, ())]
        if sym in nullable:
            new.append((a, d + 1, -1))
        for it in new:
            if it not in items:
                items.add(it)
                agenda.append(it)
    return items


@pytest.mark.parametrize("seed", range(40))
def test_predictions_match_the_textbook_closure(seed):
    """``predictions`` on random grammars (nullable rules, left and right recursion, symbols
    with no rules) against the Python oracle: items, their grouping by next symbol, the
    expected terminals and the start item."""
    import random

    from constrained.cfg._earley import predictions
    rng = random.Random(seed)
    n_term, n_nt = rng.randint(1, 4), rng.randint(2, 7)
    n_syms = n_term + n_nt
    rhs = [(n_term,)]               # alternative 0: $start -> first nonterminal
    lhs = [n_term + n_nt - 1]       # ($start is the last symbol, as no rule uses it)
    for x in range(n_term, n_syms - 1):
        for _ in range(rng.randint(0, 3)):
            rhs.append(tuple(rng.randrange(n_syms - 1) for _ in range(rng.randint(0, 3))))
            lhs.append(x)
    nullable = set()
    changed = True
    while changed:
        changed = False
        for a, r in enumerate(rhs):
            if lhs[a] not in nullable and all(s in nullable for s in r):
                nullable.add(lhs[a])
                changed = True
    by_lhs: dict = {}
    for a, x in enumerate(lhs):
        by_lhs.setdefault(x, []).append(a)
    flat = np.array([s for r in rhs for s in r], dtype=np.int32)
    starts = np.cumsum([0] + [len(r) for r in rhs]).astype(np.int32)
    null = np.zeros(n_syms, np.uint8)
    null[list(nullable)] = 1
    g = grammar(flat, starts, np.array(lhs, np.int32), null, n_term)
    for _ in range(5):
        roots = sorted(rng.sample(range(n_term, n_syms), rng.randint(1, min(3, n_nt))))
        want = _reference_predictions(rhs, by_lhs, nullable, n_term, roots)
        items, by_next, expected, complete = predictions(g, np.array(roots, np.int32))
        assert sorted(_unpack(items)) == sorted(want)
        groups = {sym: sorted(_unpack(p)) for sym, p in by_next.items()}
        assert groups == {sym: sorted(it for it in want if len(rhs[it[0]]) > it[1]
                                      and rhs[it[0]][it[1]] == sym)
                          for sym in {rhs[a][d] for a, d, _ in want if d < len(rhs[a])}}
        assert np.frombuffer(expected, np.int32).tolist() == sorted(s for s in groups
                                                                    if s < n_term)
        assert complete == ((0, 1, -1) in want)


def test_predictions_refuse_bad_roots():
    from constrained.cfg._earley import predictions
    with pytest.raises(ValueError):
        predictions(_toy(), np.array([9], np.int32))
    with pytest.raises(TypeError):
        predictions(_toy(), np.array([1], np.int64))


def test_predictions_read_roots_as_int32_bytes():
    from constrained.cfg._earley import predictions
    g = _toy()
    as_array = predictions(g, np.array([2], np.int32))
    as_bytes = predictions(g, np.array([2], np.int32).tobytes())
    assert as_array[0] == as_bytes[0] and as_array[1] == as_bytes[1]
    assert sorted(_unpack(as_bytes[0])) == [(1, 0, -1), (2, 0, -1)]
    with pytest.raises(TypeError):
        predictions(g, b"\x02\x00\x00")         # not whole int32s
