"""The least-fixpoint helper behind productive and nullable symbols, against a naive fixpoint."""
from __future__ import annotations

import random

import pytest

from constrained.grammar._analysis import derivable


def _naive(alternatives, known) -> set:
    result = set(known)
    changed = True
    while changed:
        changed = False
        for head, symbols in alternatives:
            if head not in result and all(s in result for s in symbols):
                result.add(head)
                changed = True
    return result


@pytest.mark.parametrize("seed", range(40))
def test_random_grammars(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    names = [f"r{i}" for i in range(n)]
    terminals = ["a", "b", "c"]
    alternatives = [(rng.choice(names),
                     tuple(rng.choice(names + terminals) for _ in range(rng.randint(0, 4))))
                    for _ in range(rng.randint(1, 3 * n))]
    rng.shuffle(alternatives)
    known = terminals[:rng.randint(0, 3)]
    assert derivable(iter(alternatives), known) == _naive(alternatives, known)


@pytest.mark.parametrize("length", [1, 5, 6, 7, 50, 3000])
def test_long_chains_listed_against_their_order(length):
    """``r0 -> a``, ``r{i} -> r{i-1} a``, listed last first: each pass over the list derives
    one more head, so long chains are finished by counting (in linear time)."""
    alternatives = [(f"r{i}", (f"r{i - 1}", "a") if i else ("a",)) for i in range(length)]
    alternatives.reverse()
    alternatives.append(("x", ("missing",)))
    got = derivable(alternatives, ["a"])
    assert got == {"a", *(f"r{i}" for i in range(length))}
