"""A small thread-safe LRU cache: every cache of the CFG engine is bounded by one of these."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable


class LRUCache:
    """At most ``capacity`` entries; the least recently used one goes first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key]

    def put(self, key: Hashable, value: Any) -> Any:
        """Store ``value`` (or keep an equal key's existing value) and return the stored one."""
        with self._lock:
            old = self._data.get(key)
            if old is not None:
                self._data.move_to_end(key)
                return old
            self._data[key] = value
            if len(self._data) > self.capacity:
                self._data.popitem(last=False)
            return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
