"""Random regular GBNF grammars against Python's re: the GBNF front-end's groups, classes,
repetition bounds and rule references must mean what the same expression means as a regex.

Each random expression is rendered twice, as GBNF (some groups as separate rules) and as a
Python regex, and both judge the same random strings (GBNF through the reference recognizer).
"""
import random
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracles"))

from constrained.grammar import Grammar  # noqa: E402
import gbnf_reference  # noqa: E402

ALPHABET = "abcd"


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rules: list[str] = []

    def alternation(self, depth: int) -> tuple[str, str]:
        n = self.rng.choice([1, 1, 2, 3])
        alts = [self.sequence(depth) for _ in range(n)]
        return " | ".join(g for g, _ in alts), "|".join(r for _, r in alts)

    def sequence(self, depth: int) -> tuple[str, str]:
        n = self.rng.choice([0, 1, 1, 2, 2, 3]) if depth else self.rng.choice([1, 2, 3])
        items = [self.item(depth) for _ in range(n)]
        return " ".join(g for g, _ in items), "".join(r for _, r in items)

    def item(self, depth: int) -> tuple[str, str]:
        g, r = self.atom(depth)
        q = self.rng.choice(["", "", "", "?", "*", "+", "{2}", "{1,}", "{0,2}", "{1,3}", "{0}"])
        if q:
            g, r = g + q, "(?:" + r + ")" + q
        return g, r

    def atom(self, depth: int) -> tuple[str, str]:
        kind = self.rng.randrange(5 if depth < 3 else 3)
        if kind == 0:
            s = "".join(self.rng.choice(ALPHABET) for _ in range(self.rng.randint(1, 2)))
            return f'"{s}"', re.escape(s)
        if kind == 1:
            chars = sorted(set(self.rng.choice(ALPHABET) for _ in range(self.rng.randint(1, 2))))
            body = "".join(chars)
            if self.rng.random() < 0.3:
                body = "a-c"
            neg = "^" if self.rng.random() < 0.3 else ""
            return f"[{neg}{body}]", f"[{neg}{body}]"
        if kind == 2:
            return ".", "[\\s\\S]"
        g, r = self.alternation(depth + 1)
        if kind == 3:
            name = f"r{len(self.rules) + 1}"
            self.rules.append(f"{name} ::= ( {g} )")  # a trailing empty alternative would
            # swallow the line break (as in llama.cpp), so rule bodies are parenthesized
            return name, "(?:" + r + ")"
        return f"( {g} )", "(?:" + r + ")"


def _case(seed: int) -> tuple[str, str]:
    gen = _Gen(seed)
    g, r = gen.alternation(0)
    return "\n".join([f"root ::= ( {g} )", *gen.rules]) + "\n", r


@pytest.mark.parametrize("block", range(4))
def test_random_regular_grammars_match_python_re(block):
    rng = random.Random(block)
    verdicts = set()
    for seed in range(block * 25, block * 25 + 25):
        gbnf, regex = _case(seed)
        g = Grammar.from_gbnf(gbnf)
        rx = re.compile(regex)
        strings = {"".join(rng.choice(ALPHABET + "\n") for _ in range(rng.randint(0, 6)))
                   for _ in range(40)}
        for s in strings:
            want = bool(rx.fullmatch(s))
            assert gbnf_reference.recognizes(g, s) == want, (gbnf, regex, s)
            verdicts.add(want)
    assert verdicts == {True, False}
