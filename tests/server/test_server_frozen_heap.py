"""The server keeps what it loaded out of the collector's later collections while it serves."""
from __future__ import annotations

import gc

from constrained.server import _frozen_heap


def test_the_loaded_heap_is_frozen_while_serving_and_released_after():
    loaded = [{"weights": i} for i in range(1000)]
    assert gc.get_freeze_count() == 0
    with _frozen_heap():
        assert gc.get_freeze_count() >= len(loaded)
        assert not any(o is loaded for o in gc.get_objects())
        made_while_serving = [{"request": 1}]
        assert any(o is made_while_serving for o in gc.get_objects())
    assert gc.get_freeze_count() == 0
    assert any(o is loaded for o in gc.get_objects())
