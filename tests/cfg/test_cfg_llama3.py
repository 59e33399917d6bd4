"""The CFG engine on the llama3 vocabulary: samples token by token, re-splits, random walks."""
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from constrained.bitmask import allowed_token_ids, is_allowed
from constrained.cfg import compile_cfg
from constrained.decoding.budget import CompletionPlanner
from constrained.decoding.byte_tokens import ByteTokenizer
from constrained.grammar import Grammar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "oracles"))
import lark_reference  # noqa: E402

NAMES = ["json.lark", "arithmetic.lark", "c_subset.lark", "json.gbnf"]


def _samples(stem: str, kind: str) -> list[str]:
    folder = ROOT / "tests" / "grammars_samples" / stem / kind
    return [p.read_bytes().decode("utf-8") for p in sorted(folder.glob("*"))]


@pytest.fixture(scope="module")
def compiled(llama3_vocab):
    return {name: compile_cfg(Grammar.from_file(str(ROOT / "grammars" / name)), llama3_vocab)
            for name in NAMES}


@pytest.fixture(scope="module")
def encoder():
    import quicktok
    return quicktok.get_encoding("llama3")


@pytest.fixture(scope="module")
def token_ids(llama3_vocab):
    return {t: i for i, t in enumerate(llama3_vocab.token_bytes)
            if i not in llama3_vocab.special_token_ids}


def _walk_tokens(cg, ids) -> int:
    """Accept ``ids`` one by one, checking each is in the mask; index of the first refusal."""
    m = cg.matcher()
    words = np.zeros((cg.vocab.size + 31) // 32, dtype=np.int32)
    for k, tid in enumerate(ids):
        m.fill_next_token_bitmask(words)
        allowed = is_allowed(words, tid)
        accepted = m.accept_token(tid)
        assert allowed == accepted
        if not accepted:
            return k
    m.fill_next_token_bitmask(words)
    eos = min(cg.vocab.eos_token_ids)
    return len(ids) if is_allowed(words, eos) and m.accept_token(eos) else -1


@pytest.mark.parametrize("name", NAMES)
def test_samples_greedy_encoded(name, compiled, encoder):
    stem = name.split(".")[0]
    cg = compiled[name]
    for doc in _samples(stem, "valid"):
        ids = encoder.encode(doc)
        assert _walk_tokens(cg, ids) == len(ids), doc
    for doc in _samples(stem, "invalid"):
        ids = encoder.encode(doc)
        assert _walk_tokens(cg, ids) != len(ids), doc


@pytest.mark.parametrize("name", NAMES)
def test_samples_random_resplits(name, compiled, token_ids):
    stem = name.split(".")[0]
    cg = compiled[name]
    rng = random.Random(3)
    for doc in _samples(stem, "valid"):
        data = doc.encode()
        for _ in range(2):
            ids, i = [], 0
            while i < len(data):
                choices = [token_ids[data[i:j]] for j in range(i + 1, min(len(data), i + 12) + 1)
                           if data[i:j] in token_ids]
                tid = rng.choice(choices)
                ids.append(tid)
                i += len(cg.vocab.token_bytes[tid])
            assert _walk_tokens(cg, ids) == len(ids), (doc, ids)


# grammars naming special tokens need a vocabulary with them: test_token_terminals.py (qwen3)
SHIPPED = sorted(p.name for p in (ROOT / "grammars").iterdir()
                 if p.suffix in (".lark", ".gbnf") and not Grammar.from_file(p).has_token_refs)
# per grammar: uniform choices among allowed tokens, over several walks (character-level GBNF
# grammars cost more per step: a new parser column per character)
UNIFORM_STEPS = {".lark": 2000, ".gbnf": 1000}


@pytest.mark.parametrize("name", SHIPPED)
def test_random_walks_end_in_lark_sentences(name, llama3_vocab, token_ids):
    import gbnf_reference
    cg = compile_cfg(Grammar.from_file(str(ROOT / "grammars" / name)), llama3_vocab)
    vocab = cg.vocab
    eos = min(vocab.eos_token_ids)
    source = (ROOT / "grammars" / name).read_text()
    rng = random.Random(5)
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    planner = CompletionPlanner(ByteTokenizer.of(vocab))
    uniform = 0
    while uniform < UNIFORM_STEPS[Path(name).suffix]:
        m = cg.matcher()
        out = b""
        length = rng.choice([5, 20, 60, 150])
        for step in range(length + 400):
            m.fill_next_token_bitmask(words)
            allowed = allowed_token_ids(words, vocab.size)
            assert len(allowed)
            if step < length:
                uniform += 1
            if step >= length:   # steer to an end: the decode loop's completion planner
                if eos in allowed:
                    break
                plan = planner.plan(m)
                assert plan is not None, out
                for tid in plan:
                    assert m.accept_token(tid)
                    out += vocab.token_bytes[tid]
                break
            tid = int(rng.choice(allowed))
            if tid in vocab.eos_token_ids:
                break
            assert m.accept_token(tid)
            out += vocab.token_bytes[tid]
        assert m.accept_token(eos), out
        assert m.is_terminated()
        text = out.decode("utf-8")
        if name.endswith(".lark"):
            assert lark_reference.lark_accepts(source, text), text
        else:
            assert gbnf_reference.recognizes(source, text), text
