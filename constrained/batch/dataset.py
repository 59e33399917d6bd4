"""Constrained generation over a Ray Dataset: ``generate_dataset(ds, schema=...)``.

Rows need a ``prompt`` column (name configurable); ``id``, ``seed`` and ``index`` columns are
used when present. A row's seed is its ``seed``, else ``seed + index``, else ``seed`` plus a
CRC-32 of its id (or prompt): it depends only on the row, never on how Ray Data batches it.
"""
from __future__ import annotations

import json
import zlib
from typing import Any

from .records import Record
from .worker import BatchGenerator, JobSpec, build_grammar

OUTPUT_COLUMNS = ("text", "finish_reason", "complete", "seed", "prompt_tokens",
                  "completion_tokens", "forced_tokens", "prefill_ms", "decode_ms", "wall_ms",
                  "error")


def row_seed(row: dict, base_seed: int, prompt_column: str = "prompt") -> int:
    """The seed of a dataset row (see the module docstring)."""
    seed = row.get("seed")
    if seed is not None and seed == seed:  # not None / NaN
        return int(seed)
    index = row.get("index")
    if index is not None and index == index:
        return int(base_seed) + int(index)
    key = row.get("id")
    if key is None or key != key:
        key = row.get(prompt_column)
    data = json.dumps(_plain(key), sort_keys=True, ensure_ascii=False).encode("utf-8")
    return int(base_seed) + (zlib.crc32(data) & 0x7FFFFFFF)


def _plain(value: Any) -> Any:
    """numpy/pandas values as plain Python (lists, dicts, str, int)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class DatasetWorker:
    """``map_batches`` actor class: one BatchGenerator, pandas batches in and out."""

    def __init__(self, spec: JobSpec, prompt_column: str = "prompt") -> None:
        self.generator = BatchGenerator(spec)
        self.prompt_column = prompt_column

    def __call__(self, batch):
        rows = batch.to_dict("records")
        records = [Record(i, _plain(row[self.prompt_column]),
                          seed=row_seed(row, self.generator.spec.seed, self.prompt_column))
                   for i, row in enumerate(rows)]
        results = self.generator.run(records)
        out = batch.copy()
        for column in OUTPUT_COLUMNS:
            out[column] = [_column(res, column) for res in results]
        return out


def _column(result: dict, column: str) -> Any:
    if column in ("prefill_ms", "decode_ms", "wall_ms"):
        return float(result.get("timings", {}).get(column, 0.0))
    if column == "error":
        return result.get("error", "")
    return result.get(column)


def generate_dataset(ds, *, schema: Any = None, grammar: Any = None, regex: str | None = None,
                     model: str = "smollm2", sampling: dict | None = None,
                     max_new_tokens: int = 64, seed: int = 0, chat: bool | None = None,
                     system: str | None = None, complete_within_budget: bool = False,
                     workers: int = 2, batch_size: int = 4, num_cpus: float = 1,
                     prompt_column: str = "prompt"):
    """A lazy Dataset: ``ds``'s columns plus the generation's (text, finish_reason, complete,
    seed, token counts, timings in ms, error ("" when none)), computed by ``workers`` actors
    that each load the model and compile the grammar once."""
    spec = JobSpec(model=model, grammar=build_grammar(schema=schema, grammar=grammar,
                                                     regex=regex),
                   sampling=dict(sampling or {}), max_new_tokens=max_new_tokens, seed=seed,
                   chat=chat, system=system, complete_within_budget=complete_within_budget,
                   num_threads=max(1, int(num_cpus)))
    return ds.map_batches(DatasetWorker, fn_constructor_kwargs={"spec": spec,
                                                                "prompt_column": prompt_column},
                          batch_size=batch_size, batch_format="pandas", concurrency=workers,
                          num_cpus=num_cpus)  # Ray Data restarts dead actors, retries batches
