"""Run the sampler tests single-threaded: their tensors are small, and on a busy machine
OpenMP thread contention makes tiny ops take milliseconds."""
import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
