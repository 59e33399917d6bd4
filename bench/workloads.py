"""Named workloads: the same grammar in the kinds each engine reads, and documents to feed."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = ROOT / "grammars"
SAMPLES = ROOT / "tests" / "grammars_samples"


@dataclass(frozen=True)
class Workload:
    """A grammar given in one or more kinds ("regex", "lark", "gbnf", "json_schema")."""

    name: str
    sources: dict[str, Any]
    documents: tuple[str, ...]


_JSON_ISH = (r'\{"id": [0-9]{1,8}, "name": "[A-Za-z ]{1,30}", "email": "[a-z0-9.]{1,20}@[a-z]'
             r'{1,12}\.(com|org|net)", "tags": \[("[a-z]{1,10}"(, "[a-z]{1,10}"){0,4})?\], '
             r'"active": (true|false)\}')

_REGEX_WORKLOADS = {
    "email": (r"[a-z0-9._%+-]{1,40}@[a-z0-9-]{1,30}(\.[a-z0-9-]{1,30}){0,3}\.[a-z]{2,6}",
              ("jane.doe+news@example.com", "x@y.io", "first.last@mail.server.co.uk")),
    "iso-datetime": (r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:"
                     r"[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)",
                     ("2024-02-29T23:59:59Z", "1999-12-31T00:00:00.123456+05:30")),
    "json-ish": (_JSON_ISH,
                 ('{"id": 42, "name": "Ada Lovelace", "email": "ada@math.org", "tags": '
                  '["math", "poetry", "engines"], "active": true}',
                  '{"id": 7, "name": "X", "email": "x@y.com", "tags": [], "active": false}')),
}


def _samples(name: str) -> tuple[str, ...]:
    folder = SAMPLES / name / "valid"
    return tuple(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt")))


def _grammar_workload(name: str) -> Workload:
    sources = {}
    for kind, ext in (("lark", "lark"), ("gbnf", "gbnf")):
        path = GRAMMARS / f"{name}.{ext}"
        if path.is_file():
            sources[kind] = path.read_text(encoding="utf-8")
    return Workload(name, sources, _samples(name))


def load_workload(name: str) -> Workload:
    """A workload by name: a regex workload, a grammar in grammars/, or a schema file."""
    if name in _REGEX_WORKLOADS:
        pattern, docs = _REGEX_WORKLOADS[name]
        return Workload(name, {"regex": pattern}, docs)
    schema_path = GRAMMARS / f"{name}.schema.json"
    if schema_path.is_file():
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        docs = tuple(json.dumps(d) for d in schema.get("examples", ()))
        return Workload(name, {"json_schema": schema}, docs)
    if (GRAMMARS / f"{name}.lark").is_file() or (GRAMMARS / f"{name}.gbnf").is_file():
        return _grammar_workload(name)
    raise KeyError(f"unknown workload {name!r}; known: {', '.join(workload_names())}")


def workload_names() -> list[str]:
    """Every workload the harness knows."""
    names = list(_REGEX_WORKLOADS)
    names += sorted({p.name.split(".")[0] for p in GRAMMARS.glob("*.lark")}
                    | {p.name.split(".")[0] for p in GRAMMARS.glob("*.gbnf")}
                    | {p.name[: -len(".schema.json")] for p in GRAMMARS.glob("*.schema.json")})
    return names
