"""A byte-level NFA built by Thompson construction, and the full regex reader's build of one
from interegular's parse (python_regex_nfa.py builds the common patterns from Python's own
parse, more quickly).

Characters become UTF-8 byte-range sequences (see utf8.py), so the automaton reads bytes and a
token may end in the middle of a character. ``\\d \\w \\s`` are ASCII as interegular reads them;
``.`` is any character but newline unless the ``s`` flag is set; ``i`` adds simple case variants.
"""
from __future__ import annotations

from typing import Callable

from interegular import patterns as _p

from ..errors import LimitExceededError, RegexError
from ..lru import LRUCache
from .utf8 import chars_to_ranges, complement_ranges, normalize_ranges, utf8_sequences

_I = _p.REFlags.CASE_INSENSITIVE
_S = _p.REFlags.SINGLE_LINE
_SHARED_GROUP = 4096                # character groups at most this large are kept by content
_GROUP_RANGES = LRUCache(4096)      # (chars, negated, case-insensitive) -> code point ranges
_SEQUENCES = LRUCache(4096)         # code point ranges -> UTF-8 byte-range sequences


class ByteNFA:
    """Nodes with epsilon edges and byte-range edges; one start node and one final node."""

    def __init__(self, max_nodes: int) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.start = 0
        self.final = 0
        self._max_nodes = max_nodes
        self.range_cache: dict[tuple[int, int], list] = {}   # (id(char group), flags)

    def new_node(self) -> int:
        if len(self.eps) >= self._max_nodes:
            raise LimitExceededError(
                f"regex automaton exceeds {self._max_nodes} NFA nodes (raise max_states)")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    # fragments: (entry, exit) node pairs ---------------------------------------------------
    def char_set(self, ranges: list[tuple[int, int]]) -> tuple[int, int]:
        a, b = self.new_node(), self.new_node()
        key = tuple(ranges)
        seqs = _SEQUENCES.get(key)
        if seqs is None:
            seqs = _SEQUENCES.put(key, utf8_sequences(ranges))
        for seq in seqs:
            cur = a
            for k, (lo, hi) in enumerate(seq):
                nxt = b if k == len(seq) - 1 else self.new_node()
                self.edges[cur].append((lo, hi, nxt))
                cur = nxt
        return a, b

    def clone(self, first: int, end: int) -> int:
        """Copies nodes ``first..end-1`` (a fragment whose edges stay among them) after the
        last node; returns how far the copy's node ids are from the original's."""
        if len(self.eps) + (end - first) > self._max_nodes:
            raise LimitExceededError(
                f"regex automaton exceeds {self._max_nodes} NFA nodes (raise max_states)")
        off = len(self.eps) - first
        eps, edges = self.eps, self.edges
        for k in range(first, end):
            eps.append([d + off for d in eps[k]])
            edges.append([(lo, hi, d + off) for lo, hi, d in edges[k]])
        return off

    def empty(self) -> tuple[int, int]:
        a, b = self.new_node(), self.new_node()
        self.eps[a].append(b)
        return a, b

    def literal(self, data: bytes) -> tuple[int, int]:
        """The fragment reading exactly ``data`` (not empty)."""
        a = cur = self.new_node()
        for byte in data:
            nxt = self.new_node()
            self.edges[cur].append((byte, byte, nxt))
            cur = nxt
        return a, cur

    def sequence(self, fragments) -> tuple[int, int]:
        """The fragments of an iterable, one after another (the empty string if none)."""
        first = cur = None
        for x, y in fragments:
            if first is None:
                first = x
            else:
                self.eps[cur].append(x)
            cur = y
        return self.empty() if first is None else (first, cur)

    def union(self, fragments) -> tuple[int, int]:
        """Either of the fragments of an iterable."""
        a, b = self.new_node(), self.new_node()
        for x, y in fragments:
            self.eps[a].append(x)
            self.eps[y].append(b)
        return a, b

    def repeat(self, build: Callable[[], tuple[int, int]], lo: int,
               hi: int | None) -> tuple[int, int]:
        """``lo`` to ``hi`` (None: no bound) copies of the fragment ``build()`` makes. It is
        built once, then copied node for node (a counted repeat would otherwise read the same
        subtree once per copy)."""
        count = lo + (1 if hi is None else hi - lo)
        copies = []
        if count:
            first = len(self.eps)
            x, y = build()
            end = len(self.eps)
            copies.append((x, y))
            for _ in range(count - 1):
                off = self.clone(first, end)
                copies.append((x + off, y + off))
        a = cur = self.new_node()
        for x, y in copies[:lo]:
            self.eps[cur].append(x)
            cur = y
        if hi is None:
            x, y = copies[-1]
            loop = self.new_node()
            self.eps[cur].append(loop)
            self.eps[loop].append(x)
            self.eps[y].append(loop)
            return a, loop
        end = self.new_node()
        self.eps[cur].append(end)
        for x, y in copies[lo:]:
            self.eps[cur].append(x)
            self.eps[y].append(end)
            cur = y
        return a, end


def _char_group_ranges(group, flags) -> list[tuple[int, int]]:
    chars = set(group.chars)
    if flags & _I:
        for c in list(chars):
            for v in (c.lower(), c.upper(), c.swapcase()):
                if len(v) == 1:
                    chars.add(v)
    ranges = chars_to_ranges(chars)
    return complement_ranges(ranges) if group.negated else normalize_ranges(ranges)


def _build(nfa: ByteNFA, node, flags) -> tuple[int, int]:
    if isinstance(node, _p.Pattern):
        flags = _p._combine_flags(flags, node.added_flags, node.removed_flags)
        if len(node.options) == 1:
            return _build(nfa, node.options[0], flags)
        return nfa.union(_build(nfa, option, flags) for option in node.options)
    if isinstance(node, _p._Concatenation):
        return nfa.sequence(_build(nfa, part, flags) for part in node.parts)
    if isinstance(node, _p._Repeated):
        return nfa.repeat(lambda: _build(nfa, node.base, flags), node.min, node.max)
    if isinstance(node, _p._CharGroup):
        # repeats rebuild the same group many times: convert its (maybe huge) set once; a
        # small set is kept process-wide by content (JSON string classes recur in every schema)
        if len(node.chars) <= _SHARED_GROUP:
            key = (node.chars, node.negated, bool(flags & _I))
            ranges = _GROUP_RANGES.get(key)
            if ranges is None:
                ranges = _GROUP_RANGES.put(key, _char_group_ranges(node, flags))
            return nfa.char_set(ranges)
        key = (id(node), flags.value)
        ranges = nfa.range_cache.get(key)
        if ranges is None:
            ranges = nfa.range_cache[key] = _char_group_ranges(node, flags)
        return nfa.char_set(ranges)
    if node is _p._DOT:
        ranges = [(0, 0x10FFFF)] if flags & _S else complement_ranges([(10, 10)])
        return nfa.char_set(ranges)
    if node is _p._EMPTY:
        return nfa.empty()
    if isinstance(node, _p._NonCapturing):
        raise RegexError("unsupported regex construct: a lookaround", position=0)
    raise RegexError(f"unsupported regex construct: {type(node).__name__}", position=0)


def parse_to_nfa(text: str, max_nodes: int) -> ByteNFA:
    """Parse ``text`` (already checked, see regex_syntax) with interegular and build the NFA.

    Raises interegular's own exceptions; the caller maps them to RegexError with a position.
    """
    tree = _p.parse_pattern(text)
    nfa = ByteNFA(max_nodes)
    nfa.start, nfa.final = _build(nfa, tree, _p.REFlags(0))
    return nfa
