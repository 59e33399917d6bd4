"""Keeping the engine's long-lived, acyclic objects out of the cyclic garbage collector's lists.

Caches hold many small objects for long: terminals and automata of converted schemas, and a
compiled grammar's terminal sets, walk results and mask-tree nodes, filled during generation.
Each tracked container is walked by every collection of its generation, and the containers
that survive the young ones count towards the next full collection, which walks every tracked
object of the process (tens of milliseconds, paid by whichever mask step sets it off).
Objects that can be in no reference cycle (sets of ints, tuples of such objects and arrays,
nodes that refer only to deeper nodes) are freed by reference counting alone, so the
collector need not know them: ``untrack_all`` tells it so (CPython itself untracks tuples and
dicts of atoms, lazily). Only objects never changed afterwards, or changed only by adding
objects that are themselves acyclic, may be passed.
"""
from __future__ import annotations

from ._gc_untrack import untrack_all    # untrack_all(*objs), in C: one call for all

__all__ = ["untrack_all"]
