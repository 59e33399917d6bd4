"""Every MaskBench schema and every JSON Schema Test Suite schema, with the default limits on,
compiles (and gives a first mask) or is refused with a typed error: no crash, no hang, bounded
memory. The test uses a byte-level vocabulary to stay quick; ``python -m bench.crash_free``
runs the same on llama3."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.crash_free import run, schemas  # noqa: E402
from constrained import Vocabulary  # noqa: E402

BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)]
                                    + [b'": "', b'", "', b'{"', b'"}', b"true", b"<eos>"],
                                    eos_token_ids=[261])

pytestmark = pytest.mark.slow


def test_crash_free_run_over_every_schema():
    items = schemas()
    assert len(items) > 900            # both collections are there
    report = run(BYTES, items, timeout=60.0)
    print(report.table())
    assert not report.failures, report.failures
    total = sum(sum(c.values()) for c in report.counts.values())
    assert total == len(items)
    assert report.counts["maskbench-dev"]["compiled"] >= 450
    assert report.peak_rss_mb < 8000
