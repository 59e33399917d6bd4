"""Batch jobs: constrained generation for every record of a JSON-lines file or a Ray Dataset,
in one process or on Ray worker actors, resumable and in input order."""
from .local import JobSummary, run_local
from .records import Record, read_records
from .worker import BatchGenerator, JobSpec, build_grammar

__all__ = ["BatchGenerator", "JobSpec", "JobSummary", "Record", "build_grammar",
           "generate_dataset", "read_records", "run_local", "run_ray"]


def __getattr__(name: str):
    # the Ray parts import Ray only when used
    if name == "run_ray":
        from .ray_runner import run_ray
        return run_ray
    if name == "generate_dataset":
        from .dataset import generate_dataset
        return generate_dataset
    raise AttributeError(name)
