"""Array rules: prefixItems, items, minItems/maxItems and contains as linear rule chains.

An array is a chain of states (position, number of items matching each ``contains`` condition
so far), all capped where further counting changes nothing, so bounds cost rules linear in the
bound and unbounded arrays end in a loop. Each item falls in one class: its position's schema,
and for each condition (an allOf may bring several) that condition or its negation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from itertools import product
from math import prod

import numpy as np

from ...errors import LimitExceededError
from .builder import Piece, Regular, Symbol
from .merge import contains_conditions
from .strings import count_json_strings, language_dfa

if TYPE_CHECKING:
    from .converter import Converter


def array_piece(cv: "Converter", s: dict, ptr: str, depth: int) -> Piece:
    """The rule for arrays valid under the array keywords of plain schema ``s``."""
    if s.get("uniqueItems") is not True or not cv.chunk_strings:
        return _array_piece(cv, s, ptr, depth)
    cv.chunk_strings = False        # distinct strings are items of one terminal each
    try:
        return _array_piece(cv, s, ptr, depth)
    finally:
        cv.chunk_strings = True


def _array_piece(cv: "Converter", s: dict, ptr: str, depth: int) -> Piece:
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
    distinct = False
    if s.get("uniqueItems") is True and not (hi is not None and hi <= 1):
        count = _distinct_strings(cv, s, prefix, rest, rptr, depth)
        if count is None:
            cv.refuse(ptr + "/uniqueItems", "uniqueItems", "uniqueItems is enforced for "
                      "arrays whose items are strings (one item schema, no contains)")
        else:
            distinct = True
            if count >= 0:
                hi = count if hi is None else min(hi, count)
    schemas = [(sub, f"{pptr}/{i}") for i, sub in enumerate(prefix)]
    if hi is None or hi > len(schemas):
        schemas.append((rest, rptr))
    conds = [(c, least, most) for c, least, most in contains_conditions(s)
             if least > 0 or most is not None]          # minContains 0 alone says nothing
    if any(most is not None and least > most for _, least, most in conds):
        return None
    # an item's class: the set of conditions it meets (bit i: condition i)
    classes = range(1 << len(conds))
    pieces = [[_piece(cv, {"allOf": [sub] + [c if m >> i & 1 else {"not": c}
                                             for i, (c, _, _) in enumerate(conds)]}
                      if conds else sub, p, depth) for m in classes]
              for sub, p in schemas]
    # positions past the last item schema that has an instance are out of reach
    reach = next((i for i, row in enumerate(pieces) if all(x is None for x in row)), None)
    if reach is not None:
        hi = reach if hi is None else min(hi, reach)
    if hi is not None and lo > hi:
        return None
    last = len(schemas) - 1       # positions from here on share one item schema
    top = hi if hi is not None else max(lo, last, 1)
    caps = [most + 1 if most is not None else least for _, least, most in conds]
    n_counts = prod(cap + 1 for cap in caps)
    if top > cv.opts.max_repeat or (top + 1) * n_counts > cv.opts.max_repeat * 4:
        raise LimitExceededError(f"array bounds need {top} rules, above max_repeat "
                                 f"{cv.opts.max_repeat} (at {ptr or '#'})")
    sep = lay.item_sep(depth)

    def counted(counts: tuple, m: int) -> tuple:
        return tuple(min(c + (m >> i & 1), cap) for i, (c, cap) in enumerate(zip(counts, caps)))

    def alive(counts: tuple) -> bool:
        return all(most is None or c <= most for c, (_, _, most) in zip(counts, conds))

    def done(counts: tuple) -> bool:
        return all(c >= least for c, (_, least, _) in zip(counts, conds))

    # after[(i, counts)]: what may follow i items with these (capped) counts per condition,
    # separator first; counts only grow, so reversed order defines every target first
    after: dict[tuple[int, tuple], str | None] = {}
    all_counts = list(product(*(range(cap + 1) for cap in caps)))
    for i in range(top, -1, -1):
        for counts in reversed(all_counts):
            ok = alive(counts)
            alts = [()] if ok and i >= lo and done(counts) else []
            loop = hi is None and i == top
            if ok and (hi is None or i < hi):
                for m in classes:
                    sym = pieces[min(i, last)][m]
                    if sym is None:
                        continue
                    nc = counted(counts, m)
                    target = "__self__" if loop and nc == counts else after.get(
                        (min(i + 1, top), nc))
                    if target:
                        alts.append(sep + (sym, target))
            if not alts:
                after[(i, counts)] = None
                continue
            name = b.rule(alts, "items")
            after[(i, counts)] = _self_ref(b, name) if loop else name
    first = []
    start = tuple(0 for _ in conds)
    for m in classes if hi is None or hi >= 1 else ():
        sym = pieces[0][m]
        nxt = after.get((min(1, top), counted(start, m)))
        if sym is not None and nxt:
            first.append((sym, nxt))
    alts = []
    if first:
        alts.append(lay.open("[", depth, distinct) + (b.rule(first, "elems"),)
                    + lay.close("]", depth))
    if lo == 0 and done(start):
        alts.append(lay.empty("[]", depth))
    return Symbol(b.rule(alts, "arr")) if alts else None


_MAX_DISTINCT = 256


def _distinct_strings(cv, s: dict, prefix, rest, ptr: str, depth: int) -> int | None:
    """For uniqueItems: None unless every item is a string of one regular language (then the
    matcher keeps items distinct); else the most distinct items the array can hold: -1 when
    the language is infinite, its number of strings when finite, at most _MAX_DISTINCT (an
    array of more distinct strings from one finite language is not produced; documented)."""
    if prefix or contains_conditions(s) or rest is True or rest is False:
        return None
    piece = cv.value(rest, ptr, depth + 1)
    if not isinstance(piece, Regular):
        return None
    dfa = language_dfa(piece.pattern, piece.exclude)
    if dfa.n_states == 0 or set(np.flatnonzero(dfa.transitions[dfa.initial] >= 0)) != {0x22}:
        return None                                    # not only strings
    count = count_json_strings([dfa], _MAX_DISTINCT)
    return -1 if count is None else count


def _piece(cv: "Converter", schema, ptr: str, depth: int) -> str | None:
    piece = cv.value(schema, ptr, depth + 1)
    return None if piece is None else cv.b.symbol(piece, "VAL")


def _self_ref(b, name: str) -> str:
    """Replace the placeholder ``__self__`` in a rule by the rule's own name."""
    alts = b.rules[name]
    if any("__self__" in a for a in alts):
        b.rules[name] = tuple(tuple(name if x == "__self__" else x for x in a) for a in alts)
    return name
