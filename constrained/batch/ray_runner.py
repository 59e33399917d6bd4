"""Run a batch job on Ray: worker actors each hold a BatchGenerator; batches go to free actors.

Each actor loads the model and compiles the grammar once. A killed actor is restarted by Ray
(``max_restarts``) and its unfinished batches are retried (``max_task_retries``); a batch whose
actor is gone for good goes back in the queue for the others. Results are written in input
order by the driver, so the output is the same as the single-process run's.
"""
from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from .local import JobSummary
from .progress import Progress
from .records import OrderedWriter, Record, batches, plan
from .worker import BatchGenerator, JobSpec


def ray_available() -> bool:
    """Whether Ray can be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise ImportError("Ray is not installed: pip install 'ray[data]' (or the project's "
                          "'ray' extra), or run without --workers/--ray-address") from exc
    return ray


class _Worker:
    """Actor body: one BatchGenerator."""

    def __init__(self, spec: JobSpec) -> None:
        self.generator = BatchGenerator(spec)

    def info(self) -> dict:
        return self.generator.info()

    def run(self, records: list[Record]) -> list[dict]:
        return self.generator.run(records)


def code_runtime_env() -> dict:
    """A runtime_env shipping this project's packages to a remote cluster's workers."""
    root = Path(__file__).resolve().parents[2]
    modules = [str(root / name) for name in ("constrained", "samplers") if (root / name).is_dir()]
    return {"py_modules": modules}


def init_ray(address: str | None = None, *, num_cpus: int | None = None,
             ship_code: bool = False) -> bool:
    """Connect to ``address`` or start a local cluster; True when this call started Ray."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
    if ship_code:
        kwargs["runtime_env"] = code_runtime_env()
    if address:
        ray.init(address=address, **kwargs)
    else:
        # the job is this machine's main work: Ray would otherwise nice its workers to 15
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False,
                 object_store_memory=256 * 1024 * 1024, **kwargs)
    return True


class RayRunner:
    """Runs jobs of one JobSpec on ``workers`` actors (created on the first run, then reused)."""

    def __init__(self, spec: JobSpec, *, workers: int = 2, cpus_per_worker: float = 1,
                 max_restarts: int = 3, max_task_retries: int = 3,
                 inflight_per_worker: int = 2) -> None:
        self.spec = spec
        self.workers = int(workers)
        self.cpus_per_worker = cpus_per_worker
        self.max_restarts = max_restarts
        self.max_task_retries = max_task_retries
        self.inflight = max(1, int(inflight_per_worker))
        self.actors: list = []
        self.infos: list[dict] = []

    def start(self) -> None:
        """Create the actors and wait until each has loaded its model and grammar."""
        if self.actors:
            return
        ray = _import_ray()
        from ray.exceptions import RayActorError
        threads = self.spec.num_threads or max(1, int(self.cpus_per_worker))
        spec = _replace(self.spec, num_threads=threads)
        cls = ray.remote(num_cpus=self.cpus_per_worker, max_restarts=self.max_restarts,
                         max_task_retries=self.max_task_retries)(_Worker)
        self.actors = [cls.remote(spec) for _ in range(self.workers)]
        try:
            self.infos = ray.get([a.info.remote() for a in self.actors])
        except RayActorError as exc:
            self.shutdown()
            raise RuntimeError(f"the Ray workers could not start: {exc}") from exc

    def shutdown(self) -> None:
        """Kill the actors."""
        if self.actors:
            ray = _import_ray()
            for actor in self.actors:
                ray.kill(actor)
            self.actors = []

    def run(self, input_path: str | os.PathLike, output_path: str | os.PathLike, *,
            batch_size: int = 4, progress: bool = True,
            on_result: Callable[[dict], None] | None = None) -> JobSummary:
        """Generate every record not yet in ``output_path``; append results in input order."""
        start = time.perf_counter()
        todo, skipped = plan(input_path, output_path)
        bar = Progress(skipped + len(todo), done=skipped, enabled=progress)
        errors = 0
        if todo:
            self.start()
            with OrderedWriter(output_path, [r.index for r in todo]) as writer:
                for results in self._dispatch(batches(todo, batch_size)):
                    for finished in results:
                        for result in writer.add(finished):
                            failed = int("error" in result)
                            errors += failed
                            bar.update(1, errors=failed)
                            if on_result is not None:
                                on_result(result)
        bar.close()
        return JobSummary(skipped + len(todo), skipped, len(todo), errors,
                          time.perf_counter() - start)

    def _dispatch(self, work: list[list[Record]]):
        """Yield each batch's results as it finishes; resubmit batches of dead actors."""
        ray = _import_ray()
        from ray.exceptions import RayActorError
        queue = deque(work)
        alive = list(self.actors)
        load = {id(a): 0 for a in alive}
        running: dict = {}
        while queue or running:
            for _ in range(self.inflight):  # one batch per actor per round: spread the work
                for actor in alive:
                    if queue and load[id(actor)] < self.inflight:
                        batch = queue.popleft()
                        running[actor.run.remote(batch)] = (actor, batch)
                        load[id(actor)] += 1
            if not running:
                raise RuntimeError("every Ray worker died; the job cannot finish")
            [ref], _ = ray.wait(list(running), num_returns=1)
            actor, batch = running.pop(ref)
            load[id(actor)] -= 1
            try:
                results = ray.get(ref)
            except RayActorError:
                if actor in alive:
                    alive.remove(actor)
                queue.appendleft(batch)
                continue
            yield results


def _replace(spec: JobSpec, **changes) -> JobSpec:
    from dataclasses import replace
    return replace(spec, **changes)


def run_ray(input_path: str | os.PathLike, output_path: str | os.PathLike, spec: JobSpec, *,
            workers: int = 2, batch_size: int = 4, address: str | None = None,
            progress: bool = True, ship_code: bool | None = None,
            on_result: Callable[[dict], None] | None = None) -> JobSummary:
    """Run a job on Ray: connect to ``address`` or start a local cluster, shut it down after."""
    ray = _import_ray()
    cpus = os.cpu_count() or 1
    started = init_ray(address, num_cpus=max(cpus, workers),
                       ship_code=bool(address) if ship_code is None else ship_code)
    per_worker = spec.num_threads or (1 if address else max(1, cpus // workers))
    runner = RayRunner(spec, workers=workers, cpus_per_worker=per_worker)
    try:
        return runner.run(input_path, output_path, batch_size=batch_size, progress=progress,
                          on_result=on_result)
    finally:
        runner.shutdown()
        if started:
            ray.shutdown()
