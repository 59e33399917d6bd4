"""Token references in grammar texts: special tokens named by text or id, and their negation.

Syntax (Lark and GBNF alike): ``<think>`` or ``<|im_end|>`` (the token whose text that is),
``<[151667]>`` (by id), ``<[1,5-7]>`` (a set of ids), and the negations ``!<think>``,
``!<[151668]>`` or ``<[^151668]>``: any one token but those. Resolution against a vocabulary
happens when the grammar is compiled (constrained.cfg.token_terminals).
"""
from __future__ import annotations

import re

from ..errors import GrammarError, LimitExceededError
from ._grammar import TokenRef

# a reference: optional '!', then <[ids]> or <text> (no spaces, quotes or angle brackets inside)
REF = re.compile(r"(!?)<(\[[^\]\n]*\]|[^\s<>\"'\[\]]+)>")
_ITEM = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")
MAX_IDS = 1_000_000


def parse_token_ref(ref: str, line: int | None = None, column: int | None = None) -> TokenRef:
    """The TokenRef of one reference (``<think>``, ``!<[5]>``, ``<[^1,2-4]>``...)."""
    m = REF.fullmatch(ref)
    if m is None:
        raise GrammarError(f"{ref!r} is not a token reference (<name>, <[id]>, <[^id]>, "
                           "!<name>)", line=line, column=column)
    negated, body = bool(m.group(1)), m.group(2)
    if not body.startswith("["):
        return TokenRef(names=(f"<{body}>",), negated=negated, line=line, column=column)
    inner = body[1:-1]
    if inner.startswith("^"):
        if negated:
            raise GrammarError(f"{ref} negates twice; write <[^id]> or !<[id]>",
                               line=line, column=column)
        negated, inner = True, inner[1:]
    ids: list[int] = []
    for part in inner.split(","):
        item = _ITEM.fullmatch(part)
        if item is None:
            raise GrammarError(f"{ref}: {part.strip()!r} is not a token id or a range lo-hi",
                               line=line, column=column)
        lo = int(item.group(1))
        hi = int(item.group(2)) if item.group(2) is not None else lo
        if hi < lo:
            raise GrammarError(f"{ref}: the range {lo}-{hi} is empty", line=line,
                               column=column)
        if len(ids) + hi - lo + 1 > MAX_IDS:
            raise LimitExceededError(f"{ref} names more than {MAX_IDS} token ids")
        ids.extend(range(lo, hi + 1))
    return TokenRef(ids=tuple(sorted(set(ids))), negated=negated, line=line, column=column)


def _line_column(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def lark_token_refs(text: str) -> list[tuple[int, int, TokenRef]]:
    """(start, end, ref) of every token reference outside strings, regexes and comments of a
    Lark text (where ``<`` has no other meaning)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i) or c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"/":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "<" or (c == "!" and text.startswith("<", i + 1)):
            m = REF.match(text, i)
            if m is None:
                line, col = _line_column(text, i)
                raise GrammarError("'<' starts a token reference (<name>, <[id]>, <[^id]>, "
                                   "!<name>) but none follows", line=line, column=col)
            line, col = _line_column(text, i)
            out.append((i, m.end(), parse_token_ref(m.group(0), line, col)))
            i = m.end()
        else:
            i += 1
    return out


def replace_lark_token_refs(text: str) -> tuple[str, dict[str, TokenRef]]:
    """The Lark text with each token reference replaced by a terminal of its own (defined at
    the end, with a placeholder string no text can contain), and those terminals' refs. Names
    are padded to the reference's width where they fit, so columns stay where they were."""
    refs = lark_token_refs(text)
    if not refs:
        return text, {}
    taken = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
    prefix = "TOKREF"
    while any(w.startswith(prefix) for w in taken):
        prefix += "X"
    pieces, names, last = [], {}, 0
    for k, (start, end, ref) in enumerate(refs):
        name = f"{prefix}{k}"
        name += "_" * max(0, (end - start) - len(name))
        names[name] = ref
        pieces.append(text[last:start])
        pieces.append(name)
        last = end
    pieces.append(text[last:])
    pieces.append("\n")
    for k, name in enumerate(names):
        pieces.append(f'{name}: "\ue000{k}\ue001"\n')
    return "".join(pieces), names
