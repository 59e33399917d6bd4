"""The serving loop: one thread decodes every request's rows together (continuous batching).

Requests arrive as :class:`Job` s (rows ready to decode). Between two forward passes the loop
lets waiting jobs join the batch and finished rows leave it, so a request never waits for
another to finish, and each row keeps its own grammar, sampler chain and options. Events go
back to the request's asyncio queue: a row started, a text piece, a row done (with its result
or its error). A cancelled job's rows leave at the next step.
"""
from __future__ import annotations

import asyncio
import itertools
import sys
import threading
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..decoding.loop import DecodeOptions, Decoder
from ..decoding.rows import Row
from .protocol import RequestError

_ids = itertools.count()


@dataclass
class Event:
    """``kind``: "started", "piece" (``text``; ``n_tokens`` generated so far), "done"
    (``result`` or ``error``)."""

    kind: str
    choice: int
    text: str = ""
    n_tokens: int = 0
    result: Any = None
    error: BaseException | None = None


@dataclass
class Job:
    """One request's rows (one per choice) and the queue its events go to."""

    rows: list[Row]
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)
    id: int = field(default_factory=lambda: next(_ids))

    def cancel(self) -> None:
        """Free the rows (a client went away); safe from any thread."""
        for row in self.rows:
            row.cancelled = True

    def emit(self, event: Event) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
        except RuntimeError:   # the event loop is closed: nobody listens any more
            self.cancel()


class BatchEngine:
    """Runs a Decoder in a thread; ``submit`` queues a job (503 when the server is full)."""

    def __init__(self, model, vocab, pad_token_id: int, *, max_rows: int = 32,
                 max_waiting: int = 64, overlap: bool | str = "auto") -> None:
        self.model = model
        self.vocab = vocab
        self.pad_token_id = pad_token_id
        self.max_rows = max_rows
        self.max_waiting = max_waiting
        self.overlap = overlap
        self.decoder = self._new_decoder()
        self._waiting: deque[Job] = deque()
        self._owner: dict[int, tuple[Job, int]] = {}     # row index -> (job, choice)
        self._unstarted: set[int] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="constrained-engine",
                                        daemon=True)
        self._thread.start()

    def _new_decoder(self) -> Decoder:
        return Decoder(self.model, self.vocab, [], DecodeOptions(overlap=self.overlap),
                       self.pad_token_id, isolate_errors=True)

    # status --------------------------------------------------------------------------------------
    @property
    def rows_in_use(self) -> int:
        return len(self._owner)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    # requests ------------------------------------------------------------------------------------
    def submit(self, job: Job) -> None:
        """Queue a job; RequestError(503) when the rows and the waiting queue are full."""
        if len(job.rows) > self.max_rows:
            raise RequestError(f"the request needs {len(job.rows)} rows; the server runs at "
                               f"most {self.max_rows}", "n")
        with self._lock:
            if len(self._waiting) >= self.max_waiting:
                raise RequestError("the server is busy: too many requests are waiting; retry "
                                   "later", None, status=503, kind="server_busy")
            self._waiting.append(job)
        self._wake.set()

    def close(self) -> None:
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=30)
        self.decoder.close()

    # the loop ------------------------------------------------------------------------------------
    def _admit(self) -> None:
        with self._lock:
            while self._waiting and (len(self._owner) + len(self._waiting[0].rows)
                                     <= self.max_rows):
                job = self._waiting.popleft()
                for choice, row in enumerate(job.rows):
                    self._owner[row.index] = (job, choice)
                    self._unstarted.add(row.index)
                self.decoder.admit(job.rows)

    def _run(self) -> None:
        while not self._stop:
            self._admit()
            if not self.decoder.busy:
                self._wake.wait(0.5)
                self._wake.clear()
                continue
            try:
                pieces, finished = self.decoder.step()
            except Exception as exc:  # the model or the loop failed: every row fails
                traceback.print_exc(file=sys.stderr)
                self._fail_all(exc)
                continue
            self._dispatch(pieces, finished)

    def _dispatch(self, pieces, finished: list[Row]) -> None:
        if self._unstarted:
            for row in self.decoder.active:
                if row.index in self._unstarted:
                    self._unstarted.discard(row.index)
                    job, choice = self._owner[row.index]
                    job.emit(Event("started", choice))
        for index, text in pieces:
            owner = self._owner.get(index)
            if owner is not None:
                job, choice = owner
                job.emit(Event("piece", choice, text=text, n_tokens=len(job.rows[choice].tokens)))
        for row in finished:
            owner = self._owner.pop(row.index, None)
            self._unstarted.discard(row.index)
            if owner is None:
                continue
            job, choice = owner
            if row.error is not None:
                job.emit(Event("done", choice, error=row.error))
            else:
                job.emit(Event("done", choice, result=row.result(),
                               n_tokens=len(row.tokens)))

    def _fail_all(self, exc: Exception) -> None:
        with self._lock:
            owners = list(self._owner.items())
            self._owner.clear()
            self._unstarted.clear()
        for _, (job, choice) in owners:
            job.emit(Event("done", choice, error=exc))
        self.decoder.close()
        self.decoder = self._new_decoder()
