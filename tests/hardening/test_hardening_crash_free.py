"""Every MaskBench schema and every JSON Schema Test Suite schema, with the default limits on,
compiles (and gives a first mask on llama3) or is refused with a typed error: no crash, no
hang, bounded memory."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.crash_free import run, schemas  # noqa: E402

pytestmark = pytest.mark.slow


def test_crash_free_run_over_every_schema(llama3_vocab):
    items = schemas()
    assert len(items) > 900            # both collections are there
    report = run(llama3_vocab, items, timeout=60.0)
    print(report.table())
    assert not report.failures, report.failures
    total = sum(sum(c.values()) for c in report.counts.values())
    assert total == len(items)
    assert report.counts["maskbench-dev"]["compiled"] >= 450
    assert report.peak_rss_mb < 8000
