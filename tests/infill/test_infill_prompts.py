"""FIM token detection per family and prompt layouts with budget trimming."""
import pytest

from constrained import Vocabulary
from constrained.infill import (FimError, FimTokens, build_fim_prompt, build_fim_prompt_text,
                                detect_fim_tokens, fim_tokens)

BYTES = [bytes([i]) for i in range(256)]


def _vocab(specials, text_tokens=(), eos=b"<|endoftext|>"):
    tokens = BYTES + list(text_tokens) + [eos] + list(specials)
    eos_id = len(BYTES) + len(text_tokens)
    ids = range(eos_id, len(tokens))
    return Vocabulary.from_token_bytes(tokens, eos_token_ids=[eos_id], special_token_ids=ids)


@pytest.mark.parametrize("family,specials,eos", [
    ("starcoder", [b"<fim_prefix>", b"<fim_middle>", b"<fim_suffix>", b"<fim_pad>"],
     b"<|endoftext|>"),
    ("qwen", [b"<|fim_prefix|>", b"<|fim_middle|>", b"<|fim_suffix|>", b"<|fim_pad|>",
              b"<|file_sep|>"], b"<|endoftext|>"),
    ("codellama", [b" <PRE>", b" <SUF>", b" <MID>", b" <EOT>"], b"</s>"),
    ("codellama", ["\u2581<PRE>".encode(), "\u2581<SUF>".encode(), "\u2581<MID>".encode(),
                   "\u2581<EOT>".encode()], b"</s>"),
    ("deepseek", ["<｜fim▁begin｜>".encode(), "<｜fim▁hole｜>".encode(),
                  "<｜fim▁end｜>".encode()], "<｜end▁of▁sentence｜>".encode()),
])
def test_detect_family(family, specials, eos):
    vocab = _vocab(specials, eos=eos)
    found = detect_fim_tokens(vocab)
    assert found is not None and found.family == family
    names = [vocab.token_bytes[i] for i in (found.prefix_id, found.suffix_id, found.middle_id)]
    assert all(n in specials for n in names)
    assert vocab.token_bytes[found.prefix_id].lstrip("\u2581".encode()).strip(b" <|").startswith(
        (b"fim_prefix", b"PRE", "｜fim▁begin".encode()))
    assert set(vocab.eos_token_ids) <= found.end_ids
    # pad / EOT / separators end a middle too
    extra = {vocab.token_bytes[i] for i in found.end_ids - vocab.eos_token_ids}
    assert extra <= set(specials)
    assert fim_tokens(vocab, family) == found


def test_smollm2_style_vocab_without_fim_tokens():
    vocab = _vocab([b"<|im_start|>", b"<|im_end|>"])
    assert detect_fim_tokens(vocab) is None
    with pytest.raises(FimError, match="no fill-in-the-middle"):
        fim_tokens(vocab)
    with pytest.raises(FimError, match="lacks the qwen"):
        fim_tokens(vocab, "qwen")
    with pytest.raises(FimError, match="unknown FIM family"):
        fim_tokens(vocab, "nope")


def test_special_token_preferred_over_text_token_with_same_bytes():
    vocab = _vocab([b"<fim_prefix>", b"<fim_middle>", b"<fim_suffix>"],
                   text_tokens=[b"<fim_prefix>"])
    found = detect_fim_tokens(vocab)
    assert found.prefix_id in vocab.special_token_ids


T = FimTokens("test", 900, 901, 902, frozenset({903}))


def test_psm_and_spm_layouts():
    p = build_fim_prompt([1, 2, 3], [7, 8], T)
    assert p.ids == [900, 1, 2, 3, 901, 7, 8, 902]
    s = build_fim_prompt([1, 2, 3], [7, 8], T, layout="spm", leading_ids=[5])
    assert s.ids == [5, 900, 901, 7, 8, 902, 1, 2, 3]
    with pytest.raises(FimError):
        build_fim_prompt([1], [2], T, layout="mps")


def test_budget_trimming_keeps_the_text_next_to_the_hole():
    pre, suf = list(range(100, 120)), list(range(200, 220))
    p = build_fim_prompt(pre, suf, T, max_prefix_tokens=5, max_suffix_tokens=3)
    assert p.prefix_ids == pre[-5:] and p.suffix_ids == suf[:3]
    assert (p.prefix_dropped, p.suffix_dropped) == (15, 17)
    # whole-prompt budget: 3 FIM tokens + 1 leading; room 16 -> 12 prefix, 4 suffix
    q = build_fim_prompt(pre, suf, T, max_prompt_tokens=20, leading_ids=[1])
    assert len(q.ids) == 20 and q.prefix_ids == pre[-12:] and q.suffix_ids == suf[:4]
    # a short suffix lends its share to the prefix
    r = build_fim_prompt(pre, [200], T, max_prompt_tokens=19)
    assert r.prefix_ids == pre[-15:] and r.suffix_ids == [200] and len(r.ids) == 19
    # a short prefix lends to the suffix
    s = build_fim_prompt([100], suf, T, max_prompt_tokens=13)
    assert s.prefix_ids == [100] and s.suffix_ids == suf[:9]
    with pytest.raises(FimError):
        build_fim_prompt(pre, suf, T, max_prompt_tokens=2)


def test_text_entry_point():
    enc = lambda text: list(text.encode())  # noqa: E731 - byte-level stand-in tokenizer
    p = build_fim_prompt_text("ab", b"c", enc, T)
    assert p.ids == [900, 97, 98, 901, 99, 902]
    assert build_fim_prompt_text("", "", enc, T).ids == [900, 901, 902]
