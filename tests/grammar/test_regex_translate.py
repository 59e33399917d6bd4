"""Terminal pattern rewriting: the flag-free result means what Python's re means."""
import random
import re

import interegular
import pytest

from constrained.errors import GrammarError
from constrained.grammar._regex_translate import case_variants, escape_literal, to_interegular

CASES = [
    ("ab|cd", ""), ("[a-c]+x?", "i"), ("select", "i"), ("(?i:ab)c", ""), ("a.b", "s"),
    ("a.b", ""), ("a b # comment\n c", "x"), ("[ a]+", "x"), ("(?P<n>a+)b", ""),
    ("x{2,3}?y", ""), ("[^ab]c", "i"), ("(?:a|b-)*", ""), ("\\x41\\u0062c", "i"),
    ("[\\]\\-^]+", ""), ("a{,2}b", ""), ("\\.\\*\\{", ""), ("(?i)ab(?-i:cd)", ""),
    ("[z-\\x7f]", "i"), ("k", "i"), ("(?s:.).", ""),
]
ALPHABET = "abcdxyzABCDXYZ-.*{} \n]^kK\u212a\x7f"


@pytest.mark.parametrize("pattern, flags", CASES)
def test_same_language_as_python_re(pattern, flags):
    out = to_interegular(pattern, flags, name="T")
    fsm = interegular.parse_pattern(out).to_fsm()
    rx = re.compile(pattern, sum(getattr(re, f.upper()) for f in flags))
    rng = random.Random(pattern)
    samples = {"".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 5)))
               for _ in range(3000)}
    samples |= {"ab", "abc", "ABc", "cd", "select", "SELECT", "xxy", "a\nb", "abc", "Ab"}
    for s in samples:
        assert bool(rx.fullmatch(s)) == fsm.accepts(s), (pattern, flags, out, s)


def test_literal_escaping_round_trips():
    text = 'a.b*c{1}[x]\\ (q)|^$ #\n\t\u00e9'
    fsm = interegular.parse_pattern(escape_literal(text)).to_fsm()
    assert fsm.accepts(text) and not fsm.accepts(text[:-1])


def test_case_variants_follow_python():
    assert case_variants("k") == {"k", "K", "\u212a"}
    assert case_variants("1") == {"1"}
    assert "\u00c9" in case_variants("\u00e9")


@pytest.mark.parametrize("pattern, fragment", [
    ("a(?=b)", "lookaround"), ("(?<!a)b", "lookaround"), ("^a", "anchor"), ("a\\Z", "\\Z"),
    ("(a)\\1", "backreference"), ("(?P<x>a)(?P=x)", "backreference"), ("\\bx", "boundary"),
    ("a*+", "possessive"), ("(?>a)", "atomic"), ("\\p{L}", "property"), ("(a", "missing"),
    ("a)", "unbalanced"), ("[a", "unterminated"), ("*a", "nothing to repeat"),
    ("[[:alpha:]]", "POSIX"), ("(?(1)a|b)", "conditional"),
])
def test_refused_with_terminal_name(pattern, fragment):
    with pytest.raises(GrammarError) as info:
        to_interegular(pattern, "", name="MY_TERM")
    assert "MY_TERM" in str(info.value) and fragment in str(info.value)


def test_unknown_flag_refused():
    with pytest.raises(GrammarError, match="flag"):
        to_interegular("a", "l", name="T")


@pytest.mark.parametrize("pattern", [
    r"\w+", r"[\w-]+", r"[^\W\d]", r"\S", r"\D\s", r"(?a:\w)\d", r"[\d\s]", r"[^\s]",
])
def test_unicode_shorthands_match_python_re(pattern):
    out = to_interegular(pattern, "", name="T", unicode=True)
    assert "\\w" not in out and "\\d" not in out and "\\s" not in out
    ours, theirs = re.compile(out), re.compile(pattern)
    interegular.parse_pattern(out)
    rng = random.Random(pattern)
    chars = [chr(rng.randrange(0x30000)) for _ in range(5000)]
    chars += list("aZ_9 \n-\u00e9\u0663\u2028\u00a0\u3000\U0001D7CE")
    for c in chars:
        if 0xD800 <= ord(c) <= 0xDFFF:
            continue
        for s in (c, c + c, "a" + c):
            assert bool(ours.fullmatch(s)) == bool(theirs.fullmatch(s)), (pattern, s)


def test_ascii_shorthands_by_default():
    assert to_interegular(r"\w+", "", name="T") == "[0-9A-Z_a-z]+"
