"""GBNF front-end: llama.cpp's grammar format becomes the grammar representation.

GBNF is scannerless: it describes text character by character. In the representation every
terminal therefore matches exactly one character (a character class, one literal character, or
any character); a string literal is a sequence of one-character terminals, and grouping,
``?``, ``*``, ``+`` and ``{m,n}`` become helper rules (right-recursive for unbounded repetition,
a chain of optional rules for bounded repetition, so sizes stay linear). Equal character sets
share one terminal. The whole text must match the start rule (``root``).

Syntax follows llama.cpp's parser: ``name ::= alternatives`` where a rule ends at a newline
unless the newline follows ``::=`` or ``|`` or sits inside parentheses; ``#`` comments; names of
letters, digits and dashes; escapes ``\\n \\t \\r \\\\ \\" \\[ \\] \\- \\xNN \\uNNNN
\\UNNNNNNNN``. Deliberate differences, each an error instead of llama.cpp's silent behaviour: a
rule defined twice, an empty character class ``[]`` / ``[^]``, repetition bounds above 2000,
groups nested deeper than 200, and token references ``<...>`` (which name token ids, not text).
"""
from __future__ import annotations

from ..errors import EmptyLanguageError, GrammarError, LimitExceededError
from ._analysis import check_size, clean_rules, empty_language_at
from ._grammar import Terminal
from ._regex_translate import escape_literal, merge_ranges, ranges_to_class
from ._token_refs import REF, parse_token_ref

MAX_REPETITION = 2000
MAX_NESTING = 200   # parenthesized groups inside one another
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}
_HEX = {"x": 2, "u": 4, "U": 8}
_MAX_CP = 0x10FFFF
ANY_CHAR = "ANY_CHAR"


def _is_word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "-")


def grammar_from_gbnf(cls, text: str, start: str = "root", *, max_rules: int = 100_000,
                      max_grammar_bytes: int = 4_000_000):
    """See ``Grammar.from_gbnf``."""
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be a str, not {type(text).__name__}")
    check_size(text, max_grammar_bytes, "the GBNF grammar text")
    parser = _GbnfParser(text, max_rules)
    parser.parse()
    if start not in parser.rules:
        raise GrammarError(f"the grammar has no rule named {start!r} (the start rule)")
    for name, pos in parser.references:
        if name not in parser.rules:
            line, col = parser.where(pos)
            raise GrammarError(f"undefined rule {name!r}", line=line, column=col)
    rules = {n: tuple(a) for n, a in parser.rules.items()}
    try:
        rules, terminals, _ = clean_rules(rules, parser.terminals, start)
    except EmptyLanguageError:
        raise empty_language_at(text, start, r"^[ \t]*({name})[ \t]*::=") from None
    return cls(start=start, rules=rules, terminals=terminals, source="gbnf", text=text)


class _GbnfParser:
    """Recursive-descent reader of GBNF text into rules over one-character terminals."""

    def __init__(self, text: str, max_rules: int = 100_000) -> None:
        self.s = text
        self.i = 0
        self.max_rules = max_rules
        self.alternatives = 0
        self.rules: dict[str, list[tuple[str, ...]]] = {}
        self.terminals: dict[str, Terminal] = {}
        self._by_set: dict[tuple, str] = {}
        self.references: list[tuple[str, int]] = []
        self._defined_at: dict[str, int] = {}
        self._helpers = 0
        self._classes = 0
        self._depth = 0

    # -- positions and errors -------------------------------------------------------------
    def where(self, pos: int) -> tuple[int, int]:
        line = self.s.count("\n", 0, pos) + 1
        col = pos - (self.s.rfind("\n", 0, pos) + 1) + 1
        return line, col

    def error(self, message: str, pos: int | None = None) -> GrammarError:
        line, col = self.where(self.i if pos is None else pos)
        return GrammarError(f"GBNF syntax error: {message}", line=line, column=col)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def space(self, newline_ok: bool) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t" or (newline_ok and c in "\r\n"):
                self.i += 1
            elif c == "#":
                while self.i < n and s[self.i] not in "\r\n":
                    self.i += 1
            else:
                break

    # -- grammar structure ----------------------------------------------------------------
    def parse(self) -> None:
        self.space(True)
        while self.i < len(self.s):
            self.rule()

    def name(self) -> str:
        start = self.i
        while _is_word(self.peek()):
            self.i += 1
        if self.i == start:
            if self.peek() == "|":
                raise self.error("expecting a rule name; to continue a rule's alternatives on "
                                 "the next line, end the line with '|' or use parentheses")
            raise self.error("expecting a rule name")
        return self.s[start:self.i]

    def rule(self) -> None:
        start = self.i
        name = self.name()
        self.space(False)
        if not self.s.startswith("::=", self.i):
            raise self.error("expecting '::='")
        if name in self._defined_at:
            line, _ = self.where(self._defined_at[name])
            raise self.error(f"rule {name!r} is already defined on line {line}", start)
        self._defined_at[name] = start
        self.i += 3
        self.space(True)
        self.define(name, self.alternates(name, nested=False), start)
        c = self.peek()
        if c == "\r":
            self.i += 2 if self.peek(1) == "\n" else 1
        elif c == "\n":
            self.i += 1
        elif c:
            raise self.error(f"expecting newline or end of rule, found {c!r}")
        self.space(True)

    def alternates(self, rule: str, nested: bool) -> list[tuple[str, ...]]:
        alts = [tuple(self.sequence(rule, nested))]
        while self.peek() == "|":
            self.i += 1
            self.space(True)
            alts.append(tuple(self.sequence(rule, nested)))
        return alts

    def sequence(self, rule: str, nested: bool) -> list[str]:
        seq: list[str] = []
        last: list[str] | None = None  # symbols of the previous item, for quantifiers
        while self.i < len(self.s):
            c = self.peek()
            item_start = self.i
            if c == '"':
                last = self.literal()
            elif c == "[":
                last = [self.char_class()]
            elif c == ".":
                self.i += 1
                last = [self.charset_terminal((True, ()))]
            elif _is_word(c):
                ref = self.name()
                self.references.append((ref, item_start))
                last = [ref]
            elif c == "(":
                self._depth += 1
                if self._depth > MAX_NESTING:
                    raise self.error(f"groups nested deeper than {MAX_NESTING}")
                self.i += 1
                self.space(True)
                helper = self.new_helper(rule)
                self.define(helper, self.alternates(rule, nested=True), item_start)
                self._depth -= 1
                if self.peek() != ")":
                    raise self.error("expecting ')'")
                self.i += 1
                last = [helper]
            elif c == "<" or (c == "!" and self.peek(1) == "<"):
                last = [self.token_terminal()]
            elif c in "*+?{":
                if not last:
                    raise self.error(f"expecting an item before {c!r}")
                lo, hi = self.quantifier(nested)
                del seq[len(seq) - len(last):]
                last = self.repeat(rule, last, lo, hi)
                seq.extend(last)
                self.space(nested)
                continue
            else:
                break
            seq.extend(last)
            self.space(nested)
        return seq

    # -- items ----------------------------------------------------------------------------
    def char(self) -> str:
        """One character of a literal or class, decoding escapes."""
        if self.i >= len(self.s):
            raise self.error("unexpected end of input")
        c = self.s[self.i]
        if c != "\\":
            self.i += 1
            return c
        e = self.peek(1)
        if e in _HEX:
            size = _HEX[e]
            digits = self.s[self.i + 2:self.i + 2 + size]
            if len(digits) != size or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error(f"expecting {size} hex digits after \\{e}")
            cp = int(digits, 16)
            if cp > _MAX_CP or 0xD800 <= cp <= 0xDFFF:
                raise self.error(f"\\{e}{digits} is not a Unicode scalar value")
            self.i += 2 + size
            return chr(cp)
        if e in _ESCAPES:
            self.i += 2
            return _ESCAPES[e]
        raise self.error(f"unknown escape \\{e}" if e else "unexpected end of input")

    def literal(self) -> list[str]:
        self.i += 1
        out = []
        while self.peek() != '"':
            if not self.peek():
                raise self.error("unterminated string literal")
            c = self.char()
            out.append(self.charset_terminal((False, ((ord(c), ord(c)),))))
        self.i += 1
        return out

    def char_class(self) -> str:
        start = self.i
        self.i += 1
        negate = False
        if self.peek() == "^":
            negate = True
            self.i += 1
        ranges = []
        while self.peek() != "]":
            if not self.peek():
                raise self.error("unterminated character class", start)
            item_start = self.i
            lo = self.char()
            hi = lo
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi = self.char()
                if ord(hi) < ord(lo):
                    raise self.error(f"character range {lo!r}-{hi!r} is reversed", item_start)
            ranges.append((ord(lo), ord(hi)))
        self.i += 1
        if not ranges:
            raise self.error("empty character class", start)
        return self.charset_terminal((negate, tuple(merge_ranges(ranges))))

    def quantifier(self, nested: bool) -> tuple[int, int | None]:
        c = self.peek()
        start = self.i
        self.i += 1
        if c == "*":
            return 0, None
        if c == "+":
            return 1, None
        if c == "?":
            return 0, 1
        self.space(nested)
        lo = self.integer()
        self.space(nested)
        if self.peek() == "}":
            self.i += 1
            return lo, lo
        if self.peek() != ",":
            raise self.error("expecting ',' or '}'")
        self.i += 1
        self.space(nested)
        hi = None
        if self.peek().isdigit():
            hi = self.integer()
            self.space(nested)
        if self.peek() != "}":
            raise self.error("expecting '}'")
        self.i += 1
        if hi is not None and hi < lo:
            raise self.error(f"repetition bounds {{{lo},{hi}}} are reversed", start)
        return lo, hi

    def integer(self) -> int:
        start = self.i
        while self.peek().isascii() and self.peek().isdigit():
            self.i += 1
        if start == self.i:
            raise self.error("expecting an integer")
        value = int(self.s[start:self.i])
        if value > MAX_REPETITION:
            raise self.error(f"repetition bound {value} exceeds the limit {MAX_REPETITION}",
                             start)
        return value

    def token_terminal(self) -> str:
        """A token reference (``<think>``, ``<[12]>``, ``!<think>``): a terminal of its own."""
        m = REF.match(self.s, self.i)
        if m is None:
            raise self.error("'<' starts a token reference (<name>, <[id]>, !<name>) but none "
                             "follows")
        line, col = self.where(self.i)
        ref = parse_token_ref(m.group(0), line, col)
        self.i = m.end()
        name = self._by_set.get(("tokens", ref))
        if name is None:
            name = f"TOKEN_{len(self._by_set)}"
            self._by_set[("tokens", ref)] = name
            self.terminals[name] = Terminal(name, ref.text, tokens=ref)
        return name

    # -- representation building ----------------------------------------------------------
    def new_helper(self, rule: str) -> str:
        self._helpers += 1
        return f"{rule}_{self._helpers}"

    def charset_terminal(self, key: tuple) -> str:
        """The terminal for a set of characters (negate, ranges), shared by equal sets."""
        name = self._by_set.get(key)
        if name is not None:
            return name
        negate, ranges = key
        if negate and not ranges:
            name, pattern = ANY_CHAR, "[\\s\\S]"
        elif not negate and len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            cp = ranges[0][0]
            name, pattern = f"CHAR_{cp:04X}", escape_literal(chr(cp))
        else:
            self._classes += 1
            name = f"CLASS_{self._classes}"
            pattern = ranges_to_class(list(ranges), negate)
        self._by_set[key] = name
        self.terminals[name] = Terminal(name, pattern)
        return name

    def define(self, name: str, alts: list[tuple[str, ...]], pos: int | None = None) -> None:
        """Add rule ``name``; LimitExceededError once the grammar has more than ``max_rules``
        alternatives (helper rules included)."""
        self.alternatives += len(alts)
        if self.alternatives > self.max_rules:
            line, _ = self.where(self.i if pos is None else pos)
            raise LimitExceededError(f"the GBNF grammar defines more than max_rules="
                                     f"{self.max_rules} alternatives by line {line} (helper "
                                     "rules of groups and repetitions included; pass a larger "
                                     "max_rules to Grammar.from_gbnf and to compile_grammar)")
        self.rules[name] = alts

    def repeat(self, rule: str, item: list[str], lo: int, hi: int | None) -> list[str]:
        """Symbols replacing ``item`` repeated lo..hi times (hi None: unbounded)."""
        if len(item) != 1:
            helper = self.new_helper(rule)
            self.define(helper, [tuple(item)])
            item = [helper]
        x = item[0]
        out = [x] * lo
        if hi is None:
            star = self.new_helper(rule)
            self.define(star, [(x, star), ()])
            out.append(star)
        elif hi > lo:
            prev = None
            for _ in range(hi - lo):
                opt = self.new_helper(rule)
                self.define(opt, [(x, prev) if prev else (x,), ()])
                prev = opt
            out.append(prev)
        return out
