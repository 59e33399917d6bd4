"""A small bounded cache: the CFG engine's caches (and the converted schemas) use it.

Two generations approximate least-recently-used eviction at the cost of a dict lookup: entries
go to the young generation; when it holds half the capacity, the old generation is dropped and
the young one becomes old; an old entry that is read again moves back to the young one. Reads
take no lock (single dict operations are atomic in CPython); writes do.
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
        with self._lock:
            young = self._young
            old = young.get(key)
            if old is not None:
                return old
            old = self._old.get(key)
            if old is not None:
                value = old
            if len(young) >= self._half:
                self._old = young
                young = self._young = {}
            young[key] = value
            return value

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def clear(self) -> None:
        with self._lock:
            self._young = {}
            self._old = {}
