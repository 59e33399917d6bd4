"""``multipleOf`` with an integer divisor: the decimal integers it divides, as a regex.

Write the divisor as a = 2^i * 5^j * q with q coprime to 10, and t = max(i, j). A number with
more than t digits is P followed by its last t digits S; 2^i * 5^j divides it iff it divides S
(10^t is a multiple of it), and q divides it iff P * 10^t + S = 0 (mod q). So the regex is a
union, over the residues c of P, of (the digit strings P = c mod q) followed by (the t-digit
strings S that complete c); numbers of at most t digits are listed. The strings P = c mod q
come from the q-state remainder automaton by state elimination, so only small q are taken.
Decimal divisors are refused: validators divide in floating point (0.07 is not a multiple of
0.01 for them), which no regular language follows.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ...automata.byte_dfa import ByteDFA, dfa_from_arrays, provide_dfa

MAX_LISTED = 2000       # t-digit suffixes or short multiples written out
MAX_REGEX = 50_000      # characters of one residue's regex


def multiple_pattern(divisor, fraction: str = "") -> str | None:
    """Regex of the JSON integers (optionally with a zero fraction, ``fraction`` being its
    quantifier of zeros) that ``divisor`` divides; None when the divisor is not a positive
    integer or the regex would be too large."""
    if isinstance(divisor, bool) or not isinstance(divisor, (int, float)):
        return None
    if isinstance(divisor, float):
        if not divisor.is_integer():
            return None
        divisor = int(divisor)
    if divisor < 1:
        return None
    body = _naturals(divisor)
    if body is None:
        return None
    suffix = rf"(?:\.0{fraction})?" if fraction else ""
    if not body:
        return f"0{suffix}"
    pattern = f"(?:0|-?(?:{body})){suffix}"
    if len(pattern) > _DIRECT_ABOVE:
        zeros = _fraction_zeros(fraction)
        if zeros is not None:
            provide_dfa(pattern, _multiples_dfa(divisor, zeros))
    return pattern


_DIRECT_ABOVE = 2_000     # longer patterns get their automaton built directly


def _fraction_zeros(fraction: str) -> int | None:
    """The most zeros of the optional fraction (0: none, -1: any number), None when unknown."""
    if not fraction:
        return 0
    if fraction == "+":
        return -1
    m = re.fullmatch(r"\{1,(\d+)\}", fraction)
    return int(m.group(1)) if m else None


@lru_cache(maxsize=64)
def _multiples_dfa(a: int, zeros: int) -> ByteDFA:
    """The automaton of multiple_pattern(a, ...) from the remainders mod a: ``0``, or an
    optional minus and digits without leading zero whose value is 0 mod a; then, when
    ``zeros`` is not 0, an optional fraction of 1 to ``zeros`` zeros (-1: any number)."""
    start, minus, zero, first = 0, 1, 2, 3            # remainder r is state first + r
    frac = first + a                                  # after '.', then after k zeros
    n_frac = 0 if zeros == 0 else (2 if zeros < 0 else zeros + 1)
    trans = np.full((first + a + n_frac, 256), -1, dtype=np.int32)
    accepting = np.zeros(len(trans), dtype=bool)
    trans[start, ord("0")] = zero
    trans[start, ord("-")] = minus
    for d in range(1, 10):
        trans[start, ord("0") + d] = trans[minus, ord("0") + d] = first + d % a
    for r in range(a):
        for d in range(10):
            trans[first + r, ord("0") + d] = first + (10 * r + d) % a
    accepting[zero] = accepting[first] = True
    if n_frac:
        trans[zero, ord(".")] = trans[first, ord(".")] = frac
        for k in range(n_frac - 1):
            trans[frac + k, ord("0")] = frac + k + 1
            accepting[frac + k + 1] = True
        if zeros < 0:
            trans[frac + 1, ord("0")] = frac + 1
    return dfa_from_arrays(trans, accepting, start)


@lru_cache(maxsize=256)
def _naturals(a: int) -> str | None:
    """Regex of the positive multiples of ``a`` in decimal (no leading zero)."""
    if a == 1:
        return "[1-9][0-9]*"
    i = j = 0
    q = a
    while q % 2 == 0:
        q, i = q // 2, i + 1
    while q % 5 == 0:
        q, j = q // 5, j + 1
    t = max(i, j)
    m = a // q                                   # 2^i * 5^j
    if 10 ** t // m > MAX_LISTED or 10 ** t // a > MAX_LISTED:
        return None
    short = [str(k) for k in range(a, 10 ** t, a)]
    alts = list(short)
    tails: dict[int, list[str]] = {}
    for s in range(0, 10 ** t, m):               # suffixes divisible by 2^i * 5^j
        for c in range(q):                       # the residue of P they complete
            if (c * 10 ** t + s) % q == 0:
                tails.setdefault(c, []).append(str(s).zfill(t) if t else "")
    for c, suffixes in tails.items():
        head = _residue_regex(q, c)
        if head is None:
            return None
        tail = "|".join(suffixes)
        alts.append(head + (f"(?:{tail})" if len(suffixes) > 1 else tail))
    out = "|".join(alts)
    return out if len(out) <= MAX_REGEX else None


def _residue_regex(q: int, c: int) -> str | None:
    """Regex of the decimal digit strings without leading zero whose value is c mod q."""
    if q == 1:
        return "[1-9][0-9]*"
    start, final = q, q + 1
    edges: dict[tuple[int, int], str] = {}

    def add(x: int, y: int, r: str) -> None:
        edges[(x, y)] = f"{edges[(x, y)]}|{r}" if (x, y) in edges else r

    for r, digits in ((r, range(1, 10) if r == start else range(10)) for r in [start, *range(q)]):
        by: dict[int, list[str]] = {}
        for d in digits:
            by.setdefault(((0 if r == start else 10 * r) + d) % q, []).append(str(d))
        for target, ds in by.items():
            add(r, target, ds[0] if len(ds) == 1 else "[" + "".join(ds) + "]")
    add(c, final, "")
    states = list(range(q))
    while states:
        state = min(states, key=lambda s: sum(1 for x, y in edges if y == s and x != s)
                    * sum(1 for x, y in edges if x == s and y != s))
        states.remove(state)
        loop = edges.pop((state, state), None)
        ins = [(x, edges.pop((x, y))) for x, y in list(edges) if y == state]
        outs = [(y, edges.pop((x, y))) for x, y in list(edges) if x == state]
        mid = f"(?:{loop})*" if loop else ""
        for x, rx in ins:
            for y, ry in outs:
                add(x, y, _group(rx) + mid + _group(ry))
        if sum(len(v) for v in edges.values()) > MAX_REGEX:
            return None
    return edges.get((start, final))


def _group(r: str) -> str:
    return f"(?:{r})" if "|" in r else r
