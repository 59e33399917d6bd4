"""Every shipped grammar (grammars/*.lark, *.gbnf): samples, oracle masks, Lark agreement."""
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from cfg_oracle import Oracle
from cfg_vocab import small_vocab
from constrained.bitmask import allowed_token_ids
from constrained.cfg import compile_cfg
from constrained.grammar import Grammar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "oracles"))
import gbnf_reference  # noqa: E402
import lark_reference  # noqa: E402

# grammars naming special tokens need a vocabulary that has them: test_token_terminals.py
FILES = sorted(p for p in (ROOT / "grammars").glob("*") if p.suffix in (".lark", ".gbnf")
               and not Grammar.from_file(p).has_token_refs)
SAMPLES = ROOT / "tests" / "grammars_samples"


def _samples(path: Path, kind: str) -> list[str]:
    folder = SAMPLES / path.stem / kind
    return [p.read_bytes().decode("utf-8") for p in sorted(folder.glob("*"))] \
        if folder.is_dir() else []


def _judge(path: Path, text: str) -> bool:
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".lark":
        return lark_reference.lark_accepts(source, text)
    return gbnf_reference.recognizes(source, text)


def _allowed(matcher, vocab) -> set:
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(words)
    return set(allowed_token_ids(words, vocab.size).tolist())


_CACHE: dict = {}


def _setup(path: Path):
    if path not in _CACHE:
        grammar = Grammar.from_file(str(path))
        docs = _samples(path, "valid")
        vocab = small_vocab(path.read_text(encoding="utf-8"), docs, n_pieces=120)
        _CACHE[path] = (grammar, vocab, compile_cfg(grammar, vocab), Oracle(grammar), docs)
    return _CACHE[path]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_valid_samples_accepted_and_invalid_rejected(path):
    grammar, vocab, compiled, oracle, docs = _setup(path)
    assert docs, f"no valid samples for {path.name}"
    for doc in docs:
        m = compiled.matcher()
        assert m.accept_string(doc), (path.name, doc)
        assert m.is_accepting(), (path.name, doc)
        assert oracle.accepts(doc.encode())
    for doc in _samples(path, "invalid"):
        m = compiled.matcher()
        ok = m.accept_string(doc) and m.is_accepting()
        assert not ok, (path.name, doc)
        assert not _judge(path, doc)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_masks_equal_oracle_inside_samples(path):
    grammar, vocab, compiled, oracle, docs = _setup(path)
    rng = random.Random(7)
    for doc in docs:
        data = doc.encode()
        cuts = sorted(rng.sample(range(len(data) + 1), min(4, len(data) + 1)))
        for cut in cuts:
            m = compiled.matcher()
            assert m.accept_bytes(data[:cut])
            st = oracle.feed(oracle.initial, data[:cut])
            assert _allowed(m, vocab) == oracle.allowed(st, vocab), (path.name, data[:cut])


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_random_walks_equal_oracle_and_complete_outputs_parse(path):
    grammar, vocab, compiled, oracle, docs = _setup(path)
    rng = random.Random(11)
    eos = min(vocab.eos_token_ids)
    for _ in range(2):
        m = compiled.matcher()
        st = oracle.initial
        out = b""
        for step in range(14):
            expected = oracle.allowed(st, vocab)
            assert _allowed(m, vocab) == expected, (path.name, out)
            if eos in expected and (step == 13 or rng.random() < 0.2):
                assert m.accept_token(eos)
                assert _judge(path, out.decode("utf-8")), (path.name, out)
                break
            tid = rng.choice(sorted(expected - {eos}))
            assert m.accept_token(tid)
            out += vocab.token_bytes[tid]
            st = oracle.feed(st, vocab.token_bytes[tid])
