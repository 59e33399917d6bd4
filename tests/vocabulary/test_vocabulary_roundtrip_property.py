"""Property: for generated text (ASCII, accents, CJK, emoji, whitespace runs), the bytes of the
tokenizer's own encoding, read through the Vocabulary, are exactly the text's UTF-8 bytes."""
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from constrained import Vocabulary
from constrained.model.loading import default_gguf_path

_PIECES = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12),
    st.sampled_from(["é", "ü", "ñ", "Æ", "ø", "ç", "ß", "naïve", "déjà"]),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=4),
    st.text(st.characters(min_codepoint=0x3040, max_codepoint=0x30FF), min_size=1, max_size=4),
    st.sampled_from(["😀", "🎉", "👩‍👩‍👧‍👦", "🇫🇷", "✔️", "🤖"]),
    st.lists(st.sampled_from([" ", "\t", "\n", "\r\n", "\u00a0", "\u3000"]), min_size=1,
             max_size=8).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),   # anything at all
)
TEXTS = st.lists(_PIECES, max_size=8).map("".join)
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=["llama3", "qwen3"])
def tiktoken_pair(request):
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding(request.param)
    return enc.encode_ordinary, Vocabulary.from_tiktoken(enc)


@pytest.fixture(scope="module")
def smollm2_pair():
    from transformers import AutoTokenizer
    path = default_gguf_path()
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    return (lambda s: tok.encode(s, add_special_tokens=False)), Vocabulary.from_hf(tok)


def test_tiktoken_vocabularies_roundtrip_generated_text(tiktoken_pair):
    encode, vocab = tiktoken_pair

    @SETTINGS
    @given(TEXTS)
    def check(text):
        assert vocab.decode(encode(text)) == text.encode("utf-8")

    check()


def _single_bytes(vocab: Vocabulary) -> set[int]:
    return {t[0] for t in vocab.token_bytes if len(t) == 1}


def test_smollm2_lacks_six_control_bytes(smollm2_pair):
    """SmolLM2's byte-level BPE has no token for six ASCII control bytes (nor for a few lead
    bytes: 0xC0, 0xC1, 0xF1, 0xF2, 0xF5-0xFF): its tokenizer drops them,
    so no output can hold them (the roundtrip below is over text it can express)."""
    encode, vocab = smollm2_pair
    missing = set(range(256)) - _single_bytes(vocab)
    assert {b for b in missing if b < 0x80} == {0x04, 0x06, 0x13, 0x14, 0x16, 0x1D}
    assert {0xC0, 0xC1, 0xF1, 0xF2} <= missing and not missing & set(range(0x80, 0xC0))
    assert encode("\x16") == [] and vocab.decode(encode("a\x16b")) == b"ab"


def test_smollm2_roundtrips_generated_text(smollm2_pair):
    encode, vocab = smollm2_pair
    expressible = _single_bytes(vocab)

    @SETTINGS
    @given(TEXTS)
    def check(text):
        assume(set(text.encode("utf-8")) <= expressible)
        assert vocab.decode(encode(text)) == text.encode("utf-8")

    check()
