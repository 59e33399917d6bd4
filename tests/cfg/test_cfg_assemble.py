"""The C mask assembly: the traversal of walk nodes below a lexeme's end, and the OR of parts.

Whether masks are exact is the oracle tests' business (test_cfg_oracle_masks.py); these check
the traversal's contract and that bad input raises instead of crashing."""
from types import SimpleNamespace

import numpy as np
import pytest

from constrained.cfg._assemble import assemble_mask, descend

DEAD = object()


def _node(ids=(), children=(), words=None):
    ids = np.array(ids, dtype=np.int32)
    return SimpleNamespace(words=words, ids=ids, children=tuple(children),
                           empty=words is None and not len(ids) and not children)


def test_descend_visits_children_through_the_advance_memo_and_resolved_nodes():
    leaf = _node([7])
    deeper = _node([9])
    mid = _node([5], [(frozenset({1}), 4, 11, None, {"B": deeper})])
    col0, col1, col2 = (SimpleNamespace(id=i, candidates=c) for i, c in ((1, "A"), (2, "A"),
                                                                         (3, "B")))
    calls = []

    def advance(col, terms, set_id):
        calls.append((col.id, set_id))
        return col2 if set_id == 4 else None

    def resolve(resolved, edge, col, roots):
        calls.append(("resolve", edge))
        return resolved.setdefault(col.candidates, leaf)

    root = _node([1], [(frozenset({0}), 3, 10, None, {}),          # memo: col1 (young dict)
                       (frozenset({0}), 6, 12, None, {}),          # memo: dead
                       (frozenset({0}), 8, 13, None, {})])         # memo miss, advance: none
    young = {1 << 32 | 3: col1, 1 << 32 | 6: DEAD}
    resolved_mid = root.children[0][4]
    resolved_mid["A"] = mid
    words, ids = [], []
    visited = descend(root, col0, words, ids, young, lambda key: None, advance, resolve, DEAD)
    assert visited == 3 and words == []
    assert sorted(np.concatenate(ids).tolist()) == [1, 5, 9]
    assert calls == [(1, 8), (2, 4)]       # only the misses reach advance; resolved was enough


def test_descend_memo_keys_are_exact_for_large_column_ids():
    wrong, right = (SimpleNamespace(id=7, candidates=c) for c in ("W", "R"))
    leaf_w, leaf_r = _node([1]), _node([2])
    seen = []
    for cid in (2**31, 2**32, 2**40 + 5):
        col = SimpleNamespace(id=cid, candidates="A")
        node = _node([], [(frozenset({0}), 3, 10, None, {"W": leaf_w, "R": leaf_r})])
        # keys a 64-bit shift would wrap or sign onto: the memo entry of column 0 or cid's low bits
        young = {3: wrong, (cid & 0xFFFFFFFF) << 32 | 3: wrong, cid << 32 | 3: right}
        ids = []
        descend(node, col, [], ids, young, lambda key: seen.append(key), None, None, DEAD)
        assert [a.tolist() for a in ids] == [[2]]
    assert seen == []


def test_descend_errors_propagate():
    col = SimpleNamespace(id=1, candidates="A")
    bad = _node([], [("not a child",)])
    with pytest.raises(TypeError):
        descend(bad, col, [], [], {}, lambda k: None, None, None, DEAD)

    def boom(*args):
        raise KeyError("from advance")

    node = _node([], [(frozenset({0}), 3, 10, None, {})])
    with pytest.raises(KeyError):
        descend(node, col, [], [], {}, lambda k: None, boom, None, DEAD)


def test_assemble_mask_ors_words_and_sets_id_bits():
    rng = np.random.default_rng(3)
    size = 1000
    words = [rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32) for _ in range(2)]
    ids = [rng.integers(0, size, n).astype(np.int32) for n in (0, 5, 300)]
    out = np.zeros(32, np.int32)
    assert assemble_mask(out, words, ids, size)
    expect = (words[0] | words[1]).view(np.uint32).copy()
    for t in np.concatenate(ids).tolist():
        expect[t >> 5] |= np.uint32(1 << (t & 31))
    assert (out.view(np.uint32) == expect).all()
    assert not assemble_mask(np.zeros(32, np.int32), [], [np.zeros(0, np.int32)], size)


@pytest.mark.parametrize("words, ids", [
    ([], [np.array([1000], np.int32)]),                  # past the vocabulary (padding bits)
    ([], [np.array([-1], np.int32)]),
    ([np.zeros(31, np.int32)], []),                      # not as long as out
    ([], [np.zeros(9, np.uint8)[1:].view(np.int32)]),   # misaligned
])
def test_assemble_mask_refuses_bad_parts(words, ids):
    with pytest.raises(ValueError):
        assemble_mask(np.zeros(32, np.int32), words, ids, 1000)


def test_assemble_mask_refuses_other_types():
    with pytest.raises(TypeError):
        assemble_mask(np.zeros(32, np.float32), [], [], 1000)
    with pytest.raises(ValueError):
        assemble_mask(np.zeros(32, np.int32), [np.zeros(32, np.float32)], [], 1000)
    with pytest.raises(ValueError):
        assemble_mask(np.zeros(32, np.int32), [], [], 1025)          # n_bits past out
