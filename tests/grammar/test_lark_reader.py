"""Lark's grammar-file reader built from the parse table kept on disk (grammar._lark_reader).

Oracle: Lark's own LALR analysis of its meta-grammar. The table read back from the disk cache
must equal it action for action, and a fresh process must take the cached path (it writes no
file and reads grammars as Lark does).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from constrained.grammar import _lark_reader as reader

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import json, sys
sys.path.insert(0, {root!r})
import lark.load_grammar as lark_load
from constrained import Grammar
from constrained.grammar import _lark_reader as reader
analysed = []
own = reader._analyse
reader._analyse = lambda parts: analysed.append(1) or own(parts)
g = Grammar.from_lark(open({grammar!r}).read())
print(json.dumps({{"rules": sorted(map(str, g.rules.items())), "terminals": sorted(g.terminals),
                  "analysed": len(analysed)}}))
"""


def _actions(table, rules) -> dict:
    from lark.grammar import Rule
    index = {id(r): i for i, r in enumerate(rules)}
    return {state: {term: ("reduce", index[id(arg)]) if isinstance(arg, Rule) else ("shift", arg)
                    for term, (_, arg) in actions.items()}
            for state, actions in table.states.items()}


def test_the_saved_table_reads_back_equal_to_larks_own_analysis(tmp_path, monkeypatch):
    import lark.load_grammar as lark_load
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    parts = reader._reader_parts(lark_load)
    table = reader._analyse(parts)
    name = "larkreader-test.bin"
    data = reader._table_bytes(table, parts["rules"])
    from constrained.automata.disk_cache import save_arrays
    assert save_arrays(name, {"table": np.frombuffer(data, dtype=np.uint8)})
    again = reader._reader_parts(lark_load)     # new Rule objects, as in a later process
    loaded = reader._load_table(name, again)
    assert loaded is not None
    assert _actions(loaded, again["rules"]) == _actions(table, parts["rules"])
    assert loaded.start_states == table.start_states and loaded.end_states == table.end_states
    assert len(loaded.states) > 50


def test_a_table_naming_states_it_lacks_is_not_used(tmp_path, monkeypatch):
    import lark.load_grammar as lark_load
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    parts = reader._reader_parts(lark_load)
    raw = json.loads(reader._table_bytes(reader._analyse(parts), parts["rules"]))
    raw["start"] = {"start": 10**6}
    from constrained.automata.disk_cache import save_arrays
    save_arrays("larkreader-bad.bin", {"table": np.frombuffer(json.dumps(raw).encode(),
                                                             dtype=np.uint8)})
    assert reader._load_table("larkreader-bad.bin", parts) is None
    raw = json.loads(reader._table_bytes(reader._analyse(parts), parts["rules"]))
    first = next(iter(raw["states"]))
    raw["states"][first].append(["COLON", 1, 10**6])          # a rule index out of range
    save_arrays("larkreader-bad.bin", {"table": np.frombuffer(json.dumps(raw).encode(),
                                                             dtype=np.uint8)})
    assert reader._load_table("larkreader-bad.bin", parts) is None


def _child(cache: Path, grammar: Path) -> dict:
    env = {**os.environ, "CONSTRAINED_CACHE_DIR": str(cache)}
    code = _CHILD.format(root=str(ROOT), grammar=str(grammar))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_fresh_processes_read_grammars_alike_and_the_second_one_uses_the_saved_table(tmp_path):
    grammar = ROOT / "grammars" / "json.lark"
    first = _child(tmp_path, grammar)
    assert first["analysed"] == 1 and len(first["rules"]) > 3
    assert len(list(tmp_path.glob("larkreader-*.bin"))) == 1
    second = _child(tmp_path, grammar)
    assert second["analysed"] == 0
    assert second["rules"] == first["rules"] and second["terminals"] == first["terminals"]
