"""Which tokens of a vocabulary could write (part of) a given JSON string, found by lookups.

The distinct-strings check must look at every token that could complete a key an object
already has (an item its array of distinct strings has), or leave a key's text at a prefix
every completion of which is such a key. Those tokens spell a piece of an existing key's
text, so they are found by lookups of that key's prefixes, never by a pass over
the vocabulary (items are looked up the same way; "key" below stands for both):

- the token trie: tokens spelling a prefix of a key's text byte for byte (one walk down the
  trie, ``_walks.exact_tokens``, finds them for every prefix);
- ``head_close`` / ``head_open``: tokens with a quote or backslash read from inside a string,
  by the decoded text they add to the current key, closing it or not;
- ``tail``: tokens that open a string and end inside it, by the decoded text after the opening
  quote, for both starting contexts (inside or outside a string);
- ``inner``: strings opened and closed inside a token, by their decoded text;
- ``multi``: tokens that may write one key twice (two equal strings, or a string ending like
  the text that closes the current key);
- ``crossers_in`` / ``crossers_out``: tokens that close a key and then end inside a key
  they open (``crossers_in``: the key being read, then any text; ``crossers_out``: a key
  written whole in the token, then a prefix of it, perhaps in the same object).

The tables after ``head_close`` / ``head_open`` are kept for each way a token may be read
(``CONTEXTS``): from inside a string, from outside, and right after a backslash inside a string.

Decoding assumes a token starts at a character boundary; a key whose text so far ends inside
an escape is checked token by token instead (rare).
"""
from __future__ import annotations

import json
import weakref
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..automata.disk_cache import cache_name, load_arrays, save_arrays
from ..lru import LRUCache
from ..vocabulary import Vocabulary
from ._walks import exact_tokens
from ..gc_untrack import untrack_all
from .json_scan import decoded_prefix, escape_begins
from .token_tables import preorder_trie


class KeyIndex:
    """Lookup tables of one vocabulary (built once, on first use; see ``key_index``)."""

    def __init__(self, vocab: Vocabulary, tables: dict | None = None,
                 disk_cache: bool = True) -> None:
        trie = preorder_trie(vocab, disk_cache)
        self._trie_arrays = (trie.node_byte, trie.skip, trie.lo, trie.own, trie.token_ids)
        # token lookups kept per key (per key set) and per rest of a key
        self._per_key: dict = {}          # (context, opener) -> {key: ids}
        self._per_key_set = LRUCache(4096)
        self._per_question = LRUCache(4096)
        self._per_rest = LRUCache(100_000)
        if tables is not None:
            self._set(tables)
            return
        self._build(vocab)

    def _build(self, vocab: Vocabulary) -> None:
        head_open, head_close, head_partial, tail, partial_tail, inner = \
            (defaultdict(list) for _ in range(6))
        multi: dict = {ctx: [] for ctx in CONTEXTS}
        crossers_out: dict = {ctx: [] for ctx in CONTEXTS}
        crossers_in: dict = {True: [], ESCAPED: []}
        tokens = vocab.token_bytes
        matrix = vocab.byte_matrix[:len(tokens)]
        has_special = ((matrix == 0x22) | (matrix == 0x5C)).any(axis=1)
        special = np.flatnonzero(has_special & vocab.text_token_mask[:len(tokens)]).tolist()
        for tid in special:
            for inside in CONTEXTS:
                tb = tokens[tid][1:] if inside is ESCAPED else tokens[tid]
                segments = _segments(tb, inside is not False)
                if not segments:
                    continue
                keys = [seg.text for seg in segments
                        if seg.opener in ("sep", "start") and seg.closed and seg.keyish]
                if len(keys) != len(set(keys)):
                    multi[inside].append(tid)     # two equal keys in one token
                for seg in segments:
                    if not seg.opener:
                        if inside is ESCAPED:
                            continue               # the current string: checked otherwise
                        if seg.closed and seg.keyish:
                            head_close[seg.text].append(tid)
                        elif seg.partial:
                            head_partial[(seg.text, seg.partial)].append(tid)
                        elif not seg.closed:
                            head_open[seg.text].append(tid)
                    elif seg.opener == "value":
                        continue
                    elif seg.closed:
                        if seg.keyish:
                            inner[(inside, seg.opener, seg.text)].append(tid)
                    elif seg.partial:
                        partial_tail[(inside, seg.opener, seg.text, seg.partial)].append(tid)
                    else:
                        tail[(inside, seg.opener, seg.text)].append(tid)
                first, last = segments[0], segments[-1]
                opens_key = (len(segments) > 1 and last.opener in ("sep", "start")
                             and not last.closed and (last.text or last.partial))
                if inside is not False and not first.opener and first.closed and first.keyish:
                    if any(k.endswith(first.text) for k in keys):
                        multi[inside].append(tid)  # may write the current key twice
                    if opens_key:
                        crossers_in[inside].append(tid)
                if opens_key and any(k.startswith(last.text) for k in keys):
                    crossers_out[inside].append(tid)
        unique = lambda table: {k: sorted(set(v)) for k, v in table.items()}  # noqa: E731
        self._set({"head_open": head_open, "head_close": head_close,
                   "head_partial": head_partial, "tail": tail, "partial_tail": partial_tail,
                   "inner": inner, "multi": unique(multi), "crossers_out": unique(crossers_out),
                   "crossers_in": unique(crossers_in)})

    def _set(self, tables: dict) -> None:
        """Installs the tables (lists of ids by key) as id arrays."""
        for name in _TABLES:
            setattr(self, name, _freeze(tables[name]))
        # the same by text: (unfinished escape, ids) pairs (a text has few)
        self._head_partials = _by_text(self.head_partial)
        self._partial_tails = _by_text(self.partial_tail)
        # the tails by way of opening, and every prefix of a text the head or tail tables
        # hold: a lookup along a key's prefixes stops at the first prefix of none
        self._tails_by: dict = defaultdict(dict)
        self._partial_tails_by: dict = defaultdict(dict)
        self._tail_prefixes: dict = defaultdict(set)
        for table, by in ((self.tail, self._tails_by), (self._partial_tails,
                                                         self._partial_tails_by)):
            for (inside, opener, text), found in table.items():
                by[(inside, opener)][text] = found
                self._tail_prefixes[(inside, opener)].update(_prefixes(text))
        self._head_prefixes = set()
        for text in (*self.head_open, *self._head_partials):
            self._head_prefixes.update(_prefixes(text))
        # per context: what each token ``new_keys`` may list after a separator writes of a
        # key (None: it must always be checked), those tokens as one id array, and those
        # always checked
        self.sep_texts: dict = {}
        self.sep_any: dict = {}
        self.sep_always: dict = {}
        for ctx in CONTEXTS:
            texts: dict[int, list] = defaultdict(list)
            for tid in np.concatenate([self.multi[ctx], self.crossers_out[ctx]]).tolist():
                texts[tid].append(None)
            for table, whole in ((self.inner, True), (self.tail, False),
                                 (self.partial_tail, False)):
                for (c, opener, text, *_), ids in table.items():
                    if c == ctx and opener == "sep" and (text or table is not self.tail):
                        for tid in ids.tolist():
                            texts[tid].append((text, whole))
            self.sep_texts[ctx] = {t: tuple(v) for t, v in texts.items()}
            self.sep_any[ctx] = np.array(sorted(texts), dtype=np.int32)
            self.sep_always[ctx] = frozenset(t for t, v in texts.items() if None in v)

    def tables(self) -> dict:
        """The tables as plain data (keys and id lists), what ``KeyIndex(vocab, tables)``
        takes."""
        return {name: {k: v.tolist() for k, v in getattr(self, name).items()}
                for name in _TABLES}

    def current_key(self, used_rest: list[bytes]) -> list:
        """Id arrays of tokens that, read inside a key, may spell a prefix of one of
        ``used_rest`` (the rest of each existing key after the text written so far) or
        complete it."""
        out = []
        per_rest = self._per_rest
        recent = per_rest.recent
        for rest in used_rest:
            found = recent.get(rest)
            if found is None:
                found = per_rest.get(rest)
                if found is None:
                    found = per_rest.put(rest, self._current_key(rest))
            if len(found):
                out.append(found)
        return out

    def _current_key(self, rest: bytes) -> np.ndarray:
        out = []
        ids = self.head_close.get(rest)
        if ids is not None:
            out.append(ids)
        prefixes = self._head_prefixes
        for i in range(len(rest) + 1):
            piece = rest[:i]
            if i and piece not in prefixes:
                break
            ids = self.head_open.get(piece)
            if ids is not None:
                out.append(ids)
            partials = self._head_partials.get(piece)
            if partials is not None:
                out += [ids for esc, ids in partials if escape_begins(esc, rest[i:])]
        for spelled in exact_tokens(*self._trie_arrays, rest):
            if spelled:
                out.append(np.frombuffer(spelled, dtype=np.int32))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int32)

    def new_keys(self, inside, used_sets, used_here: frozenset | None) -> list:
        """Id arrays of tokens that may open a key and end at a prefix of an existing key,
        or write an existing key whole, read in context ``inside`` (CONTEXTS): after a
        separator in the token, the keys of every open container (``used_sets``, one set
        each) count; right at the token's start (when a key may open there) those of the
        current object, ``used_here``. A token may be in several arrays; empty arrays are
        left out. Kept per question: every matcher of every grammar asks the same ones for
        the same keys written."""
        key = (inside, tuple(used_sets), used_here)
        got = self._per_question.get(key)
        if got is None:
            got = tuple(a for a in self._new_keys(inside, used_sets, used_here) if len(a))
            untrack_all(key)
            got = self._per_question.put(key, got)
        return got

    def _new_keys(self, inside, used_sets, used_here: frozenset | None) -> list:
        found: dict = {}        # each array once: sets share keys, keys share arrays
        for keys in used_sets:
            if keys:
                for ids in self._new_key_set(inside, "sep", keys):
                    found[id(ids)] = ids
        if used_here:
            for ids in self._new_key_set(inside, "start", used_here):
                found[id(ids)] = ids
        return [self.multi[inside], self.crossers_out[inside], *found.values()]

    def _new_key_set(self, inside, opener: str, keys: frozenset) -> tuple:
        """The non-empty arrays of ``_new_key`` for the keys of ``keys`` (kept per key set: the
        same objects' keys are asked for at every step until a key is added)."""
        arrays = self._per_key_set.get((inside, opener, keys))
        if arrays is None:
            per_key = self._per_key.get((inside, opener))
            if per_key is None or len(per_key) > _PER_KEY:
                per_key = self._per_key[(inside, opener)] = {}
            parts: dict = {}       # the tables' own arrays, each once (keys share many)
            for key in keys:
                one = per_key.get(key)
                if one is None:
                    one = per_key[key] = self._new_key(inside, opener, key)
                for ids in one:
                    parts[id(ids)] = ids
            key = (inside, opener, keys)
            untrack_all(key)
            arrays = self._per_key_set.put(key, tuple(parts.values()))
        return arrays

    def _new_key(self, inside: bool, opener: str, key: bytes) -> tuple:
        """The tables' id arrays of the tokens that may open ``key`` (see new_keys): arrays
        of the tables themselves, not copies (a token may be in several)."""
        out = []
        ids = self.inner.get((inside, opener, key))
        if ids is not None:
            out.append(ids)
        way = (inside, opener)
        tails, partial_tails = self._tails_by.get(way, {}), self._partial_tails_by.get(way, {})
        prefixes = self._tail_prefixes.get(way, ())
        for i in range(len(key) + 1):
            piece = key[:i]
            if i and piece not in prefixes:
                break
            partials = partial_tails.get(piece)
            if partials is not None:
                out += [ids for esc, ids in partials if escape_begins(esc, key[i:])]
            if i:
                ids = tails.get(piece)
                if ids is not None:
                    out.append(ids)
        return tuple(a for a in out if len(a))


_PER_KEY = 50_000      # keys whose tokens are kept per (context, opener); then started over
ESCAPED = "escaped"
# how a token is read: inside a string (True), outside (False), or right after a backslash
# inside a string (its first byte is the escaped character)
CONTEXTS = (True, False, ESCAPED)


def _by_text(table: dict) -> dict:
    """A table keyed by (*text, unfinished escape) regrouped by text."""
    out: dict = defaultdict(list)
    for (*text, esc), ids in table.items():
        out[text[0] if len(text) == 1 else tuple(text)].append((esc, ids))
    return {k: tuple(v) for k, v in out.items()}


def _prefixes(text: bytes) -> list[bytes]:
    """The non-empty prefixes of ``text`` (itself included)."""
    return [text[:i] for i in range(1, len(text) + 1)]


def _freeze(table: dict) -> dict:
    return {k: np.array(v, dtype=np.int32) for k, v in table.items()}


@dataclass(frozen=True)
class _Segment:
    """A string piece of a token: decoded text, what precedes its opening quote in the token
    (None: the token started inside it; "start": only whitespace; "sep": a comma or an
    opening brace or bracket, so it may be a key or an array's item; "value": anything else,
    so it is neither), whether it closes in the token, whether what follows may be a key's colon or
    an item's comma or bracket, and the unfinished escape the token ends inside (b"" when
    none)."""

    text: bytes
    opener: str | None
    closed: bool
    keyish: bool
    partial: bytes


_WS = b" \t\r\n"


def _segments(tb: bytes, inside: bool) -> list[_Segment] | None:
    """The string pieces of a token read from inside (or outside) a string; None when a
    piece is no valid string text."""
    out = []
    opener = None
    raw = bytearray()
    i, n = 0, len(tb)
    try:
        while i < n:
            c = tb[i]
            if not inside:
                if c == 0x22:
                    before = tb[:i].rstrip(_WS)
                    opener = ("start" if not before else
                              "sep" if before[-1:] in (b",", b"{", b"[") else "value")
                    inside, raw = True, bytearray()
                i += 1
                continue
            if c == 0x5C:
                raw += tb[i:i + 2]
                i += 2
                continue
            if c == 0x22:
                after = tb[i + 1:].lstrip(_WS)
                out.append(_Segment(decoded_prefix(bytes(raw))[0], opener, True,
                                    not after or after[:1] in (b":", b",", b"]"), b""))
                inside = False
                i += 1
                continue
            raw.append(c)
            i += 1
        if inside:
            dec, partial = decoded_prefix(bytes(raw))
            out.append(_Segment(dec, opener, False, True, partial))
    except (ValueError, UnicodeError):
        return None
    return out


_TABLES = ("head_open", "head_close", "head_partial", "tail", "partial_tail", "inner", "multi",
           "crossers_out", "crossers_in")
_INDEXES: "weakref.WeakKeyDictionary[Vocabulary, KeyIndex]" = weakref.WeakKeyDictionary()


def key_index(vocab: Vocabulary, disk_cache: bool = True) -> KeyIndex:
    """The vocabulary's index (built on first use, kept while the vocabulary lives, and in the
    disk cache: a new process reads its tables instead of scanning the vocabulary)."""
    index = _INDEXES.get(vocab)
    if index is None:
        name = cache_name("keyindex", "v1", vocab.hash)
        tables = _load_tables(name) if disk_cache else None
        if tables is not None:
            index = KeyIndex(vocab, tables, disk_cache)
        else:
            index = KeyIndex(vocab, disk_cache=disk_cache)
            if disk_cache:
                _save_tables(name, index.tables())
        index = _INDEXES.setdefault(vocab, index)
    return index


# keys as JSON: bytes as latin-1 text, a context (True, False, "escaped") as itself
def _key_out(key):
    if isinstance(key, bytes):
        return {"b": key.decode("latin-1")}
    if isinstance(key, tuple):
        return [_key_out(k) for k in key]
    return key


def _key_in(key):
    if isinstance(key, dict):
        return key["b"].encode("latin-1")
    if isinstance(key, list):
        return tuple(_key_in(k) for k in key)
    return key


def _save_tables(name: str, tables: dict) -> None:
    text = json.dumps({t: [[_key_out(k), ids] for k, ids in table.items()]
                       for t, table in tables.items()})
    save_arrays(name, {"json": np.frombuffer(text.encode("utf-8"), dtype=np.uint8)})


def _load_tables(name: str) -> dict | None:
    data = load_arrays(name)
    if data is None or "json" not in data:
        return None
    try:
        raw = json.loads(data["json"].tobytes().decode("utf-8"))
        tables = {t: {_key_in(k): ids for k, ids in raw[t]} for t in _TABLES}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return tables
