"""FIM tokens and grammar-constrained infill on real vocabularies (Qwen3 has FIM tokens;
SmolLM2 and llama3 have none)."""
from pathlib import Path

import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, is_allowed
from constrained.infill import FimError, InfillMatcher, build_fim_prompt, detect_fim_tokens, \
    fim_tokens

pytestmark = pytest.mark.slow
quicktok = pytest.importorskip("quicktok")
GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"


@pytest.fixture(scope="module")
def qwen3():
    enc = quicktok.get_encoding("qwen3")
    return enc, Vocabulary.from_tiktoken(enc)


def test_qwen3_fim_tokens(qwen3):
    enc, vocab = qwen3
    fim = detect_fim_tokens(vocab)
    assert fim.family == "qwen"
    assert [vocab.token_bytes[i] for i in (fim.prefix_id, fim.suffix_id, fim.middle_id)] == \
        [b"<|fim_prefix|>", b"<|fim_suffix|>", b"<|fim_middle|>"]
    ends = {vocab.token_bytes[i] for i in fim.end_ids}
    assert {b"<|endoftext|>", b"<|fim_pad|>", b"<|file_sep|>"} <= ends
    pre, suf = enc.encode_ordinary("def f(x):\n    return "), enc.encode_ordinary("\n")
    p = build_fim_prompt(pre, suf, fim)
    assert p.ids == [fim.prefix_id] + pre + [fim.suffix_id] + suf + [fim.middle_id]


def test_vocabularies_without_fim_tokens(llama3_vocab):
    from constrained.model.loading import load_tokenizer
    smollm2 = Vocabulary.from_hf(load_tokenizer())
    for vocab in (smollm2, llama3_vocab):
        assert detect_fim_tokens(vocab) is None
        with pytest.raises(FimError):
            fim_tokens(vocab)


def test_c_subset_infill_on_qwen3(qwen3):
    enc, vocab = qwen3
    fim = detect_fim_tokens(vocab)
    compiled = compile_grammar(Grammar.from_file(GRAMMARS / "c_subset.lark"), vocab)
    prefix = "int main() {\n  int x = 1;\n  x = "
    suffix = ";\n  return x;\n}\n"
    m = InfillMatcher(compiled, prefix, suffix, end_ids=fim.end_ids)
    bm = allocate_token_bitmask(vocab.size)
    eot = enc.eot_token
    pad = vocab.token_bytes.index(b"<|fim_pad|>")
    steps = [("x", True), (" +", False), (" 2", True), (" *", False), (" (x", False),
             (")", True)]
    m.fill_next_token_bitmask(bm)
    assert not is_allowed(bm, eot)  # "x = ;" is not C
    for piece, can_end in steps:
        for tid in enc.encode_ordinary(piece):
            assert m.accept_token(tid), piece
        m.fill_next_token_bitmask(bm)
        assert is_allowed(bm, eot) == can_end == is_allowed(bm, pad), piece
    assert m.accept_token(eot) and m.is_terminated()
