"""Run a batch job in this process: one generator, batches in input order."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from .progress import Progress
from .records import OrderedWriter, batches, plan
from .worker import BatchGenerator, JobSpec


@dataclass
class JobSummary:
    """What a run did: records in the input, skipped as already done, written, failed."""

    total: int
    skipped: int
    written: int
    errors: int
    seconds: float


def run_local(input_path: str | os.PathLike, output_path: str | os.PathLike, spec: JobSpec, *,
              batch_size: int = 4, progress: bool = True,
              on_result: Callable[[dict], None] | None = None,
              generator: BatchGenerator | None = None) -> JobSummary:
    """Generate every record not yet in ``output_path`` and append the results in input order.

    ``on_result`` is called with each result once it is written (in input order);
    ``generator`` reuses a loaded BatchGenerator.
    """
    import time
    start = time.perf_counter()
    todo, skipped = plan(input_path, output_path)
    bar = Progress(skipped + len(todo), done=skipped, enabled=progress)
    errors = 0
    if todo:
        generator = generator or BatchGenerator(spec)
        with OrderedWriter(output_path, [r.index for r in todo]) as writer:
            for batch in batches(todo, batch_size):
                for finished in generator.run(batch):
                    for result in writer.add(finished):
                        failed = int("error" in result)
                        errors += failed
                        bar.update(1, errors=failed)
                        if on_result is not None:
                            on_result(result)
    bar.close()
    return JobSummary(skipped + len(todo), skipped, len(todo), errors,
                      time.perf_counter() - start)
