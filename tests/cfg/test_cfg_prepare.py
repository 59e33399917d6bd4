"""Grammar lowering (cfg/_lower.c) against a reference in plain Python: the same terminal and
rule names, alternatives, numbering and nullable set on random grammars (tail recursion,
optional and empty terminals, unproductive and unreachable rules, ignored terminals) and on real
grammars; bad grammars raise typed errors."""
import dataclasses
import json
import random
from pathlib import Path

import numpy as np
import pytest

from constrained import Grammar
from constrained.cfg import _lower
from constrained.automata import regex_difference_dfa
from constrained.cfg.earley import _pack
from constrained.cfg.prepare import START, _non_empty_dfa, prepare_grammar
from constrained.errors import EmptyLanguageError, GrammarError, LimitExceededError
from constrained.grammar._analysis import derivable
from constrained.grammar._grammar import Terminal

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "maskbench-dev"


def _tails_reference(rules: dict) -> None:
    """``X: a X | b`` -> ``X: R b``, ``R: <empty> | R a`` where X occurs nowhere else."""
    for name in list(rules):
        alts = rules[name]
        if not any(a and a[-1] == name for a in alts):
            continue
        tails = [a[:-1] for a in alts if a and a[-1] == name and len(a) > 1]
        bases = [a for a in alts if not (a and a[-1] == name)]
        if not tails or not bases:
            continue
        if any(name in a for a in tails) or any(name in a for a in bases):
            continue
        rep = f"{name}@rep"
        while rep in rules:
            rep += "'"
        rules[rep] = [()] + [(rep,) + a for a in tails]
        rules[name] = [(rep,) + b for b in bases]


def _reachable(rules: dict, start: str) -> tuple[set, set]:
    """The rules and the other symbols reachable from ``start``."""
    reach, other, todo = {start}, set(), [start]
    while todo:
        for alt in rules[todo.pop()]:
            for s in alt:
                if s not in rules:
                    other.add(s)
                elif s not in reach:
                    reach.add(s)
                    todo.append(s)
    return reach, other


def lower_reference(rules: dict, start: str, status: dict, ignored: list):
    """What _lower.index + _lower.lower compute, one Python pass at a time."""
    reach, _ = _reachable(rules, start)
    work = {n: [tuple(a) for a in alts] for n, alts in rules.items() if n in reach}
    optional = sorted(n for n, bits in status.items() if bits & 2)
    renamed = {n: f"{n}?" for n in optional}
    for alts in work.values():
        alts[:] = [tuple(renamed.get(s, s) for s in a) for a in alts]
    for n in optional:
        work[renamed[n]] = [(n,), ()]
    _tails_reference(work)
    productive = derivable(((n, a) for n, alts in work.items() for a in alts),
                           (n for n, bits in status.items() if bits & 1))
    if start not in productive:
        return None
    kept = {n: [a for a in alts if productive.issuperset(a)]
            for n, alts in work.items() if n in productive}
    live, todo, used = {start}, [start], set()
    while todo:
        for alt in kept[todo.pop()]:
            for s in alt:
                if s not in live and s not in used:
                    (live if s in kept else used).add(s)
                    if s in kept:
                        todo.append(s)
    terminal_names = tuple(sorted(used | set(ignored)))
    nt_names = (START,) + tuple(sorted(live))
    ids = {n: i for i, n in enumerate(terminal_names + nt_names)}
    lhs, rhs = [len(terminal_names)], [(ids[start],)]
    by_lhs = {len(terminal_names): (0,)}
    for n in nt_names[1:]:
        first = len(lhs)
        lhs += [ids[n]] * len(kept[n])
        rhs += [tuple(ids[s] for s in a) for a in kept[n]]
        by_lhs[ids[n]] = tuple(range(first, len(lhs)))
    nullable = derivable(zip(lhs, rhs))
    return terminal_names, nt_names, tuple(lhs), tuple(rhs), by_lhs, frozenset(nullable)


def _lowered(rules, start, status, ignored):
    """The lowering's result without its packed arrays (checked against the tuples here)."""
    index, reach_terms = _lower.index(rules, dict.fromkeys(status), start)
    got = _lower.lower(index, start, status, list(ignored), START)
    if got is not None:
        terminal_names, nt_names, lhs, rhs, _, nullable, packed = got
        flat, starts, heads, flags = (np.frombuffer(b, dtype=t) for b, t in
                                      zip(packed, (np.int32, np.int32, np.int32, np.uint8)))
        assert [tuple(flat[a:b]) for a, b in zip(starts, starts[1:])] == list(rhs)
        assert tuple(heads) == lhs
        assert set(np.flatnonzero(flags)) == nullable
        assert len(flags) == len(terminal_names) + len(nt_names)
        got = got[:6]
    return got, set(reach_terms)


def _random_grammar(rng: random.Random):
    n_rules, n_terms = rng.randint(1, 9), rng.randint(1, 6)
    rule_names = [f"r{i}" for i in range(n_rules)]
    terms = [f"T{i}" for i in range(n_terms)]
    rules = {}
    for name in rule_names:
        alts = []
        for _ in range(rng.randint(0, 4)):
            alt = tuple(rng.choice(rule_names + terms) for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.3:
                alt += (name,)           # tail recursion
            alts.append(alt)
        rules[name] = tuple(alts)
    status = {t: rng.choice([0, 1, 1, 1, 2, 3, 3]) for t in terms}
    ignored = [t for t in terms if status[t] & 1 and rng.random() < 0.2]
    return rules, rule_names[0], status, ignored


@pytest.mark.parametrize("seed", range(40))
def test_lowering_equals_the_reference_on_random_grammars(seed):
    rng = random.Random(seed)
    for _ in range(50):
        rules, start, status, ignored = _random_grammar(rng)
        got, reach_terms = _lowered(rules, start, status, ignored)
        assert got == lower_reference(rules, start, status, ignored), rules
        assert reach_terms == _reachable(rules, start)[1]


def test_made_names_do_not_collide_with_working_rules():
    rules = {"top": (("s", "s@rep", "u"),), "s": (("a", "s"), ("b",)), "s@rep": (("a",),),
             "u": (("a", "u"), ("b",)), "u@rep": (("u",),)}    # u@rep: unreachable
    status = {"a": 1, "b": 1}
    got, _ = _lowered(rules, "top", status, [])
    assert got == lower_reference(rules, "top", status, [])
    assert {"s@rep", "s@rep'", "u@rep"} <= set(got[1])


def _real_grammars():
    out = []
    for f in sorted(DATA.glob("*.json"))[::20] if DATA.is_dir() else []:
        for order in ("schema", "any"):
            try:
                out.append(Grammar.from_json_schema(json.loads(f.read_text())["schema"],
                                                    property_order=order))
            except (GrammarError, LimitExceededError):     # schemas refused
                pass
    terms = {n: Terminal(n, p) for n, p in (("A", "a"), ("B", "b|bb"), ("C", "c"), ("WS", "[ ]*"),
                                            ("SP", "[ \t]+"), ("NONE", "x"))}
    terms["NONE"] = Terminal("NONE", "x", exclude=("x",))
    out.append(Grammar(start="start", rules={
        "start": (("x",), ("x", "start")), "x": (("A", "x"), ("B",), ("WS", "C"), ("NONE",)),
        "unused": (("C",),)}, terminals=terms, ignore=("SP",), max_ignored_whitespace=3))
    return out


def test_prepared_grammars_equal_the_reference_on_real_grammars():
    grammars = _real_grammars()
    assert len(grammars) > 10, "the maskbench-dev sample is missing"
    for g in grammars:
        p = prepare_grammar(g)
        # recompute the inputs prepare_grammar gave the lowering from the grammar itself
        reach_terms = _lower.index(g.rules, g.terminals, g.start)[1]
        status = {n: _status_of(g, n) for n in sorted({*reach_terms, *g.ignore})}
        ignored = [n for n in g.ignore if status[n] & 1]
        want = lower_reference(g.rules, g.start, status, ignored)
        assert want == (p.terminal_names, p.nonterminal_names, p.lhs, p.rhs, p.by_lhs,
                        p.nullable)
        unpacked = dataclasses.replace(p, packed=None)
        assert all(np.array_equal(np.frombuffer(a, dtype=b.dtype), b)
                   for a, b in zip(p.packed, _pack(unpacked)))


def _status_of(g: Grammar, name: str) -> int:
    """1: a non-empty language without the empty text; 2: it has the empty text."""
    dfa = regex_difference_dfa(g.terminals[name].pattern, g.terminals[name].exclude)
    if dfa.initial >= 0 and dfa.accepting[dfa.initial]:
        return 2 | (1 if _non_empty_dfa(dfa).initial >= 0 else 0)
    return 1 if dfa.initial >= 0 else 0


def test_bad_grammars_raise_typed_errors():
    t = {"A": Terminal("A", "a")}
    with pytest.raises(GrammarError, match="undefined symbol 'B'"):
        prepare_grammar(Grammar(rules={"start": (("A", "B"),)}, terminals=t, start="start"))
    empty = {"A": Terminal("A", "a", exclude=("a",))}
    with pytest.raises(EmptyLanguageError):
        prepare_grammar(Grammar(rules={"start": (("A",),)}, terminals=empty, start="start"))
    with pytest.raises(EmptyLanguageError):
        prepare_grammar(Grammar(rules={"start": (("start", "A"),)}, terminals=t,
                                start="start"))
    with pytest.raises(KeyError):
        _lower.lower(_lower.index({"s": ()}, {}, "s")[0], "nope", {}, [], START)
