"""Strings every tokenizer must round-trip byte for byte: ASCII, accents, CJK, emoji, spaces."""

ROUNDTRIP_STRINGS = [
    "Hello, world!",
    "  leading and trailing spaces  ",
    "tabs\tand\nnew\r\nlines\n\n\n",
    "     \t\t    runs of whitespace        ",
    "naïve café, déjà vu, Ærøskøbing, São Paulo",
    "Привет, мир! Ελληνικά",
    "日本語のテキストと中文字符，한국어",
    "emoji: 😀🎉👩‍👩‍👧‍👦 🇫🇷 ✔️",
    '{"key": [1, 2.5e-3, null, true], "nested": {"a": "b\\n"}}',
    "def f(x):\n    return x ** 2  # comment",
    "SELECT a, b FROM t WHERE c >= 10 GROUP BY a;",
    "mixed: abc123 ¡¿ «» — … ‰ € ™",
    "\u00a0non-breaking\u2009thin\u3000ideographic spaces",
    "a",
    "",
]
