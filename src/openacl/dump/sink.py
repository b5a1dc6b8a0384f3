"""Where dump files go: whole files on disk, or chunks to the user's dump callback.

Guarantees:
- One background thread (``openacl-dump``) delivers every dump file, in the order they were submitted.
- Memory is bounded: ``submit`` blocks while the bytes queued but not yet delivered exceed the budget
  (``OPENACL_DUMP_BUFFER_MB``, default 512); one file larger than the budget still goes through alone. Both
  settings here are read when dumping is configured (``DumpWriter.read_settings``).
- On disk a file appears whole or not at all: it is written under a hidden temporary name in its directory
  and renamed into place; a failed write (disk full, permission) removes the temporary file and is reported
  as ``ACL_ERROR_WRITE_FILE`` to whoever waits for that file.
- Through a callback, each file arrives as chunks of at most ``OPENACL_DUMP_CHUNK_BYTES`` (default and
  maximum 128 MiB, as CANN's ``DUMP_SLICE_SIZE``), in order; concatenated, they are exactly the disk file.
  ``data_buf`` is the address of host memory that ``acl.util.ptr_to_bytes`` can read during the call
  (large tensors are handed out in place, without a copy: see ``ChunkTarget``).
- The dump thread lets go of each file as soon as it is delivered, before it takes its lock again: a file may
  hold the last reference to the user's callback or to a tensor, whose finalizer is user code.
- A file is delivered after the execution has gone on (its outputs written, for a callback even after it has
  returned), so a part that views memory the user owns (a model input is a zero-copy view of the user's
  device buffer) is copied in ``submit_many``, on the submitting thread: the file holds this step's input even
  when the execution writes an output over it (in place) or the program writes its next batch at once. Only
  those parts (``OutgoingFile.borrowed``) are copied; outputs and intermediates belong to the dump and go out
  in place.
- The user's callback runs on the dump thread with no openacl lock held; an exception in it is logged and
  that chunk counts as not delivered.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from openacl import atfork
from openacl.dump import naming
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import memory

log = get_logger("dump")

MAX_CHUNK_BYTES = 128 * 1024 * 1024


def chunk_bytes() -> int:
    try:
        wanted = int(os.environ.get("OPENACL_DUMP_CHUNK_BYTES", MAX_CHUNK_BYTES))
    except ValueError:
        wanted = MAX_CHUNK_BYTES
    return min(max(wanted, 1), MAX_CHUNK_BYTES)


def buffer_budget() -> int:
    try:
        return max(int(os.environ.get("OPENACL_DUMP_BUFFER_MB", "512")), 1) * 1024 * 1024
    except ValueError:
        return 512 * 1024 * 1024


@dataclass
class Batch:
    """The files of one execution: whoever submitted them can wait for all of them."""

    pending: int = 0
    sealed: bool = False  # Invariant: set once every file is submitted; ``done`` only fires after it
    errors: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=atfork.event)

    def wait(self) -> None:
        """Block until every file of the batch is delivered; ``ACL_ERROR_WRITE_FILE`` if one failed."""
        self.done.wait()
        if self.errors:
            raise AclError(AclCode.ACL_ERROR_WRITE_FILE, "; ".join(self.errors[:3]))


@dataclass
class OutgoingFile:
    """One file on its way to disk or to the callback (``format.DumpFile`` is a file read back)."""

    directory: str  # absolute
    name: str
    parts: Sequence[bytes | memoryview]
    size: int
    batch: Batch | None = None
    callback: Callable | None = None  # None: to disk
    borrowed: frozenset[int] = frozenset()  # indices of parts that view the user's memory (model inputs)

    @property
    def path(self) -> str:
        """``directory`` joined with ``name`` (a file name, no separator in it), as ``os.path.join`` would."""
        directory = self.directory
        return f"{directory}/{self.name}" if directory and directory[-1] != "/" else directory + self.name


def write_parts(out, parts: Sequence[bytes | memoryview]) -> None:
    """Write ``parts`` in order; large ones through numpy's ``tofile`` (C stdio), measurably faster here than
    ``os.write`` of the same memory. Raises ``OSError`` (disk full, ...) like any write."""
    for part in parts:
        view = memoryview(part).cast("B")
        if len(view) < 65536:
            out.write(view)
        else:
            out.flush()
            try:
                np.frombuffer(view, np.uint8).tofile(out)
            except OSError as exc:
                if exc.errno is None:  # numpy drops errno; one more byte through the OS says why (ENOSPC, EIO...)
                    os.write(out.fileno(), view[:1])
                raise


class DiskTarget:
    """Atomic files: hidden temporary name, full write, rename."""

    def __init__(self) -> None:
        self._made: set[str] = set()

    def write(self, file: OutgoingFile) -> None:
        directory = file.directory
        if directory not in self._made:
            os.makedirs(directory, exist_ok=True)
            self._made.add(directory)
        name = file.name
        hashed = naming.hashed_name(name)
        final = os.path.join(directory, hashed or name)
        tmp = os.path.join(directory, f".{hashed or name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        except FileNotFoundError:  # the directory was removed since we made it: make it again
            os.makedirs(directory, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        try:
            with open(fd, "wb", closefd=True) as out:
                write_parts(out, file.parts)
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if hashed:
            with open(os.path.join(directory, naming.MAPPING_FILE_NAME), "a", encoding="utf-8") as mapping:
                mapping.write(f"{hashed},{name}\n")


class ChunkTarget:
    """Hands a file to the callback as chunks, copying only what is small.

    Small parts (the header, small tensors) are packed into one reusable host buffer; a tensor of at least
    ``DIRECT_BYTES`` goes out as chunks that point straight into its own memory, so a dump through a
    callback costs no copy of its large tensors. Chunk borders therefore fall at tensor borders where CANN
    cuts at fixed 128 MiB steps; a consumer that appends chunks, as the documentation says to, sees the
    same file.
    """

    DIRECT_BYTES = 256 * 1024

    def __init__(self) -> None:
        self._buffer: np.ndarray | None = None  # DIRECT_BYTES, made at the first write
        self._loan: memory.Region | None = None  # the packing buffer's region, registered only during a write
        self.delivered = 0
        self.failed = 0
        self.limit = chunk_bytes()  # the most bytes a chunk holds (``DumpWriter.read_settings``)

    def write(self, file: OutgoingFile) -> None:
        """Deliver one file; the packing buffer is known memory (``ptr_to_bytes`` reads it) only meanwhile."""
        if self._loan is None:
            self._buffer = np.empty(self.DIRECT_BYTES, np.uint8)
            self._loan = memory.loan(self._buffer)
        buffer, packing = self._buffer, self._loan
        limit = self.limit
        packed = min(limit, self.DIRECT_BYTES)  # a packed chunk's most bytes (a file's last one may hold fewer)
        name, callback = file.path, file.callback
        filled = 0
        remaining = file.size
        memory.space.add(packing)
        try:
            for part in file.parts:
                view = part if type(part) is bytes else memoryview(part).cast("B")
                length = len(view)
                if length >= self.DIRECT_BYTES:
                    if filled:
                        self._deliver(callback, name, packing.addr, filled, False)
                        filled = 0
                    loan = memory.loan(np.frombuffer(view, np.uint8))  # ptr_to_bytes reads it during the call
                    memory.space.add(loan)
                    try:
                        for start in range(0, length, limit):
                            size = min(limit, length - start)
                            remaining -= size
                            self._deliver(callback, name, loan.addr + start, size, remaining == 0)
                    finally:
                        memory.space.discard(loan)
                    continue
                start = 0
                while start < length:
                    take = min(length - start, packed - filled)
                    buffer[filled : filled + take] = np.frombuffer(view, np.uint8, take, start)
                    filled += take
                    start += take
                    remaining -= take
                    if filled == packed or remaining == 0:
                        self._deliver(callback, name, packing.addr, filled, remaining == 0)
                        filled = 0
            if file.size == 0:
                self._deliver(callback, name, packing.addr, 0, True)
        finally:
            memory.space.discard(packing)

    def _deliver(self, callback: Callable, name: str, addr: int, length: int, last: bool) -> None:
        chunk = {
            "file_name": name,
            "data_buf": addr,
            "buf_len": length,
            "is_last_chunk": int(last),
            "offset": -1,
            "flag": 0,
        }
        try:
            callback(chunk)
        except Exception:
            self.failed += 1
            log.exception("dump callback raised on a chunk of %s: that chunk was not delivered", name)
        else:
            self.delivered += 1


class DumpWriter:
    """The dump thread and its bounded queue.

    One lock, two conditions: the dump thread waits on ``_has_work``; submitters over budget and flushers
    wait on ``_progress``, which is notified only when one of them can go on (so a flush is woken once, not
    once per file).
    """

    def __init__(self) -> None:
        self._lock = atfork.lock()
        self._has_work = atfork.condition(self._lock)
        self._progress = atfork.condition(self._lock)
        self._queue: collections.deque[OutgoingFile] = collections.deque()
        self._queued_bytes = 0
        self._submitted = 0
        self._finished = 0  # Invariant: files delivered or failed, in submission order
        self._flush_targets: list[int] = []  # heap of the counts flushers wait for
        self._blocked = 0  # submitters waiting for room in the budget
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.disk = DiskTarget()
        self.chunks = ChunkTarget()
        self.budget = buffer_budget()  # (``read_settings``)

    def read_settings(self) -> None:
        """Read ``OPENACL_DUMP_BUFFER_MB`` and ``OPENACL_DUMP_CHUNK_BYTES`` (at start, and whenever dumping is
        configured: ``acl.init``, ``init_dump``, ``set_dump``, ``dump_reg_callback``). Not per file: reading the
        environment costs several microseconds on a thread whose caches a model run has just filled."""
        self.budget = buffer_budget()
        self.chunks.limit = chunk_bytes()

    def on_dump_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit_many(self, files: Sequence[OutgoingFile], wake: bool = True) -> None:
        """Queue files in order; blocks while the queue holds more than the memory budget. Borrowed parts are
        copied first (see the module's guarantees). ``wake`` False leaves the dump thread asleep until ``seal``
        or ``flush`` (or the budget) needs it: each wake costs the waking thread up to 50 µs on a machine whose
        other core sleeps, and a step's files are delivered while its plain run runs anyway."""
        budget = self.budget
        on_dump_thread = self.on_dump_thread()
        for file in files:
            if file.borrowed:
                file.parts = [bytes(part) if i in file.borrowed else part for i, part in enumerate(file.parts)]
        with self._lock:
            self._ensure_thread_locked()
            for file in files:
                if file.batch is not None:
                    file.batch.pending += 1
                while self._queued_bytes and self._queued_bytes + file.size > budget and not on_dump_thread:
                    self._blocked += 1
                    self._has_work.notify()
                    self._progress.wait()
                    self._blocked -= 1
                self._queue.append(file)
                self._queued_bytes += file.size
                self._submitted += 1
            if wake:
                self._has_work.notify()
        if on_dump_thread:  # a dump callback dumping: deliver now rather than wait on ourselves
            self._drain_own_queue()

    def _ensure_thread_locked(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="openacl-dump", daemon=True)
            self._thread.start()

    def _drain_own_queue(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                file = self._queue.popleft()
            self._deliver(file)
            del file  # before the lock is taken again: see _run

    def flush(self) -> None:
        """Return when every file submitted before the call is delivered (at once on the dump thread)."""
        if self.on_dump_thread():
            return
        with self._lock:
            target = self._submitted
            if self._finished >= target:
                return
            heapq.heappush(self._flush_targets, target)
            self._has_work.notify()
            try:
                while self._finished < target and self._thread is not None and self._thread.is_alive():
                    self._progress.wait()
            finally:
                self._flush_targets.remove(target)
                heapq.heapify(self._flush_targets)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopping:
                    self._has_work.wait()
                if not self._queue:
                    return
                file = self._queue.popleft()
            self._deliver(file)
            # Let go of the delivered file here, not when the next one is taken under the lock: it may hold the
            # last reference to a callback or a tensor, whose finalizer is user code (and may call the dump API).
            del file

    def _deliver(self, file: OutgoingFile) -> None:
        error = None
        try:
            if file.callback is not None:
                self.chunks.write(file)
            else:
                self.disk.write(file)
        except OSError as exc:
            error = f"cannot write dump file {file.path}: {exc.strerror or exc}"
        except Exception as exc:
            error = f"dump of {file.path} failed: {exc}"
            log.exception("dump of %s failed", file.path)
        if error:
            log.error("%s (ACL_ERROR_WRITE_FILE)", error)
        with self._lock:
            self._queued_bytes -= file.size
            self._finished += 1
            batch = file.batch
            if batch is not None:
                if error:
                    batch.errors.append(error)
                batch.pending -= 1
                if batch.pending == 0 and batch.sealed:
                    batch.done.set()
            if self._blocked or (self._flush_targets and self._flush_targets[0] <= self._finished):
                self._progress.notify_all()

    def seal(self, batch: Batch) -> None:
        """No more files will join ``batch``: its ``wait`` may return once they are delivered."""
        with self._lock:
            batch.sealed = True
            if batch.pending == 0:
                batch.done.set()
            if self._queue:
                self._has_work.notify()

    def stop(self) -> None:
        """Deliver what is queued, then end the thread."""
        with self._lock:
            self._stopping = True
            thread = self._thread
            self._has_work.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            self._thread = None
            self._progress.notify_all()

    def statistics(self) -> dict:
        with self._lock:
            return {
                "submitted": self._submitted,
                "finished": self._finished,
                "queued_bytes": self._queued_bytes,
                "chunks_delivered": self.chunks.delivered,
                "chunks_failed": self.chunks.failed,
            }

    def renew_in_child(self) -> None:
        """A forked child: the dump thread is the parent's, and so are the files it had queued (written once,
        there): they count as finished here, so a flush in the child does not wait for them."""
        dropped, self._queue = self._queue, collections.deque()
        for file in dropped:
            if file.batch is not None:
                file.batch.pending -= 1
                if file.batch.pending == 0 and file.batch.sealed:
                    file.batch.done.set()
        self._queued_bytes = 0
        self._finished = self._submitted
        self._flush_targets = []
        self._blocked = 0
        self._thread = None
        self._stopping = False


writer = atfork.register(DumpWriter(), DumpWriter.renew_in_child)
