"""Token healing plans and per-step masks on byte-BPE (SmolLM2, llama3) and SentencePiece."""
import random

import numpy as np
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allowed_token_ids, unpack_bitmask
from constrained.healing import PrefixIndex, TokenHealer, heal_prompt


@pytest.fixture(scope="module")
def smollm2():
    from constrained.model.loading import load_tokenizer
    tok = load_tokenizer()
    return tok, Vocabulary.from_hf(tok)


@pytest.fixture(scope="module")
def llama3(llama3_vocab):
    quicktok = pytest.importorskip("quicktok")
    return quicktok.get_encoding("llama3"), llama3_vocab


def _encode(tok, text):
    if hasattr(tok, "encode_ordinary"):
        return tok.encode_ordinary(text)
    try:
        return tok.encode(text, add_special_tokens=False)
    except TypeError:
        return tok.encode(text)


def _allowed_bytes(vocab, matcher):
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return {vocab.token_bytes[i] for i in allowed_token_ids(bm, vocab.size)}


def _check_plan(vocab, ids, plan):
    assert plan.trimmed_ids + plan.removed_ids == list(ids)
    assert len(plan.trimmed_ids) >= 1
    assert plan.prefix_bytes == vocab.decode(plan.removed_ids)
    assert not set(plan.removed_ids) & vocab.special_token_ids
    assert len(plan.prefix_bytes) <= PrefixIndex.of(vocab).max_token_bytes


CASES = [  # prompt, expected healed bytes, a merged token that must become reachable
    ("Answer:", b":", b"://"),
    ("Items: [", b" [", b' ["'),
    ("Visit http", b" http", b" https"),
    ('The link is <a href="http:', b":", b"://"),
    ("The quick bro", b" bro", b" brown"),
]


@pytest.mark.parametrize("which", ["smollm2", "llama3"])
@pytest.mark.parametrize("prompt,healed,merged", CASES)
def test_byte_bpe_prompts(request, which, prompt, healed, merged):
    tok, vocab = request.getfixturevalue(which)
    ids = _encode(tok, prompt)
    healer = TokenHealer(vocab)
    plan = healer.prepare(ids)
    _check_plan(vocab, ids, plan)
    assert plan.prefix_bytes.endswith(healed) or healed.endswith(plan.prefix_bytes), plan
    assert plan.prefix_bytes
    allowed = _allowed_bytes(vocab, healer.matcher(plan))
    reachable = {t for t in allowed if t.startswith(plan.prefix_bytes)}
    assert any(t.startswith(merged) or merged.startswith(t) for t in reachable), sorted(reachable)
    # every allowed token lies inside the healed bytes or extends them
    for t in allowed:
        assert plan.prefix_bytes.startswith(t) or t.startswith(plan.prefix_bytes)
    assert heal_prompt(vocab, ids) == (plan.trimmed_ids, plan.prefix_bytes)


def test_after_special_token_nothing_is_removed(smollm2):
    tok, vocab = smollm2
    ids = _encode(tok, "hello") + [2]  # <|im_end|>
    plan = TokenHealer(vocab).prepare(ids)
    assert not plan.healed and plan.trimmed_ids == ids
    # a special token in the middle stops the walk back
    ids = [1] + _encode(tok, ":")
    plan = TokenHealer(vocab).prepare(ids)
    assert plan.trimmed_ids[0] == 1 and len(plan.trimmed_ids) >= 1
    _check_plan(vocab, ids, plan)


def test_single_token_prompt_is_kept(smollm2):
    tok, vocab = smollm2
    ids = _encode(tok, ":")
    assert len(ids) == 1 and not TokenHealer(vocab).prepare(ids).healed


def test_prompt_ending_inside_a_multibyte_character(llama3):
    enc, vocab = llama3
    text = "Der Preis ist 5 €"
    data = text.encode()
    # a byte-level prompt cut inside "€" (3 bytes): its last token is a partial character
    ids = enc.encode(text)
    full = b"".join(vocab.token_bytes[i] for i in ids)
    assert full == data
    byte_ids = {vocab.token_bytes[i]: i for i in range(vocab.n_tokens)
                if len(vocab.token_bytes[i]) == 1 and i not in vocab.special_token_ids}
    cut_ids = enc.encode("Der Preis ist 5 ") + [byte_ids[data[-3:-2]], byte_ids[data[-2:-1]]]
    plan = TokenHealer(vocab).prepare(cut_ids)
    _check_plan(vocab, cut_ids, plan)
    assert plan.prefix_bytes == " €".encode()[:3] and len(plan.removed_ids) == 3
    allowed = _allowed_bytes(vocab, TokenHealer(vocab).matcher(plan))
    assert " €".encode() in allowed  # the whole character, merged with its space
    assert b" " in allowed and b" \xe2" in allowed and b"\xe2" not in allowed


def test_mid_word_smollm2(smollm2):
    tok, vocab = smollm2
    ids = _encode(tok, "The weather is wonderf")
    plan = TokenHealer(vocab).prepare(ids)
    _check_plan(vocab, ids, plan)
    assert plan.prefix_bytes == b" wonderf" and len(plan.removed_ids) == 2
    allowed = _allowed_bytes(vocab, TokenHealer(vocab).matcher(plan))
    assert b" wonderful" in allowed and b" wonder" in allowed


def test_grammar_limits_the_healed_tokens(smollm2):
    tok, vocab = smollm2
    ids = _encode(tok, 'The link is <a href="http:')
    grammar = compile_grammar(Grammar.from_regex(r'//[a-z]+\.com"'), vocab)
    healer = TokenHealer(vocab)
    inner = grammar.matcher()
    plan = healer.prepare(ids, inner)
    assert plan.prefix_bytes == b":"
    allowed = _allowed_bytes(vocab, healer.matcher(plan, inner))
    assert b"://" in allowed and b":" in allowed
    assert b"::" not in allowed and b":**" not in allowed
    for t in allowed:  # exact: inside ":" or ":" + a viable start of the grammar
        assert t == b":" or (t.startswith(b":") and _viable(grammar, t[1:]))
    # no token runs past ":" into digits: nothing worth healing under this grammar
    digits = compile_grammar(Grammar.from_regex(r"[0-9]{3}x"), vocab)
    assert not any(t.startswith(b":") and t[1:2].isdigit() for t in vocab.token_bytes)
    assert not healer.prepare(ids, digits.matcher()).healed


def _viable(grammar, data):
    m = grammar.matcher()
    return m.accept_bytes(data)


def test_mask_is_exact_against_brute_force(smollm2):
    tok, vocab = smollm2
    # the grammar of the continuation after the original prompt "Items: ["
    grammar = compile_grammar(Grammar.from_regex(r'"[a-z]+"(, "[a-z]+")*\]'), vocab)
    healer = TokenHealer(vocab)
    plan = healer.prepare(_encode(tok, "Items: ["), grammar.matcher())
    assert plan.prefix_bytes == b" ["
    m = healer.matcher(plan, grammar.matcher())
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(bm)
    bits = unpack_bitmask(bm, vocab.size)
    assert bits.sum() >= 2
    for tid, t in enumerate(vocab.token_bytes):
        if tid in vocab.special_token_ids or not t:
            want = False
        elif b" [".startswith(t):
            want = True
        elif t.startswith(b" [") and len(t) > 2:
            want = _viable(grammar, t[2:])
        else:
            want = False
        assert bits[tid] == want, t


def test_multi_step_and_rollback(smollm2):
    tok, vocab = smollm2
    ids = _encode(tok, "Visit http")
    healer = TokenHealer(vocab)
    plan = healer.prepare(ids)
    m = healer.matcher(plan)
    space = vocab.token_bytes.index(b" ")
    h = vocab.token_bytes.index(b"h")
    assert m.accept_token(space) and m.remaining == b"http"
    allowed = _allowed_bytes(vocab, m)
    assert b"https" in allowed and b"http" in allowed and b" https" not in allowed
    assert not m.is_accepting() and m.forced_bytes() == b""
    assert not m.accept_token(vocab.token_bytes.index(b"x"))
    assert m.accept_token(h) and m.remaining == b"ttp"
    m.rollback(1)
    assert m.remaining == b"http"
    https = vocab.token_bytes.index(b"https")
    assert m.accept_token(https) and m.remaining == b"" and m.is_accepting()
    assert m.strip(b" https") == b"s"
    m.rollback(2)
    assert m.remaining == b" http" and m.n_steps == 0
    with pytest.raises(ValueError):
        m.rollback(1)


def test_random_walks_stay_inside_the_grammar(smollm2):
    """Healed generation only yields continuations the grammar allows (as without healing)."""
    import re
    tok, vocab = smollm2
    pattern = r'//[a-z]{1,6}\.(com|org)"'
    grammar = compile_grammar(Grammar.from_regex(pattern), vocab)
    healer = TokenHealer(vocab)
    ids = _encode(tok, 'The link is <a href="http:')
    rng = random.Random(0)
    for _ in range(15):
        inner = grammar.matcher()
        plan = healer.prepare(ids, inner)
        m = healer.matcher(plan, inner)
        out = b""
        for _ in range(30):
            bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
            m.fill_next_token_bitmask(bm)
            choices = allowed_token_ids(bm, vocab.size).tolist()
            tid = rng.choice(choices)
            assert m.accept_token(tid)
            if tid in vocab.eos_token_ids:
                break
            out += vocab.token_bytes[tid]
        assert m.is_terminated()
        continuation = m.strip(out)
        assert vocab.decode(plan.trimmed_ids) + out == vocab.decode(ids) + continuation
        assert re.fullmatch(pattern.encode(), continuation)


@pytest.fixture(scope="module")
def sentencepiece(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    from transformers import LlamaTokenizer
    rng = random.Random(0)
    words = ["hello", "world", "worlds", "wonder", "http", "https", "://", "naïve", "café", "日本",
             "json", "[", "]", '"', ":", "data", "the", "quick", "brown"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(3000)]
    folder = tmp_path_factory.mktemp("sp_heal")
    (folder / "corpus.txt").write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(folder / "corpus.txt"), model_prefix=str(folder / "tokenizer"), vocab_size=350,
        byte_fallback=True, model_type="bpe", character_coverage=1.0,
        normalization_rule_name="identity", remove_extra_whitespaces=False, minloglevel=2)
    tok = LlamaTokenizer.from_pretrained(folder, legacy=False)
    return tok, Vocabulary.from_hf(tok)


def test_sentencepiece_healing(sentencepiece):
    tok, vocab = sentencepiece
    ids = tok.encode("hello wor", add_special_tokens=False)
    healer = TokenHealer(vocab)
    plan = healer.prepare(ids)
    _check_plan(vocab, ids, plan)
    assert plan.prefix_bytes.endswith(b"wor") and plan.healed
    allowed = _allowed_bytes(vocab, healer.matcher(plan))
    assert any(t.startswith(plan.prefix_bytes) and len(t) > len(plan.prefix_bytes)
               for t in allowed)
    assert any(b" world".startswith(t) or t.startswith(b" world") for t in allowed
               if len(t) > 1)


def test_sentencepiece_byte_fallback_mid_character(sentencepiece):
    tok, vocab = sentencepiece
    # "ü" is rare in the corpus: it falls back to bytes <0xC3><0xBC>
    ids = tok.encode("hello ü", add_special_tokens=False)
    assert vocab.decode(ids).endswith("ü".encode())
    cut = ids[:-1]  # ends inside the character
    plan = TokenHealer(vocab).prepare(cut)
    _check_plan(vocab, cut, plan)
    m = TokenHealer(vocab).matcher(plan)
    allowed = _allowed_bytes(vocab, m)
    for t in allowed:
        assert plan.prefix_bytes.startswith(t) or t.startswith(plan.prefix_bytes)


@pytest.mark.parametrize("prompt,healed", [("Here is the JSON:", b":"), ("Answer: [", b" ["),
                                           ('x = {"key":', b'":')])
def test_cfg_json_grammar_mask_is_exact(smollm2, prompt, healed):
    """Healing composed with the Lark JSON grammar (the CFG engine), against brute force."""
    from pathlib import Path
    tok, vocab = smollm2
    path = Path(__file__).resolve().parents[2] / "grammars" / "json.lark"
    grammar = compile_grammar(Grammar.from_file(path) if path.is_file()
                              else Grammar.from_regex(r"[\[{\"0-9-].*"), vocab)
    healer = TokenHealer(vocab)
    plan = healer.prepare(_encode(tok, prompt), grammar.matcher())
    assert plan.prefix_bytes == healed
    m = healer.matcher(plan, grammar.matcher())
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(bm)
    bits = unpack_bitmask(bm, vocab.size)
    n = len(healed)
    for tid, t in enumerate(vocab.token_bytes):
        if tid in vocab.special_token_ids or not t:
            want = False
        elif healed.startswith(t):
            want = True
        elif t.startswith(healed) and len(t) > n:
            want = _viable(grammar, t[n:])
        else:
            want = False
        assert bits[tid] == want, t
