"""Disk cache: hits give equal results; truncated or corrupt files are rebuilt, never trusted."""
import os

import numpy as np
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.automata.token_table import TokenTable
from constrained.bitmask import allocate_token_bitmask

PATTERN = r"[a-c]+(-[0-9]{2})?"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    return tmp_path


def _vocab():
    toks = [b"a", b"b", b"c", b"-", b"-1", b"12", b"3", b"ab", b"<e>"]
    return Vocabulary.from_token_bytes(toks, eos_token_ids=[8])


def _masks(cg):
    out = []
    m = cg.matcher()
    bm = allocate_token_bitmask(cg.vocab.size)
    for tid in (7, 3, 6, 6):
        m.fill_next_token_bitmask(bm)
        out.append(bm.clone())
        assert m.accept_token(tid)
    return out


def _fresh_compile(vocab):
    TokenTable._registry.clear()
    from constrained.automata.byte_dfa import _build
    _build.cache_clear()
    return compile_grammar(Grammar.from_regex(PATTERN), vocab)


def test_cache_hit_equals_cold_compile(cache_dir):
    vocab = _vocab()
    cold = _masks(_fresh_compile(vocab))
    files = sorted(p.name for p in cache_dir.iterdir())
    assert any(f.startswith("regexdfa-") for f in files)
    assert any(f.startswith("tokentable-") for f in files)
    warm = _masks(_fresh_compile(vocab))
    assert all((a == b).all() for a, b in zip(cold, warm))
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_files_are_rebuilt(cache_dir, damage):
    vocab = _vocab()
    cold = _masks(_fresh_compile(vocab))
    for path in cache_dir.iterdir():
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            pos = len(data) - 20
            path.write_bytes(data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1:])
        elif damage == "garbage":
            path.write_bytes(os.urandom(len(data)))
        else:
            path.write_bytes(b"")
    warm = _masks(_fresh_compile(vocab))
    assert all((a == b).all() for a, b in zip(cold, warm))
    # rebuilt files are valid again
    again = _masks(_fresh_compile(vocab))
    assert all((a == b).all() for a, b in zip(cold, again))


def test_cache_disabled_writes_nothing(cache_dir):
    TokenTable._registry.clear()
    compile_grammar(Grammar.from_regex(PATTERN), _vocab(), cache=False)
    assert not list(cache_dir.iterdir())


def test_token_table_is_shared_per_automaton_and_vocabulary(cache_dir):
    vocab = _vocab()
    a = compile_grammar(Grammar.from_regex("(a|b)+"), vocab)
    b = compile_grammar(Grammar.from_regex("[ab][ab]*"), vocab)
    assert a.table is b.table
    row = a.table.row(a.dfa.initial)
    assert row.end_state(0) >= 0 and row.end_state(2) == -1
    assert np.array_equal(row.tokens, [0, 1, 7])


def test_warm_compile_reads_the_automaton_and_masks_from_disk(cache_dir, monkeypatch):
    vocab = _vocab()
    cold = _masks(_fresh_compile(vocab))
    import constrained.automata.token_table as token_table
    import constrained.regex.compiled as compiled

    def fail(*args, **kwargs):
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(compiled, "regex_to_byte_dfa", fail)
    monkeypatch.setattr(token_table, "walk_tokens", fail)
    warm = _masks(_fresh_compile(vocab))
    assert all((a == b).all() for a, b in zip(cold, warm))
