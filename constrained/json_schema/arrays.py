"""Array rules: prefixItems, items, minItems/maxItems expanded into linear rule chains."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import LimitExceededError
from .builder import Piece, Symbol

if TYPE_CHECKING:
    from .converter import Converter


def array_piece(cv: "Converter", s: dict, ptr: str, depth: int) -> Piece:
    """The rule for arrays valid under the array keywords of plain schema ``s``."""
    b, lay = cv.b, cv.layout
    items = s.get("items", True)
    if isinstance(items, list):  # draft 4-2019 tuple form
        prefix, pptr = items, ptr + "/items"
        rest, rptr = s.get("additionalItems", True), ptr + "/additionalItems"
    else:
        prefix, pptr = s.get("prefixItems", []), ptr + "/prefixItems"
        rest, rptr = items, ptr + "/items"
    lo = int(s.get("minItems", 0) or 0)
    hi = s.get("maxItems")
    hi = None if hi is None else int(hi)
    if s.get("uniqueItems") is True and not (hi is not None and hi <= 1):
        cv.refuse(ptr + "/uniqueItems", "uniqueItems", "uniqueItems cannot be enforced")
    for kw in ("contains", "minContains", "maxContains"):
        if kw in s:
            cv.refuse(f"{ptr}/{kw}", kw, f"{kw} cannot be enforced")
    elems = []
    for i, sub in enumerate(prefix):
        piece = cv.value(sub, f"{pptr}/{i}", depth + 1)
        if piece is None:
            hi = i if hi is None else min(hi, i)
            break
        elems.append(b.symbol(piece, "VAL"))
    rest_piece = cv.value(rest, rptr, depth + 1) if (hi is None or hi > len(elems)) else None
    if rest_piece is None:
        hi = len(elems) if hi is None else min(hi, len(elems))
    rest_sym = None if rest_piece is None else b.symbol(rest_piece, "VAL")
    if hi is not None and lo > hi:
        return None
    top = hi if hi is not None else max(lo, len(elems), 1)
    if top > cv.opts.max_repeat:
        raise LimitExceededError(f"array bounds need {top} rules, above max_repeat "
                                 f"{cv.opts.max_repeat} (at {ptr or '#'})")
    sep = lay.item_sep(depth)

    def elem(i: int) -> str:
        return elems[i] if i < len(elems) else rest_sym

    if hi is None:
        tail = b.rule([sep + (rest_sym, "__self__"), ()], "items")
        b.rules[tail] = tuple(tuple(tail if x == "__self__" else x for x in a)
                              for a in b.rules[tail])
    else:
        tail = b.rule([()], "items")
    for i in range(top - 1, 0, -1):
        tail = b.rule(([()] if i >= lo else []) + [sep + (elem(i), tail)], "items")
    alts = []
    if top >= 1:
        alts.append(lay.open("[", depth) + (elem(0), tail) + lay.close("]", depth))
    if lo == 0:
        alts.append(lay.empty("[]", depth))
    return Symbol(b.rule(alts, "arr"))
