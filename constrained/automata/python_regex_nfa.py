"""Thompson construction of a byte-level NFA straight from Python's own parse of a regex.

The quick reading of a pattern: Python's parser (what ``re.compile`` runs) both checks the
syntax and gives the tree, so nothing is rewritten or parsed twice. It takes the common
subset: literals, classes, ``.``, groups, alternatives, greedy and lazy repeats, the flags
``s``, ``m``, ``a`` and ``u``, and anchors where a full match makes them no-ops (at the start or
end of the pattern or of a top-level alternative). For anything else (case-insensitive or
verbose flags, lookarounds, backreferences, possessive repeats, atomic groups, anchors
elsewhere, invalid syntax) it returns None, and the full reader (regex_syntax.py with
byte_nfa.py) decides: it builds the same language, or reports the error at its position.

Meanings are the full reader's: ``\\d \\w \\s`` are ASCII, ``.`` is any character but
newline unless the ``s`` flag is set, and code points become UTF-8 byte-range sequences.
"""
from __future__ import annotations

import re
import warnings

try:
    import re._constants as C  # type: ignore[import-not-found]
    import re._parser as P  # type: ignore[import-not-found]
except ImportError:                     # Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

from ..lru import LRUCache
from .byte_nfa import ByteNFA
from .utf8 import (ASCII_DIGIT, ASCII_WORD, MAX_CODE_POINT, complement_ranges,
                   normalize_ranges)

_FULL_READER_FLAGS = re.IGNORECASE | re.VERBOSE | re.LOCALE
_SPACE = ((0x09, 0x0D), (0x20, 0x20))
_CATEGORIES = {C.CATEGORY_DIGIT: (ASCII_DIGIT, False), C.CATEGORY_NOT_DIGIT: (ASCII_DIGIT, True),
               C.CATEGORY_WORD: (ASCII_WORD, False), C.CATEGORY_NOT_WORD: (ASCII_WORD, True),
               C.CATEGORY_SPACE: (_SPACE, False), C.CATEGORY_NOT_SPACE: (_SPACE, True)}
_STARTS = (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
_ENDS = (C.AT_END, C.AT_END_STRING)
_SETS = LRUCache(4096)      # a class's items -> code point ranges (classes recur in schemas)
_EVERYTHING = [(0, MAX_CODE_POINT)]
_NOT_NEWLINE = complement_ranges([(10, 10)])


class _FullReader(Exception):
    """The pattern uses something only the full reader takes (or reports)."""


def python_regex_nfa(pattern: str, max_nodes: int) -> ByteNFA | None:
    """The NFA of the full matches of ``pattern``, or None when the full reader must read it.

    Raises LimitExceededError past ``max_nodes`` nodes, as the full reader does."""
    parsed = _parse(pattern)
    if parsed is None:
        return None
    items, dotall = parsed
    nfa = ByteNFA(max_nodes)
    try:
        nfa.start, nfa.final = _sequence(nfa, items, dotall)
    except (_FullReader, RecursionError):
        return None
    return nfa


def quick_readable(pattern: str) -> bool:
    """Whether ``python_regex_nfa`` reads ``pattern`` (a valid pattern with a regular
    meaning), found without building anything."""
    parsed = _parse(pattern)
    if parsed is None:
        return False
    try:
        _check(parsed[0])
    except (_FullReader, RecursionError):
        return False
    return True


def _parse(pattern: str) -> tuple[list, bool] | None:
    """The top-level items without the anchors a full match ignores, and whether ``.``
    matches a newline there; None when only the full reader can read the pattern."""
    try:
        with warnings.catch_warnings():     # e.g. "possible nested set": the meaning is today's
            warnings.simplefilter("ignore")
            tree = P.parse(pattern)
    except (re.error, OverflowError, RecursionError):
        return None
    if tree.state.flags & _FULL_READER_FLAGS:
        return None
    return _without_anchors(list(tree.data)), bool(tree.state.flags & re.DOTALL)


def _check(items) -> None:
    for op, av in items:
        if op is C.IN:
            _set_ranges(av)
        elif op is C.SUBPATTERN:
            if (av[1] | av[2]) & _FULL_READER_FLAGS:
                raise _FullReader
            _check(av[3].data)
        elif op is C.BRANCH:
            for alt in av[1]:
                _check(alt.data)
        elif op is C.MAX_REPEAT or op is C.MIN_REPEAT:
            _check(av[2].data)
        elif op is not C.LITERAL and op is not C.NOT_LITERAL and op is not C.ANY:
            raise _FullReader


def _trimmed(items: list) -> list:
    start, end = 0, len(items)
    while start < end and items[start][0] is C.AT and items[start][1] in _STARTS:
        start += 1
    while end > start and items[end - 1][0] is C.AT and items[end - 1][1] in _ENDS:
        end -= 1
    return items[start:end]


def _without_anchors(items: list) -> list:
    """The top-level items with the anchors a full match ignores removed (also at the ends
    of the alternatives of a top-level alternation). Any other anchor stays: the reading
    gives up when it meets one."""
    items = _trimmed(items)
    if len(items) == 1 and items[0][0] is C.BRANCH:
        alternatives = [P.SubPattern(None, _trimmed(list(alt.data))) for alt in items[0][1][1]]
        items = [(C.BRANCH, (None, alternatives))]
    return items


def _sequence(nfa: ByteNFA, items, dotall: bool) -> tuple[int, int]:
    return nfa.sequence(_item(nfa, op, av, dotall) for op, av in items)


def _item(nfa: ByteNFA, op, av, dotall: bool) -> tuple[int, int]:
    if op is C.LITERAL:
        if 0xD800 <= av <= 0xDFFF:      # no UTF-8 encoding: matches nothing
            return nfa.new_node(), nfa.new_node()
        return nfa.literal(chr(av).encode())
    if op is C.IN:
        return nfa.char_set(_set_ranges(av))
    if op is C.NOT_LITERAL:
        return nfa.char_set(complement_ranges([(av, av)]))
    if op is C.ANY:
        return nfa.char_set(_EVERYTHING if dotall else _NOT_NEWLINE)
    if op is C.SUBPATTERN:
        _group, on, off, sub = av
        if (on | off) & _FULL_READER_FLAGS:
            raise _FullReader
        return _sequence(nfa, sub.data, (dotall or bool(on & re.DOTALL))
                         and not off & re.DOTALL)
    if op is C.BRANCH:
        return nfa.union(_sequence(nfa, alt.data, dotall) for alt in av[1])
    if op is C.MAX_REPEAT or op is C.MIN_REPEAT:
        lo, hi, sub = av
        return nfa.repeat(lambda: _sequence(nfa, sub.data, dotall), lo,
                          None if hi is C.MAXREPEAT or hi >= C.MAXREPEAT else hi)
    raise _FullReader


def _set_ranges(items) -> list[tuple[int, int]]:
    key = tuple(items)
    ranges = _SETS.get(key)
    if ranges is None:
        ranges = _SETS.put(key, _class_ranges(items))
    return ranges


def _class_ranges(items) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            ranges.append((av, av))
        elif op is C.RANGE:
            ranges.append(av)
        elif op is C.CATEGORY and av in _CATEGORIES:
            base, negated = _CATEGORIES[av]
            ranges.extend(complement_ranges(base, surrogates=True) if negated else base)
        else:
            raise _FullReader
    return complement_ranges(ranges) if negate else normalize_ranges(ranges)
