"""Array rules: prefixItems, items, minItems/maxItems and contains as linear rule chains.

An array is a chain of states (position, number of items matching ``contains`` so far), both
capped where further counting changes nothing, so bounds cost rules linear in the bound and
unbounded arrays end in a loop. Each item is either a hit (its position's schema and the
``contains`` schema) or a miss (its position's schema and not the ``contains`` schema).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import LimitExceededError
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
    schemas = [(sub, f"{pptr}/{i}") for i, sub in enumerate(prefix)]
    if hi is None or hi > len(schemas):
        schemas.append((rest, rptr))
    least, most = _contains_counts(s)
    if "contains" in s and (least > 0 or most is not None):
        cond = s["contains"]
        hits = [_piece(cv, {"allOf": [sub, cond]}, p, depth) for sub, p in schemas]
        misses = [_piece(cv, {"allOf": [sub, {"not": cond}]}, p, depth) for sub, p in schemas]
    else:
        least, most = 0, None
        hits = [_piece(cv, sub, p, depth) for sub, p in schemas]
        misses = [None] * len(hits)
    # positions past the last item schema that has an instance are out of reach
    reach = next((i for i, (h, m) in enumerate(zip(hits, misses)) if h is None and m is None),
                 None)
    if reach is not None:
        hi = reach if hi is None else min(hi, reach)
    if hi is not None and lo > hi or most is not None and least > most:
        return None
    last = len(schemas) - 1       # positions from here on share one item schema
    top = hi if hi is not None else max(lo, last, 1)
    count_cap = most + 1 if most is not None else least
    if top > cv.opts.max_repeat or (top + 1) * (count_cap + 1) > cv.opts.max_repeat * 4:
        raise LimitExceededError(f"array bounds need {top} rules, above max_repeat "
                                 f"{cv.opts.max_repeat} (at {ptr or '#'})")
    sep = lay.item_sep(depth)

    def item(i: int, hit: bool) -> str | None:
        k = min(i, last)
        return hits[k] if hit else misses[k]

    # after[(i, c)]: what may follow i items of which c are hits (capped), separator first
    after: dict[tuple[int, int], str | None] = {}
    for i in range(top, -1, -1):
        for c in range(count_cap, -1, -1):
            alive = most is None or c <= most
            alts = [()] if alive and i >= lo and c >= least else []
            loop = hi is None and i == top
            if alive and (hi is None or i < hi):
                for hit in (True, False):
                    sym = item(i, hit)
                    if sym is None:
                        continue
                    nc = min(c + 1, count_cap) if hit else c
                    target = "__self__" if loop and nc == c else after.get(
                        (min(i + 1, top), nc))
                    if target:
                        alts.append(sep + (sym, target))
            if not alts:
                after[(i, c)] = None
                continue
            name = b.rule(alts, "items")
            after[(i, c)] = _self_ref(b, name) if loop else name
    first = []
    for hit in (True, False) if hi is None or hi >= 1 else ():
        sym = item(0, hit)
        nc = min(1, count_cap) if hit else 0
        if sym is not None and after.get((min(1, top), nc)):
            first.append((sym, after[(min(1, top), nc)]))
    alts = []
    if first:
        alts.append(lay.open("[", depth) + (b.rule(first, "elems"),) + lay.close("]", depth))
    if lo == 0 and least == 0:
        alts.append(lay.empty("[]", depth))
    return Symbol(b.rule(alts, "arr")) if alts else None


def _contains_counts(s: dict) -> tuple[int, int | None]:
    """How many items must (at least, at most) match ``contains``."""
    if "contains" not in s:
        return 0, None
    least = int(s.get("minContains", 1))
    most = s.get("maxContains")
    return least, None if most is None else int(most)


def _piece(cv: "Converter", schema, ptr: str, depth: int) -> str | None:
    piece = cv.value(schema, ptr, depth + 1)
    return None if piece is None else cv.b.symbol(piece, "VAL")


def _self_ref(b, name: str) -> str:
    """Replace the placeholder ``__self__`` in a rule by the rule's own name."""
    alts = b.rules[name]
    if any("__self__" in a for a in alts):
        b.rules[name] = tuple(tuple(name if x == "__self__" else x for x in a) for a in alts)
    return name
