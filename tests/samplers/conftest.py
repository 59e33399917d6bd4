"""Run the sampler tests single-threaded (the shared one_torch_thread fixture)."""
import pytest


@pytest.fixture(autouse=True)
def _single_thread(one_torch_thread):
    yield
