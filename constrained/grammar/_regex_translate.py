"""Rewrite a Python-``re`` terminal pattern into the plain syntax interegular reads.

Lark terminals carry regex flags (``i``, ``s``, ``m``, ``x``) and may use constructs such as
``\\u`` escapes or named groups. The regex layer builds automata with interegular, which takes
neither inline flags reliably nor ``\\u`` escapes, so patterns are rewritten here: flags are
expanded into the pattern (``i`` becomes explicit case alternatives, ``s`` turns ``.`` into
``[\\s\\S]``, ``x`` drops layout), escapes become literal characters, and anything without a
regular meaning (anchors, lookaround, backreferences, word boundaries) is refused with an error
naming the terminal. The result is checked by the regex layer's quick reading, or else (and
for lazy quantifiers) with ``interegular.parse_pattern``.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache

import interegular

from ..automata.python_regex_nfa import quick_readable
from ..automata.utf8 import merge_ranges
from ..errors import GrammarError

_SUPPORTED_FLAGS = frozenset("aimsxu")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_CLASS_SHORTHANDS = frozenset("dDwWsS")
_UNSUPPORTED_ESCAPES = {"b": "word boundary \\b", "B": "\\B", "A": "anchor \\A", "Z": "anchor \\Z",
                        "z": "anchor \\z", "G": "\\G", "p": "unicode property \\p",
                        "P": "unicode property \\P", "X": "\\X", "K": "\\K"}
_META = set(".^$*+?{}[]\\|()")
_CLASS_META = set("\\]^-[")
_ASCII_FOLD_EXTRAS = {"k": "\u212a", "s": "\u017f", "i": "\u0130\u0131"}


class _Fail(Exception):
    pass


def to_interegular(pattern: str, flags: str | frozenset[str] | tuple = "", *, name: str,
                   unicode: bool = False) -> str:
    """Return ``pattern`` (with ``flags`` applied) as a flag-free regex interegular parses.

    ``unicode``: ``\\d \\w \\s`` (and their negations) keep Python's Unicode meaning, else
    (or under the ``a`` flag) their ASCII meaning; either way they are spelled out as explicit
    classes, so Python's ``re`` and interegular read the result alike. Raises GrammarError
    naming terminal ``name`` when the pattern has no regular translation.
    """
    flags = frozenset(flags)
    unknown = flags - _SUPPORTED_FLAGS
    if unknown:
        raise GrammarError(f"terminal {name}: regex flag(s) {''.join(sorted(unknown))} "
                           "are not supported")
    translator = _Translator(pattern, flags, unicode)
    try:
        out = translator.translate()
    except _Fail as e:
        raise GrammarError(f"terminal {name}: {e} in pattern {pattern!r}") from None
    if not translator.lazy and quick_readable(out):
        return out
    try:
        parsed = interegular.parse_pattern(out)
    except Exception as e:  # interegular raises several types
        raise GrammarError(f"terminal {name}: pattern {pattern!r} cannot be turned into an "
                           f"automaton ({type(e).__name__}: {e})") from None
    if translator.lazy and not _prefix_free(parsed):
        raise GrammarError(
            f"terminal {name}: lazy quantifier in {pattern!r}: a lexer matching at a position "
            "takes the shortest match, which differs from the pattern's full-match language "
            "here; write the terminal without lazy quantifiers (e.g. [^x]* instead of .*?x)")
    return out


def _prefix_free(parsed) -> bool:
    """No string of the language has a proper prefix in the language.

    Then a lazy quantifier cannot change which prefix of the input is the match, so dropping
    the laziness keeps the terminal's meaning exactly.
    """
    try:
        fsm = parsed.to_fsm()
    except Exception:
        return False
    finals = set(fsm.finals)
    for f in finals:
        seen = set()
        todo = list(fsm.map.get(f, {}).values())
        while todo:
            q = todo.pop()
            if q in finals:
                return False
            if q not in seen:
                seen.add(q)
                todo.extend(fsm.map.get(q, {}).values())
    return True


def escape_literal(text: str) -> str:
    """A regex matching exactly ``text``, in syntax interegular reads."""
    return "".join(_escape_char(c) for c in text)


def _escape_char(c: str) -> str:
    if c in _META:
        return "\\" + c
    return _plain(c)


def _plain(c: str) -> str:
    o = ord(c)
    if o < 0x20 or o == 0x7f:
        return f"\\x{o:02x}"
    if c == " " or c == "#":
        return "\\" + c  # stays literal even if someone adds verbose mode later
    return c


def class_char(c: str) -> str:
    """``c`` written for use inside a character class."""
    if c in _CLASS_META:
        return "\\" + c
    o = ord(c)
    if o < 0x20 or o == 0x7f:
        return f"\\x{o:02x}"
    return c


def ranges_to_class(ranges: list[tuple[int, int]], negate: bool = False) -> str:
    """A character class over sorted, merged code point ranges."""
    if not ranges:      # no character at all (or, negated, every one): '[]' and '[^]' are
        every = f"\\x00-{chr(0x10FFFF)}"                               # not re syntax
        return f"[^{every}]" if not negate else f"[{every}]"
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(class_char(chr(lo)))
        elif hi == lo + 1:
            parts.append(class_char(chr(lo)) + class_char(chr(hi)))
        else:
            parts.append(f"{class_char(chr(lo))}-{class_char(chr(hi))}")
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


@lru_cache(maxsize=None)
def _cased_index() -> tuple[dict[str, frozenset[str]], list[int]]:
    """Map each simple lowercase form to the characters sharing it; sorted cased code points."""
    index: dict[str, set[str]] = {}
    cased = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        low, up = ch.lower(), ch.upper()
        if low == ch and up == ch:
            continue
        cased.append(cp)
        key = low if len(low) == 1 else ch
        index.setdefault(key, set()).add(ch)
        if len(up) == 1:
            index.setdefault(key, set()).add(up)
    return {k: frozenset(v) for k, v in index.items()}, cased


@lru_cache(maxsize=4096)
def case_variants(c: str) -> frozenset[str]:
    """Characters that Python's ``re`` matches against ``c`` under IGNORECASE."""
    cands = {c}
    for form in (c.lower(), c.upper(), c.swapcase(), c.title(), c.casefold()):
        if len(form) == 1:
            cands.add(form)
    cands |= set(_ASCII_FOLD_EXTRAS.get(c.lower(), ""))
    if not c.isascii():
        index, _ = _cased_index()
        for form in list(cands):
            cands |= index.get(form.lower() if len(form.lower()) == 1 else form, frozenset())
    else:
        for form in list(cands):
            if form.isascii() and form.lower() in _ASCII_FOLD_EXTRAS:
                cands |= set(_ASCII_FOLD_EXTRAS[form.lower()])
    pat = re.compile(re.escape(c), re.IGNORECASE)
    return frozenset(x for x in cands if pat.fullmatch(x))


class _Translator:
    """Single-pass rewriter over the pattern text (Python ``re`` syntax)."""

    def __init__(self, pattern: str, flags: frozenset[str], unicode: bool = False) -> None:
        self.unicode = unicode
        self.p = pattern
        self.i = 0
        self.flags = [set(flags)]
        self.out: list[str] = []
        self.group_depth = 0
        self.lazy = False
        self._global_flags()

    def _global_flags(self) -> None:
        m = re.match(r"\(\?([aiLmsux]+)\)", self.p)
        while m:
            for f in m.group(1):
                if f not in _SUPPORTED_FLAGS:
                    raise _Fail(f"inline flag {f!r} is not supported")
                self.flags[0].add(f)
            self.i = m.end()
            m = re.compile(r"\(\?([aiLmsux]+)\)").match(self.p, self.i)

    @property
    def _f(self) -> set[str]:
        return self.flags[-1]


    def translate(self) -> str:
        p = self.p
        n = len(p)
        while self.i < n:
            c = p[self.i]
            if "x" in self._f and c in " \t\n\r\f\v":
                self.i += 1
            elif "x" in self._f and c == "#":
                while self.i < n and p[self.i] != "\n":
                    self.i += 1
            elif c == "\\":
                self._escape()
            elif c == "[":
                self._class()
            elif c == "(":
                self._open_group()
            elif c == ")":
                if self.group_depth == 0:
                    raise _Fail("unbalanced ')'")
                self.group_depth -= 1
                self.flags.pop()
                self.out.append(")")
                self.i += 1
            elif c == ".":
                self.out.append("[\\s\\S]" if "s" in self._f else ".")
                self.i += 1
            elif c in "^$":
                raise _Fail(f"anchor {c!r} has no meaning inside a terminal")
            elif c in "*+?":
                self._quantifier(c)
            elif c == "{":
                m = re.compile(r"\{(\d*)(,?)(\d*)\}").match(p, self.i)
                if m and (m.group(1) or m.group(3)):
                    lo, comma, hi = m.groups()
                    if not comma:
                        q = "{" + lo + "}"
                    else:
                        q = "{" + (lo or "0") + "," + hi + "}"
                    if lo and hi and comma and int(lo) > int(hi):
                        raise _Fail(f"bad repetition {m.group(0)}")
                    self.out.append(q)
                    self.i = m.end()
                    self._quantifier_suffix()
                else:
                    self._literal("{")
                    self.i += 1
            elif c == "|":
                self.out.append("|")
                self.i += 1
            else:
                self._literal(c)
                self.i += 1
        if self.group_depth:
            raise _Fail("missing ')'")
        return "".join(self.out)

    def _quantifier(self, c: str) -> None:
        if not self.out or self.out[-1] in ("(?:", "|"):
            raise _Fail(f"nothing to repeat at position {self.i}")
        self.out.append(c)
        self.i += 1
        self._quantifier_suffix()

    def _quantifier_suffix(self) -> None:
        if self.i < len(self.p) and self.p[self.i] == "?":
            self.i += 1  # lazy: see _check_lazy
            self.lazy = True
        elif self.i < len(self.p) and self.p[self.i] == "+":
            raise _Fail("possessive quantifiers are not supported")

    def _literal(self, c: str) -> None:
        if "i" in self._f:
            variants = case_variants(c)
            if len(variants) > 1:
                self.out.append("[" + "".join(class_char(v) for v in sorted(variants)) + "]")
                return
        self.out.append(_escape_char(c))

    def _open_group(self) -> None:
        p = self.p
        self.i += 1
        if p.startswith("?", self.i):
            rest = p[self.i + 1:]
            if rest.startswith("#"):
                end = p.find(")", self.i)
                if end < 0:
                    raise _Fail("unterminated comment group")
                self.i = end + 1
                return
            if rest.startswith(("=", "!", "<=", "<!")):
                raise _Fail("lookaround assertions are not supported")
            if rest.startswith("P="):
                raise _Fail("backreferences are not supported")
            if rest.startswith("("):
                raise _Fail("conditional groups are not supported")
            if rest.startswith(">"):
                raise _Fail("atomic groups are not supported")
            new = set(self._f)
            if rest.startswith(("P<", "<")):
                end = p.find(">", self.i)
                if end < 0:
                    raise _Fail("unterminated group name")
                self.i = end + 1
            elif rest.startswith(":"):
                self.i += 2
            else:
                m = re.compile(r"\?([aiLmsux]*)(?:-([imsx]+))?:").match(p, self.i)
                if not m:
                    raise _Fail(f"unsupported group syntax at position {self.i - 1}")
                for f in m.group(1):
                    if f not in _SUPPORTED_FLAGS:
                        raise _Fail(f"inline flag {f!r} is not supported")
                    new.add(f)
                for f in m.group(2) or "":
                    new.discard(f)
                self.i = m.end()
            self.flags.append(new)
        else:
            self.flags.append(set(self._f))
        self.group_depth += 1
        self.out.append("(?:")

    def _read_escape(self, in_class: bool) -> tuple[str, str]:
        """Read an escape at self.i; return ("char", c) or ("class", shorthand)."""
        p = self.p
        if self.i + 1 >= len(p):
            raise _Fail("pattern ends with a backslash")
        e = p[self.i + 1]
        self.i += 2
        if e in _CLASS_SHORTHANDS:
            return "class", "\\" + e
        if e in _SIMPLE_ESCAPES:
            return "char", _SIMPLE_ESCAPES[e]
        if e == "b" and in_class:
            return "char", "\b"
        if e in _UNSUPPORTED_ESCAPES:
            raise _Fail(f"{_UNSUPPORTED_ESCAPES[e]} is not supported")
        if e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            digits = p[self.i:self.i + size]
            if len(digits) != size or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise _Fail(f"bad \\{e} escape")
            self.i += size
            cp = int(digits, 16)
            if cp > 0x10FFFF:
                raise _Fail(f"bad \\{e} escape")
            return "char", chr(cp)
        if e == "N":
            m = re.compile(r"\{([^}]*)\}").match(p, self.i)
            if not m:
                raise _Fail("bad \\N escape")
            try:
                ch = unicodedata.lookup(m.group(1))
            except KeyError:
                raise _Fail(f"unknown character name {m.group(1)!r}") from None
            self.i = m.end()
            return "char", ch
        if e == "0" or (in_class and e.isdigit()):
            m = re.compile(r"[0-7]{1,3}").match(p, self.i - 1)
            self.i = m.end()
            return "char", chr(int(m.group(0), 8))
        if e.isdigit():
            m = re.compile(r"[0-7]{3}").match(p, self.i - 1)
            if m and e in "0123":
                self.i = m.end()
                return "char", chr(int(m.group(0), 8))
            raise _Fail("backreferences are not supported")
        if e.isascii() and e.isalnum():
            raise _Fail(f"unknown escape \\{e}")
        return "char", e

    def _escape(self) -> None:
        kind, val = self._read_escape(in_class=False)
        if kind == "class":
            ranges = self._shorthand(val[1].lower())
            self.out.append(ranges_to_class(ranges, negate=val[1].isupper()))
        else:
            self._literal(val)

    def _class(self) -> None:
        p = self.p
        self.i += 1
        negate = False
        if self.i < len(p) and p[self.i] == "^":
            negate = True
            self.i += 1
        items: list[tuple[int, int]] = []
        shorthands: list[str] = []
        first = True
        while True:
            if self.i >= len(p):
                raise _Fail("unterminated character class")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            lo = self._class_atom(shorthands)
            if lo is None:
                continue
            if (self.i + 1 < len(p) and p[self.i] == "-" and p[self.i + 1] != "]"):
                self.i += 1
                hi = self._class_atom(shorthands)
                if hi is None:
                    raise _Fail("bad character range")
                if hi < lo:
                    raise _Fail(f"bad character range {chr(lo)!r}-{chr(hi)!r}")
                items.append((lo, hi))
            else:
                items.append((lo, lo))
        if "i" in self._f:
            items = _fold_ranges(items)
        for sh in shorthands:
            ranges = self._shorthand(sh[1].lower())
            items.extend(_complement(ranges) if sh[1].isupper() else ranges)
        ranges = merge_ranges(items)
        if not shorthands:
            self.out.append(ranges_to_class(ranges, negate))
            return
        # write whichever of the set and its complement is smaller: automaton builders
        # materialize class members
        positive = _complement(ranges) if negate else ranges
        other = _complement(positive)
        if _size(positive) <= _size(other):
            self.out.append(ranges_to_class(positive))
        else:
            self.out.append(ranges_to_class(other, negate=True))

    def _shorthand(self, letter: str) -> tuple[tuple[int, int], ...]:
        """Ranges of ``\\d``, ``\\w`` or ``\\s``: Python's Unicode or ASCII meaning."""
        if self.unicode and "a" not in self._f:
            return shorthand_ranges(letter)
        return _ASCII_SHORTHANDS[letter]

    def _class_atom(self, shorthands: list[str]) -> int | None:
        c = self.p[self.i]
        if c == "\\":
            kind, val = self._read_escape(in_class=True)
            if kind == "class":
                shorthands.append(val)
                return None
            return ord(val)
        if c == "[" and self.p.startswith(("[:", "[=", "[."), self.i):
            raise _Fail("POSIX character classes are not supported")
        self.i += 1
        return ord(c)


def _fold_ranges(items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Add the case variants of every character in the ranges."""
    out = list(items)
    for lo, hi in items:
        if hi - lo < 512:
            cps = range(lo, hi + 1)
        else:
            _, cased = _cased_index()
            a, b = bisect.bisect_left(cased, lo), bisect.bisect_right(cased, hi)
            cps = cased[a:b]
        for cp in cps:
            for v in case_variants(chr(cp)):
                o = ord(v)
                if not lo <= o <= hi:
                    out.append((o, o))
    return out


_MAX_CP = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
_ASCII_SHORTHANDS = {
    "d": ((0x30, 0x39),),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "s": ((0x09, 0x0D), (0x20, 0x20)),
}


def _size(ranges) -> int:
    return sum(hi - lo + 1 for lo, hi in ranges)


@lru_cache(maxsize=None)
def shorthand_ranges(letter: str) -> tuple[tuple[int, int], ...]:
    """Code point ranges of Python's Unicode ``\\d``, ``\\w`` or ``\\s`` (no surrogates)."""
    runs = re.compile("\\" + letter + "+")
    out: list[tuple[int, int]] = []
    for lo, block in _all_characters():
        out.extend((lo + m.start(), lo + m.end() - 1) for m in runs.finditer(block))
    return tuple(merge_ranges(out))


@lru_cache(maxsize=1)
def _all_characters() -> tuple[tuple[int, str], ...]:
    """Every code point except surrogates, as (first code point, string) blocks."""
    return tuple((lo, "".join(map(chr, range(lo, hi + 1))))
                 for lo, hi in ((0, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, _MAX_CP)))


def _complement(ranges) -> list[tuple[int, int]]:
    """The code points (surrogates excluded) outside ``ranges``."""
    out = []
    nxt = 0
    for lo, hi in merge_ranges(list(ranges) + [_SURROGATES]):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX_CP:
        out.append((nxt, _MAX_CP))
    return out
