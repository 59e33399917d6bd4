"""Run ``python -m constrained serve`` as a child process (tests, benchmarks, scripts)."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from typing import Sequence


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server in a child process: ``with ServerProcess(["--max-rows", "4"]) as url: ...``.

    ``url`` is the base URL (``http://127.0.0.1:PORT``; the OpenAI base_url is ``url + "/v1"``).
    Starting waits until ``/health`` answers (the model is loaded); a child that exits first
    raises RuntimeError with its output.
    """

    def __init__(self, args: Sequence[str] = (), *, model: str = "smollm2",
                 host: str = "127.0.0.1", timeout: float = 300.0, cwd: str | None = None) -> None:
        self.args = list(args)
        self.model = model
        self.host = host
        self.timeout = timeout
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> str:
        port = free_port(self.host)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "constrained", "serve", "--model", self.model, "--host",
             self.host, "--port", str(port), *self.args], cwd=self.cwd,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = f"http://{self.host}:{port}"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.proc.stdout.read()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self.url
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the server did not answer within {self.timeout:.0f} s")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
