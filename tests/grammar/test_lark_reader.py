"""Lark's grammar-file reader built from the parse table kept on disk (grammar._lark_reader).

Oracles: Lark's own LALR analysis of its meta-grammar (the table read back from the disk cache
must equal it action for action), and Lark's own reader (every shipped grammar must read the
same, in a process that analysed the meta-grammar and in one that took the saved table).
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
import glob, json, sys
sys.path.insert(0, {root!r})
import lark.load_grammar as lark_load
from constrained import Grammar
from constrained.grammar import _lark_reader as reader
if {larks_own!r}:
    lark_load._get_parser()           # Lark builds its reader itself, as without the cache
analysed = []
own = reader._analyse
reader._analyse = lambda parts: analysed.append(1) or own(parts)
read = {{}}
for path in sorted(glob.glob({grammars!r})):
    g = Grammar.from_lark(open(path).read())
    read[path] = [sorted(map(str, g.rules.items())), sorted(map(str, g.terminals.items()))]
print(json.dumps({{"read": read, "analysed": len(analysed)}}))
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


def _child(cache: Path, larks_own: bool = False) -> dict:
    env = {**os.environ, "CONSTRAINED_CACHE_DIR": str(cache)}
    code = _CHILD.format(root=str(ROOT), grammars=str(ROOT / "grammars" / "*.lark"),
                         larks_own=larks_own)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_fresh_processes_read_grammars_as_larks_own_reader_does(tmp_path):
    """Every shipped Lark grammar reads the same with Lark's own reader, with the reader built
    from a fresh analysis (first process) and from the saved table (second process)."""
    larks = _child(tmp_path / "unused", larks_own=True)
    first = _child(tmp_path)
    assert first["analysed"] == 1
    assert len(list(tmp_path.glob("larkreader-*.bin"))) == 1
    second = _child(tmp_path)
    assert second["analysed"] == 0
    assert len(larks["read"]) >= 5
    assert first["read"] == larks["read"] and second["read"] == larks["read"]
