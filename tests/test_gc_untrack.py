"""Untracking acyclic objects: what ``untrack_all`` does, and the long-lived objects of converted
schemas (terminals, automata) that the collector no longer walks."""
from __future__ import annotations

import gc

from constrained import Grammar
from constrained.automata.byte_dfa import regex_to_byte_dfa
from constrained.gc_untrack import untrack_all


def test_untrack_all_untracks_containers_and_ignores_atoms():
    ids, pair = {1, 2, 3}, (frozenset({4}), [5])
    assert gc.is_tracked(ids) and gc.is_tracked(pair)
    untrack_all(ids, pair, 7, "text")
    assert not gc.is_tracked(ids) and not gc.is_tracked(pair)
    ids.add(4)                      # still a working set, freed by reference counting
    assert ids == {1, 2, 3, 4}


def test_terminals_and_automata_of_a_converted_schema_are_untracked():
    grammar = Grammar.from_json_schema({"type": "object",
                                        "properties": {"a": {"type": "string",
                                                             "pattern": "^x+y$"}}})
    assert grammar.terminals
    assert not any(gc.is_tracked(t) for t in grammar.terminals.values())
    assert not gc.is_tracked(regex_to_byte_dfa("[a-f]+z"))
