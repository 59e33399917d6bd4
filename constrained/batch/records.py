"""Batch job records: reading prompts from JSON lines, writing results in order, resuming.

An input line is a JSON object with ``"prompt"`` (text, chat messages or token ids) and optional
``"id"`` and ``"seed"``. A result line carries ``"index"`` (the input line number, from 0), the
record's ``"id"`` when it had one, and either the generation's fields or an ``"error"``.

The output file only ever grows by whole lines, each written with one ``write`` and flushed, in
input order. A run that stops mid-line leaves at most one partial last line; the next run cuts
it off, keeps every complete line and skips the indices they hold, so no line is ever written
twice.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

_MISSING = object()


@dataclass(frozen=True)
class Record:
    """One input line: its index, the prompt, and its optional id and seed."""

    index: int
    prompt: Any
    id: Any = None
    seed: int | None = None
    error: str | None = None   # set when the line itself is malformed

    def seed_for(self, base_seed: int) -> int:
        """The record's own seed, else ``base_seed + index``: independent of batching."""
        return int(self.seed) if self.seed is not None else int(base_seed) + self.index


def parse_record(index: int, line: str) -> Record:
    """A Record from one input line; a malformed line becomes a Record with ``error`` set."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return Record(index, None, error=f"line {index + 1} is not valid JSON: {exc.msg}")
    if not isinstance(obj, dict):
        return Record(index, None, error=f"line {index + 1} is not a JSON object")
    rid = obj.get("id")
    if "prompt" not in obj:
        return Record(index, None, id=rid, error=f"line {index + 1} has no \"prompt\"")
    seed = obj.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return Record(index, obj["prompt"], id=rid,
                      error=f"line {index + 1}: \"seed\" must be an integer")
    return Record(index, obj["prompt"], id=rid, seed=seed)


def read_records(path: str | os.PathLike) -> Iterator[Record]:
    """The records of a JSON-lines file; blank lines are skipped but still count as lines."""
    with open(path, encoding="utf-8") as f:
        for index, line in enumerate(f):
            if line.strip():
                yield parse_record(index, line)


def error_result(record: Record, message: str) -> dict:
    """The result line of a record that failed."""
    out: dict[str, Any] = {"index": record.index}
    if record.id is not None:
        out["id"] = record.id
    out["error"] = message
    return out


def scan_done(path: str | os.PathLike, *, repair: bool = True) -> dict[int, Any]:
    """{index: id} of the complete result lines in ``path`` (empty when it does not exist).

    With ``repair``, a partial last line (no newline: the run stopped mid-write) is cut off.
    """
    path = Path(path)
    if not path.exists():
        return {}
    done: dict[int, Any] = {}
    good_end = 0
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break
            try:
                obj = json.loads(raw)
                index = int(obj["index"])
            except (ValueError, KeyError, TypeError):
                break  # a torn line followed by more output cannot be trusted past here
            done[index] = obj.get("id")
            good_end = f.tell()
    if repair and good_end != path.stat().st_size:
        with open(path, "r+b") as f:
            f.truncate(good_end)
    return done


def check_resume(done: dict[int, Any], records: Iterable[Record]) -> None:
    """Raise ValueError when the output holds a result whose id differs from the input's."""
    for record in records:
        rid = done.get(record.index, _MISSING)
        if rid is not _MISSING and rid != record.id:
            raise ValueError(f"{record.index}: the output has id {rid!r} but the input has "
                             f"{record.id!r}: the output belongs to another input file")


@dataclass
class OrderedWriter:
    """Appends result lines in the order of ``pending`` indices, whatever order they arrive in.

    ``add`` buffers a result; every result whose turn has come is written as one line and
    flushed (and fsynced every ``sync_every`` lines).
    """

    path: str | os.PathLike
    pending: list[int]
    sync_every: int = 64
    written: int = 0
    _buffer: dict[int, dict] = field(default_factory=dict)
    _next: int = 0
    _file: Any = None

    def __enter__(self) -> "OrderedWriter":
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, result: dict) -> Iterator[dict]:
        """Buffer one result; yield the results it lets the writer write, in order, each
        right after it is written (a caller that stops iterating leaves the rest buffered,
        so an interruption writes exactly what was reported)."""
        self._buffer[int(result["index"])] = result
        while self._next < len(self.pending) and self.pending[self._next] in self._buffer:
            done = self._buffer.pop(self.pending[self._next])
            self._file.write(json.dumps(done, ensure_ascii=False) + "\n")
            self._file.flush()
            self._next += 1
            self.written += 1
            if self.written % self.sync_every == 0:
                os.fsync(self._file.fileno())
            yield done

    @property
    def complete(self) -> bool:
        return self._next == len(self.pending)

    def close(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None


def plan(input_path: str | os.PathLike, output_path: str | os.PathLike,
         ) -> tuple[list[Record], int]:
    """(records still to do, number already done) for a job; repairs a torn output file."""
    records = list(read_records(input_path))
    done = scan_done(output_path)
    check_resume(done, records)
    todo = [r for r in records if r.index not in done]
    return todo, len(records) - len(todo)


def batches(records: list[Record], size: int) -> list[list[Record]]:
    """Consecutive slices of ``size`` records."""
    size = max(1, int(size))
    return [records[i:i + size] for i in range(0, len(records), size)]
