"""A structural reader of JSON text for the distinct-strings check: which container a byte
belongs to, whether it lies inside a key (or an item of an array whose items must be distinct
strings), and the keys (items) each open container already has.

The reader trusts the grammar for well-formedness (it only runs on texts the grammar accepts)
and keeps nothing but what the check needs. A state is an immutable tuple, so matchers keep one
per step and roll back by truncation:

``(frames, phase, key_raw)``: ``frames`` holds one entry per open container, the keys of an
object (a frozenset of decoded keys as UTF-8 bytes), the items of an array of distinct strings
(``Items``, a frozenset too) or None for any other array; ``phase`` says what comes next in the
innermost one; ``key_raw`` is the raw text of the key (or distinct item) being read (phase KEY).
Strings compare by their decoded value (``"a"`` and ``"\\u0061"`` are the same key).
"""
from __future__ import annotations

import json

from ..gc_untrack import untrack_all

# phases
VALUE, AFTER, KEY_OPEN, KEY_NEXT, KEY, KEY_ESC, COLON, STRING, STRING_ESC = range(9)
IN_STRING = frozenset((KEY, KEY_ESC, STRING, STRING_ESC))

INITIAL = ((), VALUE, b"")


class Items(frozenset):
    """The items so far of an array whose items must be distinct strings."""


DUPLICATE = None

_WS = frozenset(b" \t\r\n")


def decode_key(raw: bytes) -> bytes:
    """The decoded value of a complete key's raw text (without quotes), as UTF-8 bytes."""
    if b"\\" not in raw:
        return raw
    return json.loads(b'"' + raw + b'"').encode("utf-8", "surrogatepass")


_SHORT = {ord('"'): b'"', 0x5C: b"\\", ord("/"): b"/", ord("b"): b"\b", ord("f"): b"\f",
          ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}


def decoded_prefix(raw: bytes) -> tuple[bytes, bytes]:
    """The decoded bytes of a key's raw text read so far, and the raw text of an escape it
    ends inside (``\\u00``, or a high surrogate a low one may still follow; b"" when none):
    the decoded bytes are those before that escape. Raw bytes of an unfinished UTF-8
    character are kept as they are (they compare as the start of the character's encoding)."""
    if b"\\" not in raw:
        return raw, b""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        start = i
        if i + 1 >= n:
            return bytes(out), raw[start:]
        if raw[i + 1] != 0x75:                          # a short escape
            out += _SHORT.get(raw[i + 1], b"")
            i += 2
            continue
        if i + 6 > n:
            return bytes(out), raw[start:]
        cp = int(raw[i + 2:i + 6], 16)
        i += 6
        if 0xD800 <= cp < 0xDC00:
            if i == n or (raw[i] == 0x5C and (i + 1 == n or (raw[i + 1] == 0x75 and i + 6 > n))):
                return bytes(out), raw[start:]
            if raw[i:i + 2] == b"\\u":
                low = int(raw[i + 2:i + 6], 16)
                if 0xDC00 <= low < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
        out += chr(cp).encode("utf-8", "surrogatepass")
    return bytes(out), b""


def escape_begins(esc: bytes, rest: bytes) -> bool:
    """Whether the unfinished escape ``esc`` (a backslash, ``\\u``, hex digits in either case,
    a high surrogate awaiting its low one) may begin a spelling of the first character of the
    decoded bytes ``rest``; never when ``rest`` starts inside a character."""
    try:
        ch = rest[:4].decode("utf-8", "surrogatepass")[:1]
    except UnicodeDecodeError as e:
        ch = rest[:e.start].decode("utf-8", "surrogatepass")[:1]
    if not ch or esc[:1] != b"\\":
        return False
    if len(esc) == 1 or esc == b"\\u":
        return True
    if esc[1:2] != b"u":
        return False
    cp, tail = ord(ch), esc[2:]
    if cp < 0x10000:            # \\uXXXX unfinished, or a whole high surrogate
        code = b"%04x" % cp
        digits = tail.lower()
        return (len(digits) <= 3 and code.startswith(digits)) or (
            digits == code and 0xD800 <= cp < 0xDC00)
    high = b"%04x" % (0xD800 + ((cp - 0x10000) >> 10))
    low = b"%04x" % (0xDC00 + ((cp - 0x10000) & 0x3FF))
    if len(tail) <= 3:
        return high.startswith(tail.lower())
    if tail[:4].lower() != high:
        return False
    after = tail[4:]            # then the low surrogate's escape, unfinished
    return after in (b"", b"\\", b"\\u") or (
        after[:2] == b"\\u" and len(after) <= 5 and low.startswith(after[2:].lower()))


def scan(state: tuple, data: bytes, distinct_arrays=()) -> tuple | None:
    """The state after ``data``, or DUPLICATE (None) when ``data`` completes a key its object
    (an item its array of distinct strings) already has. ``distinct_arrays``: the offsets in
    ``data`` of the brackets that open arrays of distinct strings."""
    frames, phase, key_raw = state
    before = frames
    i, n = 0, len(data)
    while i < n:
        if phase == STRING:
            j = _next_special(data, i)
            if j < 0:
                return _state(frames, phase, key_raw, before)
            i = j
            if data[i] == 0x22:
                phase = AFTER
            else:
                phase = STRING_ESC
            i += 1
            continue
        if phase == KEY:
            j = _next_special(data, i)
            if j < 0:
                return _state(frames, phase, key_raw + data[i:], before)
            key_raw += data[i:j]
            i = j
            if data[i] == 0x5C:
                key_raw += b"\\"
                phase = KEY_ESC
                i += 1
                continue
            key = decode_key(key_raw)
            used = frames[-1]
            if key in used:
                return DUPLICATE
            if type(used) is Items:
                frames = frames[:-1] + (Items(used | {key}),)
                phase = AFTER
            else:
                frames = frames[:-1] + (used | {key},)
                phase = COLON
            key_raw = b""
            i += 1
            continue
        c = data[i]
        i += 1
        if phase == STRING_ESC:
            phase = STRING                      # the char after the backslash never closes
        elif phase == KEY_ESC:
            key_raw += bytes((c,))
            phase = KEY
        elif c in _WS:
            continue
        elif phase == KEY_OPEN or phase == KEY_NEXT:
            if c == 0x22:
                phase, key_raw = KEY, b""
            elif c == 0x7D:                      # "}" right after "{"
                frames, phase = frames[:-1], AFTER
        elif phase == COLON:
            if c == 0x3A:
                phase = VALUE
        elif phase == VALUE:
            if c == 0x22:
                if frames and type(frames[-1]) is Items:
                    phase, key_raw = KEY, b""
                else:
                    phase = STRING
            elif c == 0x7B:
                frames, phase = frames + (frozenset(),), KEY_OPEN
            elif c == 0x5B:
                frames = frames + (Items() if i - 1 in distinct_arrays else None,)
                phase = VALUE
            elif c == 0x5D:                      # "]" right after "["
                frames, phase = frames[:-1], AFTER
            else:
                phase = AFTER                    # a scalar: its end is all that matters
        else:  # AFTER
            if c == 0x2C:
                top = frames[-1] if frames else None
                phase = KEY_NEXT if top is not None and type(top) is not Items else VALUE
            elif c == 0x7D or c == 0x5D:
                frames = frames[:-1]
    return _state(frames, phase, key_raw, before)


def _state(frames: tuple, phase: int, key_raw: bytes, before: tuple) -> tuple:
    """A scan state, kept out of the cyclic collector: its containers hold bytes and ints
    only (matchers and caches keep one per step)."""
    out = (frames, phase, key_raw)
    if frames is before:
        untrack_all(out)
    else:
        untrack_all(out, frames, *frames)
    return out


def keys_ahead(suffix: bytes) -> tuple[int, dict[int, frozenset[bytes]]] | None:
    """The keys the end of a JSON text writes into containers opened before it: (how many
    such containers it closes, {0 for the innermost of them, 1 its parent, ...: keys}).
    None unless the text starts outside a string (at a separator, a closer or whitespace)."""
    stripped = suffix.lstrip(b" \t\r\n")
    if stripped and stripped[:1] not in (b",", b"}", b"]", b":"):
        return None
    inner = 0          # containers the text opens itself and has not closed yet
    closes = 0         # containers opened before the text that it has closed so far
    keys: dict[int, set[bytes]] = {}
    i, n = 0, len(suffix)
    last_string: bytes | None = None
    while i < n:
        c = suffix[i]
        if c == 0x22:   # a string: find its end
            j = i + 1
            while j < n and suffix[j] != 0x22:
                j += 2 if suffix[j] == 0x5C else 1
            if j >= n:
                return None
            last_string = suffix[i + 1:j]
            i = j + 1
            continue
        if c == ord(":") and last_string is not None and inner == 0:
            try:
                keys.setdefault(closes, set()).add(decode_key(last_string))
            except ValueError:
                return None
        if c in (ord("{"), ord("[")):
            inner += 1
        elif c in (ord("}"), ord("]")):
            if inner:
                inner -= 1
            else:
                closes += 1
        if c not in _WS:
            last_string = None
        i += 1
    return closes, {d: frozenset(v) for d, v in keys.items()}


def _next_special(data: bytes, i: int) -> int:
    q, b = data.find(b'"', i), data.find(b"\\", i)
    if q < 0:
        return b
    return q if b < 0 or q < b else b
