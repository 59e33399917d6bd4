"""A real server on 127.0.0.1 (the embedded SmolLM2), started once for the server tests."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def server():
    """Base URL of a running server (SmolLM2, default limits)."""
    pytest.importorskip("uvicorn")
    from constrained.server.process import ServerProcess
    with ServerProcess(cwd=str(ROOT)) as url:
        yield url


@pytest.fixture(scope="session")
def client(server):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0,
                         timeout=300)
