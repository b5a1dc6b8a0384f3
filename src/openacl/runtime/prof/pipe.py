"""The pipe writer: operator records go to a subscription's pipe on a thread of their own.

Guarantees:
- No model execution, stream or user call ever waits on a pipe: ``send`` only queues bytes. The writer thread
  (``openacl-prof-pipe``) waits for the pipe to have room (``poll``) and writes whole records, at most
  ``PIPE_BUF`` bytes at a time, so each write is atomic and a reader that reads a multiple of the record size
  always gets whole records.
- The thread starts when there is something to write and ends when its queue is empty; ``shutdown`` drops what
  is left (one warning) and joins it.
- A pipe that fails (reader gone, descriptor closed) loses the rest of its records with one warning.
- ``close_after`` closes the write end when its records are written, as CANN does after an unsubscribe, but
  only if the descriptor is still the file it was at subscribe time: a number the program closed and reused
  for another file is never closed.
"""

from __future__ import annotations

import collections
import errno
import os
import select
import threading
from dataclasses import dataclass

from openacl import atfork
from openacl.log import get_logger

log = get_logger("prof")

_POLL_S = 0.1  # how often a waiting writer looks for ``shutdown``


@dataclass(frozen=True)
class PipeEnd:
    """A write descriptor and the file it was when the subscription was made (device, inode)."""

    fd: int
    identity: tuple[int, int]

    @classmethod
    def of(cls, fd: int) -> PipeEnd | None:
        try:
            status = os.fstat(fd)
        except OSError:
            return None
        return cls(fd, (status.st_dev, status.st_ino))

    def unchanged(self) -> bool:
        found = PipeEnd.of(self.fd)
        return found is not None and found.identity == self.identity


class PipeWriter:
    def __init__(self, record_size: int) -> None:
        self._chunk = max(select.PIPE_BUF // record_size, 1) * record_size
        self._cond = atfork.condition()
        self._jobs: collections.deque[tuple[PipeEnd, bytes, bool]] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._unwritten = 0  # bytes the thread left when told to stop
        self._failed: set[PipeEnd] = set()  # pipes that failed: the rest of their records is dropped
        atfork.register(self, PipeWriter.reinit_after_fork)

    def send(self, end: PipeEnd, data: bytes, close_after: bool = False) -> None:
        """Queue ``data`` (whole records) for ``end``; ``close_after`` closes it once everything is written."""
        start = None
        with self._cond:
            self._jobs.append((end, data, close_after))
            if self._thread is None:
                self._stopping = False
                start = self._thread = threading.Thread(target=self._run, name="openacl-prof-pipe", daemon=True)
            self._cond.notify_all()
        if start is not None:
            start.start()  # started outside the lock

    def _run(self) -> None:
        failed = self._failed
        while True:
            with self._cond:
                if not self._jobs or self._stopping:
                    self._thread = None
                    self._cond.notify_all()
                    return
                end, data, close_after = self._jobs.popleft()
            if end not in failed and not self._write(end, data):
                failed.add(end)
            if close_after:
                if end.unchanged():
                    os.close(end.fd)
                failed.discard(end)

    def _write(self, end: PipeEnd, data: bytes) -> bool:
        view = memoryview(data)
        poller = select.poll()
        poller.register(end.fd, select.POLLOUT)
        while view:
            if self._stopping:
                self._unwritten += len(view)  # shutdown reports it, after joining this thread
                return True
            try:
                if not poller.poll(_POLL_S * 1000):
                    continue
                written = os.write(end.fd, view[: self._chunk])
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EINTR):
                    continue
                log.warning(
                    "profiling pipe fd %d: %s; its remaining %d bytes of operator records are dropped",
                    end.fd,
                    exc.strerror,
                    len(view),
                )
                return False
            view = view[written:]
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued is written (or dropped); False if ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._thread is None, timeout)

    def shutdown(self) -> None:
        """Drop what is not written yet (one warning) and join the thread."""
        with self._cond:
            dropped = sum(len(data) for _, data, _ in self._jobs)
            closing = [end for end, _, close_after in self._jobs if close_after]
            self._jobs.clear()
            self._stopping = True
            thread = self._thread
            self._cond.notify_all()
        if thread is not None:
            thread.join()
        dropped += self._unwritten
        self._unwritten = 0
        for end in closing:
            if end.unchanged():
                os.close(end.fd)
        if dropped:
            log.warning("profiling: %d bytes of operator records were not written to their pipes", dropped)

    def reinit_after_fork(self) -> None:
        """In a forked child (through :mod:`openacl.atfork`): no queued record, no thread."""
        self._jobs.clear()
        self._failed.clear()
        self._thread = None
        self._stopping = False
