"""The thread that serves one session's ``run_graph_async`` queue, in order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from queue import SimpleQueue

from openacl import atfork
from openacl.log import get_logger

__all__ = ["AsyncWorker"]

log = get_logger("ge")


class AsyncWorker:
    """Runs submitted jobs in order on ``openacl-ge-<session id>``; ``stop`` lets the queued ones finish."""

    def __init__(self, session_id: int) -> None:
        self._name = f"openacl-ge-{session_id}"
        self._stopped = False
        self._start()
        atfork.register(self, AsyncWorker._renew_in_child)

    def _start(self) -> None:
        self._queue: SimpleQueue[Callable[[], None] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def _renew_in_child(self) -> None:
        """A forked child: the thread is the parent's, and so are the runs it had queued (done once, there)."""
        if not self._stopped:
            self._start()

    def submit(self, job: Callable[[], None]) -> None:
        self._queue.put(job)

    def stop(self, join: bool = True) -> None:
        """Let the queued jobs finish (on a closed session they report FAILED), then end the thread."""
        self._stopped = True
        self._queue.put(None)
        if join and threading.current_thread() is not self._thread:
            self._thread.join()

    def _loop(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                job()
            except Exception:  # pragma: no cover - the session's job catches what it can; keep the worker alive
                log.exception("RunGraphAsync worker: a queued run failed")
            job = None  # the job holds its session: let an unused session be collected while we wait
