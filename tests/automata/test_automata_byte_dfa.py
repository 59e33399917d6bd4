"""Byte DFA: UTF-8 ranges, agreement with Python re, token walks, errors and limits."""
import random
import re

import numpy as np
import pytest

from constrained.automata import (ByteDFA, regex_to_byte_dfa, utf8_sequences, walk_tokens,
                                  walk_tokens_many)
from constrained.errors import LimitExceededError, RegexError
from constrained.vocabulary import Vocabulary


def _matches_seq(data: bytes, seqs) -> bool:
    return any(len(s) == len(data) and all(lo <= b <= hi for b, (lo, hi) in zip(data, s))
               for s in seqs)


@pytest.mark.parametrize("lo,hi", [(0, 0x10FFFF), (0x41, 0x5A), (0x7F, 0x80), (0x7FF, 0x800),
                                   (0xD000, 0xE100), (0xFFFF, 0x10000), (0x3B1, 0x10401)])
def test_utf8_sequences_match_exactly_the_encodings(lo, hi):
    seqs = utf8_sequences([(lo, hi)])
    rng = random.Random(lo * 31 + hi)
    probes = {lo, hi, lo - 1, hi + 1, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0xD7FF, 0xE000}
    probes |= {rng.randint(0, 0x10FFFF) for _ in range(3000)}
    for cp in probes:
        if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            continue
        assert _matches_seq(chr(cp).encode(), seqs) == (lo <= cp <= hi), hex(cp)
    # sequences are pairwise disjoint, and no surrogate encoding is matched
    assert not _matches_seq("\ud800".encode("utf-8", "surrogatepass"), seqs)


PATTERNS = [r"abc", r"a|b|cd", r"[a-z]+@[a-z]+\.(com|org)", r"\d{2,4}", r"(ab)*c?", r".{0,3}x",
            r"[^a-c]+", r"é|ü+", r"[α-ω]{1,2}", r"(?i)hello", r"(?s:.)", r"\w+\s\W", r"x{3}",
            r"(foo|foobar)baz", r"[😀-😂]!", r"a.b", r"\x41\u00e9"]


def _random_text(rng, alphabet):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_dfa_agrees_with_python_re(pattern):
    dfa = regex_to_byte_dfa(pattern)
    assert isinstance(dfa, ByteDFA)
    compiled = re.compile(pattern, re.ASCII)
    rng = random.Random(pattern)
    alphabet = list("abcdxyzfoHELhel0123 _!\n.@é") + ["ü", "α", "ω", "😀", "😁", "A", "\t"]
    samples = [_random_text(rng, alphabet) for _ in range(400)]
    samples += ["abc", "foobarbaz", "foobaz", "hello", "HeLLo", "a@b.com", "1234", "xxx", "Aé"]
    for text in samples:
        assert dfa.accepts(text.encode()) == bool(compiled.fullmatch(text)), (pattern, text)


def test_states_are_live_and_forced_bytes():
    dfa = regex_to_byte_dfa(r"abc(d|e)")
    assert dfa.forced_bytes(dfa.initial) == b"abc"
    # every state can reach acceptance
    reach = dfa.accepting.copy()
    for _ in range(dfa.n_states):
        reach |= np.array([any(reach[t] for t in row if t >= 0) for row in dfa.transitions])
    assert reach.all()
    # partial UTF-8 of a forced character is forced byte by byte
    assert regex_to_byte_dfa("é").forced_bytes(0) == "é".encode()


def test_equal_languages_have_equal_keys():
    assert regex_to_byte_dfa("(a|b)+").key == regex_to_byte_dfa("[ab][ab]*").key
    assert regex_to_byte_dfa("a+").key != regex_to_byte_dfa("a*").key


def test_empty_language():
    dfa = regex_to_byte_dfa(r"[^\s\S]")
    assert dfa.initial == -1 and dfa.n_states == 0


@pytest.mark.parametrize("pattern,pos", [(r"(a)\1", 3), (r"x(?=y)", 1), (r"a(?<!b)", 1),
                                         (r"a++", 1), (r"(?>a)", 0), (r"a[", 1), (r"ab\b", 2),
                                         (r"a$b", 1), (r"(?P<n>a)(?P=n)", 8), (r"a)", 1),
                                         (r"a{2}+", 3)])
def test_bad_patterns_name_the_position(pattern, pos):
    with pytest.raises(RegexError) as info:
        regex_to_byte_dfa(pattern)
    assert info.value.position == pos


def test_state_limit():
    with pytest.raises(LimitExceededError):
        regex_to_byte_dfa(r"(a|b)*a(a|b){16}", max_states=500)


def test_anchors_are_full_match_noops():
    assert regex_to_byte_dfa(r"^ab$").key == regex_to_byte_dfa("ab").key
    assert regex_to_byte_dfa(r"\Aab\Z|^c$").key == regex_to_byte_dfa("ab|c").key


def _small_vocab():
    toks = [b"a", b"b", b"ab", b"abc", b"c", b"\xc3", b"\xa9", b"\xc3\xa9", "é!".encode(), b"!",
            b"", b"<eos>", b"ba", b"cab", b"x" * 10, b"abcabc", b"<|a-special-token-longer-than-text|>"]
    return Vocabulary.from_token_bytes(toks, eos_token_ids=[11], special_token_ids=[11, 16])


def test_walk_tokens_matches_per_token_walk():
    vocab = _small_vocab()
    for pattern in [r"(abc)+", r"[a-c]*é!?", r".*", r"x{2,12}"]:
        dfa = regex_to_byte_dfa(pattern)
        many = walk_tokens_many(dfa, vocab, list(range(dfa.n_states)))
        for s in range(dfa.n_states):
            got = walk_tokens(dfa, vocab, s)
            assert (got == many[s]).all()
            for tid, tok in enumerate(vocab.token_bytes):
                want = dfa.walk(s, tok) if vocab.text_token_mask[tid] else -1
                assert got[tid] == want, (pattern, s, tok)


SYNTAX_PATTERNS = [r"[]-a]+", r"[^]]+", r"\.", r"[.]", r"a|", r"|a", r"(|a)b", r"\\+", r"[\\]",
                   r"\t\x00\0\01\101", r"[\b\0\101]", r"(?:ab)+", r"(?P<x>a)b", r"(?i:a)b",
                   r"(?i)a(?-i:b)", r"\S+", r"[^\W\d]+", r"[\w-]+", r"[a\-z]+", r"[-a]+",
                   r"[a-]+", r"\n[^\n]", r"\f\v\a", r"a{2,}", r"a{,2}b", r"a{0}", r"(a{2}){2}",
                   r"[\s\d]+", r"x{1,3}?", r"a*?b", r"[\x41-\x43]+", r"(?s).", r"(?m)a",
                   r"(?a)\w", r"\Z", r"[\]]", r"\{", r"a{", r"a{1", r"{", r"a}", r"\-", r"[\^]",
                   r"[*+?]+", r"(?i)[a-c]+", r"(?i)[^a]", r"\u00e9\U0001F600\N{BULLET}", r"a}+",
                   r"(?#comment)ab", r"a(?#x)b", r"\x7f\x80", r"(?ai:A)b"]


@pytest.mark.parametrize("pattern", SYNTAX_PATTERNS)
def test_syntax_corners_agree_with_python_re(pattern):
    dfa = regex_to_byte_dfa(pattern)
    compiled = re.compile(pattern, re.ASCII)
    rng = random.Random(pattern)
    alphabet = list("abcAB019 _-]\\^.\n\t\x00\x0b\x0c\x07\x08{}*+?xyzé😀•") + ["\x7f", "\x80"]
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
        assert dfa.accepts(text.encode()) == bool(compiled.fullmatch(text)), (pattern, text)
    assert dfa.accepts(b"a{") == bool(compiled.fullmatch("a{"))


def test_unsupported_flags_name_the_position():
    with pytest.raises(RegexError) as info:
        regex_to_byte_dfa(r"ab(?x: c)")
    assert info.value.position == 2


def test_large_character_classes():
    dfa = regex_to_byte_dfa(r"[\u0100-\U0010FFFF]{1,3}")
    assert dfa.accepts("€😀".encode()) and not dfa.accepts(b"a") and not dfa.accepts(b"")
    assert not dfa.accepts("\u00ff".encode())


@pytest.mark.parametrize("pattern,excluded", [
    ("[a-c]+", ("ab", "c.*")),
    ("(?:ab|ba)*", ("(?:ab)+",)),
    ("[a-c]{0,4}", ("[a-c]{2}", "a+", "")),
    ("abc", ("[a-z]+",)),
])
def test_regex_difference_dfa_is_the_language_difference(pattern, excluded):
    import itertools
    import re as _re
    from constrained.automata import regex_difference_dfa
    dfa = regex_difference_dfa(pattern, excluded)
    for n in range(6):
        for t in itertools.product("abcd", repeat=n):
            text = "".join(t)
            want = _re.fullmatch(pattern, text) is not None and \
                not any(_re.fullmatch(e, text) for e in excluded)
            state = dfa.walk(dfa.initial, text.encode()) if dfa.n_states else -1
            got = state >= 0 and bool(dfa.accepting[state])
            assert got == want, (pattern, excluded, text)


def test_regex_difference_dfa_of_thousands_of_product_states():
    """A product of about 2,900 reachable pairs (the last eight letters decide), past the
    first growth of the pair table, against re on every text of up to nine letters; a
    smaller state limit raises."""
    import itertools
    import re as _re
    from constrained.automata import regex_difference_dfa
    pattern, excluded = "[a-c]*a[a-c]{5}", ("[a-c]*b[a-c]{7}",)
    dfa = regex_difference_dfa(pattern, excluded)
    for n in range(10):
        for t in itertools.product("abc", repeat=n):
            text = "".join(t)
            want = _re.fullmatch(pattern, text) is not None and \
                _re.fullmatch(excluded[0], text) is None
            state = dfa.walk(dfa.initial, text.encode()) if dfa.n_states else -1
            assert (state >= 0 and bool(dfa.accepting[state])) == want, text
    with pytest.raises(LimitExceededError):
        regex_difference_dfa("[a-c]*c[a-c]{5}", excluded, max_states=1000)
