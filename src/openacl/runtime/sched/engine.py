"""A device's engine: a small pool of worker threads that advance streams with WORK tasks.

Idle streams hold no thread: a stream that meets a WORK task goes on the engine's run queue, and a worker
advances it until it is idle or held (or has run its budget, then it goes to the back of the queue). Workers
are started lazily, outside ``LOCK`` (``lock.start_thread_locked``), up to ``max_workers``
(``OPENACL_ENGINE_THREADS``, default the CPU count, at least 2).

Invariant: once ``shutdown`` began, ``stopped`` is True and no stream of this engine accepts work
(``Stream.check_open_locked``: ``ACL_ERROR_RT_DEVICE_TASK_ABORT``), so nothing is queued to workers that are
gone. A forked child has none of its parent's workers: ``reset_after_fork`` forgets them.
"""

from __future__ import annotations

import os
import threading
from queue import SimpleQueue

from openacl import atfork
from openacl.log import get_logger
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched.stream import Stream

log = get_logger("rt")


def default_workers() -> int:
    return int(os.environ.get("OPENACL_ENGINE_THREADS", "0") or 0) or max(2, os.cpu_count() or 2)


class Engine:
    """A device's worker threads; streams with WORK tasks wait on its run queue."""

    def __init__(self, device_id: int, max_workers: int | None = None) -> None:
        self.device_id = device_id
        self.max_workers = max_workers or default_workers()
        self._queue: SimpleQueue[Stream | None] = SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self.stopped = False
        atfork.register(self, Engine.reset_after_fork)

    def submit_locked(self, stream: Stream) -> None:
        """Queue a stream to be advanced by a worker; start one (after LOCK is released) if none is idle."""
        self._queue.put(stream)
        if self._idle == 0 and len(self._workers) < self.max_workers and not self.stopped:
            worker = threading.Thread(
                target=self._work,
                args=(self._queue,),
                name=f"openacl-engine-d{self.device_id}-{len(self._workers)}",
                daemon=True,
            )
            self._workers.append(worker)
            self._idle += 1  # counted idle until it takes its first stream
            _lock.start_thread_locked(worker)

    def _work(self, queue: SimpleQueue) -> None:
        while True:
            stream = queue.get()
            with _lock.locked:
                self._idle -= 1
            if stream is None:
                return
            try:
                stream.run_on_engine()
            except BaseException:  # run_on_engine keeps its stream going; this only keeps the worker alive
                log.exception("engine of device %d: advancing %r failed", self.device_id, stream)
            with _lock.locked:
                self._idle += 1

    def shutdown(self, join: bool = True) -> None:
        """Refuse new work, stop the workers once the queue is drained; joins them unless called from one (or
        ``join`` is False: process exit, where a task still running must not hold the exit up)."""
        with _lock.locked:
            self.stopped = True
            workers = list(self._workers)
            self._workers.clear()
            for _ in workers:
                self._queue.put(None)
        if not join:
            return
        me = threading.current_thread()
        for worker in workers:
            if worker is not me and worker.ident is not None:
                worker.join()

    def reset_after_fork(self) -> None:
        """A forked child, before the scheduler is mended (nothing else runs yet): the parent's workers do not
        exist here, and the streams on their run queue are requeued by ``Stream.abandon_running_locked``."""
        self._queue = SimpleQueue()
        self._workers = []
        self._idle = 0

    def statistics(self) -> dict:
        with _lock.locked:
            return {"workers": len(self._workers), "idle": self._idle, "stopped": self.stopped}
