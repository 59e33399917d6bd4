"""The walls of the house: imports between the engine's packages point one way.

Every import counts, the ones inside functions too: a lazy import is still a dependency.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the grammar side speaks bytes, token ids and bitmasks: it never reaches up to the decode loop
GRAMMAR_SIDE = {"grammar", "automata", "cfg", "regex", "compiler", "matching", "bitmask", "lru",
                "vocabulary", "errors", "deadline", "gc_pause", "gc_untrack"}
ABOVE_GRAMMAR = {"decoding", "healing", "infill", "logprobs", "batch", "cli", "model"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                out.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _package_graph(top: str) -> dict[str, set[str]]:
    """Edges between the first-level parts of ``top`` (constrained.cfg -> constrained.grammar)."""
    def part(name: str) -> str | None:
        pieces = name.split(".")
        return pieces[1] if pieces[0] == top and len(pieces) > 1 else None

    graph: dict[str, set[str]] = defaultdict(set)
    for path in (ROOT / top).rglob("*.py"):
        src = part(_module(path))
        for target in _imports(path):
            dst = part(target)
            if src and dst and src != dst:
                graph[src].add(dst)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one package (Tarjan, iterative enough)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_between_packages():
    assert _cycles(_package_graph("constrained")) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_grammar_side_never_imports_the_decode_loop():
    graph = _package_graph("constrained")
    leaks = {(src, dst) for src in GRAMMAR_SIDE for dst in graph.get(src, ()) if dst in ABOVE_GRAMMAR}
    assert not leaks


def test_samplers_never_import_the_engine():
    for path in (ROOT / "samplers").rglob("*.py"):
        assert not any(name.split(".")[0] == "constrained" for name in _imports(path)), path
