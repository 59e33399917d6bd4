"""Checks a regex against Python ``re`` syntax and rewrites it into what interegular parses.

Python ``re`` decides what is valid syntax. Constructs that have no regular meaning (backreferences,
lookarounds, atomic groups, possessive quantifiers, word boundaries, conditionals) are rejected
with the position where they start. Anchors are full-match no-ops at the start (``^``, ``\\A``) or
end (``$``, ``\\Z``) of a top-level alternative and are removed; anywhere else they are rejected.
``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\N{name}`` escapes are replaced by the character they name.
"""
from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass

from ..errors import RegexError

_META = set("\\.^$*+?{}[]|()")
_FLAG_GROUP = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]+))?([:)])")
_QUANTIFIER = re.compile(r"\{\d*(,\d*)?\}")
_QUANTIFIER_END = re.compile(r"\{\d*(,\d*)?\}$")
_CLASS_META = set("\\]-^[")


@dataclass(frozen=True)
class RewrittenPattern:
    """A pattern interegular can parse, with the original position of every character."""

    text: str
    positions: tuple[int, ...]

    def original_position(self, index: int) -> int:
        """Position in the user's pattern of character ``index`` of ``text``."""
        if not self.positions:
            return 0
        return self.positions[min(max(index, 0), len(self.positions) - 1)]


def _escape_literal(ch: str, in_class: bool) -> str:
    if ch in (_CLASS_META if in_class else _META):
        return "\\" + ch
    return ch


def _unicode_escape(pattern: str, i: int) -> tuple[str, int] | None:
    """(character, length) for a \\u, \\U or \\N escape starting at ``i`` (the backslash)."""
    kind = pattern[i + 1]
    if kind == "u":
        return chr(int(pattern[i + 2:i + 6], 16)), 6
    if kind == "U":
        return chr(int(pattern[i + 2:i + 10], 16)), 10
    end = pattern.index("}", i)
    return unicodedata.lookup(pattern[i + 3:end]), end + 1 - i


def _unsupported(what: str, pos: int) -> RegexError:
    return RegexError(f"unsupported regex construct: {what}", position=pos)


def check_and_rewrite(pattern: str) -> RewrittenPattern:
    """Validate ``pattern`` (Python ``re`` syntax) and rewrite it for interegular.

    Raises RegexError naming the position of a syntax error or an unsupported construct.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as exc:
        raise RegexError(f"invalid regex: {exc.msg}", position=exc.pos) from None
    except (OverflowError, RecursionError) as exc:
        raise RegexError(f"invalid regex: {exc}", position=0) from None

    out: list[str] = []
    pos: list[int] = []
    branch_start = True      # nothing but anchors seen since the start of a top-level branch
    depth = 0
    pending_end: list[tuple[int, int]] = []   # (index in out, source pos) of end anchors
    n = len(pattern)
    i = 0

    def emit(text: str, at: int) -> None:
        for ch in text:
            out.append(ch)
            pos.append(at)

    def check_pending_end(at: int) -> None:
        if pending_end:
            raise _unsupported("an end anchor ('$' or '\\Z') before more pattern text",
                               pending_end[0][1])

    while i < n:
        c = pattern[i]
        if c == "\\":
            d = pattern[i + 1]
            if d == "0":
                m = re.match(r"0[0-7]{0,2}", pattern[i + 1:i + 4])
                check_pending_end(i)
                branch_start = False
                emit(_escape_literal(chr(int(m.group(0), 8)), False), i)
                i += 1 + len(m.group(0))
                continue
            if d in "123456789":
                if re.match(r"[0-7]{3}", pattern[i + 1:i + 4]) is None:
                    raise _unsupported("a backreference", i)
                check_pending_end(i)
                branch_start = False
                emit(_escape_literal(chr(int(pattern[i + 1:i + 4], 8)), False), i)
                i += 4
                continue
            if d in "bB":
                raise _unsupported(f"the word boundary \\{d}", i)
            if d == "A":
                if not branch_start:
                    raise _unsupported("'\\A' not at the start of the pattern", i)
                i += 2
                continue
            if d in "Zz":
                if d == "z":
                    raise RegexError("invalid regex: bad escape \\z", position=i)
                pending_end.append((len(out), i))
                i += 2
                continue
            check_pending_end(i)
            branch_start = False
            if d in "uUN":
                ch, length = _unicode_escape(pattern, i)
                emit(_escape_literal(ch, False), i)
                i += length
                continue
            emit(pattern[i:i + 2], i)
            i += 2
            continue
        if c == "[":
            check_pending_end(i)
            branch_start = False
            j = i + 1
            emit("[", i)
            if j < n and pattern[j] == "^":
                emit("^", j)
                j += 1
            first = True
            while j < n and (pattern[j] != "]" or first):
                if pattern[j] == "\\":
                    d = pattern[j + 1]
                    octal = re.match(r"[0-7]{1,3}", pattern[j + 1:j + 4])
                    if octal is not None:
                        emit(_escape_literal(chr(int(octal.group(0), 8)), True), j)
                        j += 1 + len(octal.group(0))
                    elif d in "uUN":
                        ch, length = _unicode_escape(pattern, j)
                        emit(_escape_literal(ch, True), j)
                        j += length
                    else:
                        emit(pattern[j:j + 2], j)
                        j += 2
                elif pattern[j] == "]" and first:
                    emit("\\]", j)
                    j += 1
                elif pattern[j] == "[":
                    emit("\\[", j)
                    j += 1
                else:
                    emit(pattern[j], j)
                    j += 1
                first = False
            emit("]", j)
            i = j + 1
            continue
        if c == "(":
            check_pending_end(i)
            branch_start = False
            if pattern.startswith("(?", i):
                rest = pattern[i + 2:i + 4]
                if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
                    raise _unsupported("a lookaround", i)
                if rest[:2] == "P=":
                    raise _unsupported("a named backreference", i)
                if rest[:1] == ">":
                    raise _unsupported("an atomic group", i)
                if rest[:1] == "(":
                    raise _unsupported("a conditional group", i)
                if rest[:1] == "#":
                    j = pattern.index(")", i)
                    i = j + 1
                    continue
                flags = _FLAG_GROUP.match(pattern, i)
                if flags is not None:
                    letters = flags.group(1) + (flags.group(2) or "")
                    for bad in "xL":
                        if bad in letters:
                            raise _unsupported(f"the flag '{bad}'", i)
                    # ASCII classes are the engine's meaning anyway: 'a' and 'u' change nothing
                    on = flags.group(1).replace("a", "").replace("u", "")
                    off = flags.group(2) or ""
                    end = flags.group(3)
                    if end == ")" and not on and not off:
                        i = flags.end()
                        continue
                    if end == ":":
                        depth += 1
                    emit("(?" + on + (off and "-" + off) + end, i)
                    i = flags.end()
                    continue
            depth += 1
            emit("(", i)
            i += 1
            continue
        if c == ")":
            depth -= 1
            emit(")", i)
            i += 1
            continue
        if c in "*+?}" and i + 1 < n and pattern[i + 1] == "+" and i > 0:
            closes_quantifier = c != "}" or _QUANTIFIER_END.search(pattern, 0, i + 1)
            if (c != "?" or pattern[i - 1] != "(") and closes_quantifier:
                raise _unsupported("a possessive quantifier", i)
        if c == "|" and depth == 0:
            pending_end.clear()
            branch_start = True
            emit("|", i)
            i += 1
            continue
        if c == "^":
            if not branch_start or depth:
                raise _unsupported("'^' not at the start of the pattern", i)
            i += 1
            continue
        if c == "$":
            if depth:
                raise _unsupported("'$' not at the end of the pattern", i)
            pending_end.append((len(out), i))
            i += 1
            continue
        if c == "{" and _QUANTIFIER.match(pattern, i) is None:
            c = "\\{"   # Python reads a brace that starts no quantifier as a literal
        if c[-1] in "*+?{" and pending_end:
            raise _unsupported("a quantified anchor", pending_end[0][1])
        check_pending_end(i)
        branch_start = False
        emit(c, i)
        i += 1
    return RewrittenPattern("".join(out), tuple(pos))
