"""The engine's caches form no reference cycle: a compiled grammar, whatever masks it computed,
is freed by reference counting alone, and its long-lived cache objects are kept out of the
collector's lists (``constrained.gc_untrack``)."""
from __future__ import annotations

import gc
import json
import weakref

import numpy as np
import pytest

from constrained import Grammar
from constrained.cfg.mask import _Node
from constrained.compiler import compile_grammar

pytestmark = pytest.mark.slow

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 12},
                         "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                         "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                         "extra": {"type": "object"}},
          "required": ["name", "size"]}
DOCUMENT = {"size": 3, "extra": {"k": [1, {"x": None}], "j": "v"}, "tags": ["b"], "name": "xy"}


def _walk(compiled, vocab) -> int:
    """Every mask along DOCUMENT (its text cut byte by byte into tokens)."""
    matcher = compiled.matcher()
    bitmask = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    ids = {tb: i for i, tb in enumerate(vocab.token_bytes)}
    steps = 0
    for ch in json.dumps(DOCUMENT).encode():
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(ids[bytes((ch,))])
        steps += 1
    assert matcher.is_accepting()
    return steps


def test_a_compiled_grammar_is_freed_without_the_collector(llama3_vocab, collector_off):
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    compiled = compile_grammar(grammar, llama3_vocab)
    assert _walk(compiled, llama3_vocab) > 40
    assert len(compiled.engine._nodes)
    engine, runtime = weakref.ref(compiled.engine), weakref.ref(compiled.runtime)
    del compiled
    assert engine() is None and runtime() is None


def test_mask_tree_nodes_are_not_tracked(llama3_vocab):
    compiled = compile_grammar(Grammar.from_json_schema(SCHEMA, property_order="any"),
                               llama3_vocab)
    _walk(compiled, llama3_vocab)
    nodes = [n for n in compiled.engine._nodes._young.values() if isinstance(n, _Node)]
    assert nodes
    assert not any(gc.is_tracked(n) or gc.is_tracked(n.children) for n in nodes)
    assert not any(gc.is_tracked(c) or gc.is_tracked(c[0]) for n in nodes for c in n.children)


def test_states_scans_lexers_and_key_walks_are_not_tracked(llama3_vocab):
    """What a matcher keeps per step (parser states, scan states of the keys written) and what
    its runtime keeps per candidate set (lexers, their rows, duplicate-key walks) stay out of
    the collector: they outlive the young generations, and every tracked survivor brings the
    next full collection, paid by some mask step, nearer."""
    compiled = compile_grammar(Grammar.from_json_schema(SCHEMA, property_order="any"),
                               llama3_vocab)
    matcher = compiled.matcher()
    bitmask = np.zeros((llama3_vocab.size + 31) // 32, dtype=np.int32)
    ids = {tb: i for i, tb in enumerate(llama3_vocab.token_bytes)}
    for ch in json.dumps(DOCUMENT).encode():
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(ids[bytes((ch,))])
    states = matcher._stack[1:]
    scans = [s for s in matcher._scans if s[0]]
    assert len(states) > 40 and len(scans) > 10
    assert not any(gc.is_tracked(s) for s in states)
    assert not any(gc.is_tracked(s) or gc.is_tracked(s[0]) or any(map(gc.is_tracked, s[0]))
                   for s in scans)
    lexers = list(compiled.runtime._lexers.values())
    assert lexers and not any(gc.is_tracked(lx) or gc.is_tracked(lx.parts) for lx in lexers)
    assert not any(gc.is_tracked(lx.rows) for lx in lexers)
    walks = []
    for lx in lexers:
        cache = lx.memo.get("key_walks")
        if cache is not None:
            walks += [*cache._young.values(), *cache._old.values()]
    assert walks and not any(gc.is_tracked(w) for w in walks)
