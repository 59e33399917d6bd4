"""A small bounded cache: the CFG engine's caches (and the converted schemas) use it.

Two generations approximate least-recently-used eviction at the cost of a dict lookup: entries
go to the young generation; when it holds half the capacity, the old generation is dropped and
the young one becomes old; an old entry that is read again moves back to the young one. Reads
and inserts take no lock (``dict.setdefault`` is one atomic step in CPython: of two threads
storing one key, both get the first one's value); only the change of generations does.
"""
from __future__ import annotations

import threading
from typing import Any, Hashable


class LRUCache:
    """At most ``capacity`` entries; entries not read for about ``capacity / 2`` insertions go
    first. ``None`` is not a storable value (it means a miss)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(2, int(capacity))
        self._half = self.capacity // 2
        self._young: dict = {}
        self._old: dict = {}
        self._lock = threading.Lock()

    @property
    def recent(self) -> dict:
        """The young generation: reading it directly is a faster, partial ``get``."""
        return self._young

    def get(self, key: Hashable, default: Any = None) -> Any:
        value = self._young.get(key)
        if value is not None:
            return value
        value = self._old.get(key)
        if value is None:
            return default
        return self.put(key, value)

    def put(self, key: Hashable, value: Any) -> Any:
        """Store ``value`` (or keep an equal key's existing value) and return the stored one."""
        young = self._young
        got = young.get(key)
        if got is not None:
            return got
        got = self._old.get(key)
        if got is not None:
            value = got
        if len(young) >= self._half:
            with self._lock:
                young = self._young
                if len(young) >= self._half:
                    self._old = young
                    young = self._young = {}
        return young.setdefault(key, value)

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def clear(self) -> None:
        with self._lock:
            self._young = {}
            self._old = {}
