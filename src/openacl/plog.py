"""CANN's process log files ("plog"): where a program's log records go unless it prints them to stdout.

CANN writes a host process's records to ``<root>/debug/plog/plog-<pid>_<YYYYmmddHHMMSSfff>.log``, where ``<root>``
is ``ASCEND_PROCESS_LOG_PATH``, else ``ASCEND_WORK_PATH/log``, else ``$HOME/ascend/log``. Directories are made
with mode 750 and files with mode 640; a file holds at most 20 MB, then the next one starts, and of a process's
files only the newest ``ASCEND_HOST_LOG_FILE_NUM`` (1..1000, default 10) are kept. openacl writes every record to
``debug/plog`` (it has none of CANN's run or security records, so ``run/plog`` stays empty); where CANN's default
root under ``ASCEND_WORK_PATH`` is ``log/`` is our reading of the docs, not confirmed.

Invariants: a file exists only once a line was written to it (a program that logs nothing creates nothing); each
line is one ``os.write`` on an unbuffered descriptor, so a forked child has no parent's bytes to write again and a
crash loses no line; a forked child writes files of its own, named with its pid (``renew_in_child``); ``_guard``
is held only around file operations, never while other code runs.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from openacl import atfork

MAX_FILE_BYTES = 20 * 1024 * 1024
DEFAULT_FILE_NUM = 10
DIR_MODE = 0o750
FILE_MODE = 0o640


def root_from_env() -> str:
    """The log root CANN's variables choose (``ASCEND_PROCESS_LOG_PATH`` > ``ASCEND_WORK_PATH`` > home)."""
    explicit = os.environ.get("ASCEND_PROCESS_LOG_PATH", "").strip()
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    work = os.environ.get("ASCEND_WORK_PATH", "").strip()
    if work:
        return os.path.join(os.path.abspath(os.path.expanduser(work)), "log")
    return os.path.join(os.path.expanduser("~"), "ascend", "log")


def file_num_from_env() -> int:
    """``ASCEND_HOST_LOG_FILE_NUM``: how many of a process's files are kept (an unset or bad value: 10)."""
    try:
        value = int(os.environ.get("ASCEND_HOST_LOG_FILE_NUM", "").strip())
    except ValueError:
        return DEFAULT_FILE_NUM
    return value if 1 <= value <= 1000 else DEFAULT_FILE_NUM


def _mkdirs(path: str) -> None:
    """``path`` and its missing parents, each new one with mode 750 (whatever the umask)."""
    if os.path.isdir(path):
        return
    _mkdirs(os.path.dirname(path))
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return  # made meanwhile (another process)
    os.chmod(path, DIR_MODE)


class PlogFiles:
    """The plog files of this process: opened at the first line, rotated at ``max_bytes``."""

    def __init__(self, max_bytes: int = MAX_FILE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._guard = atfork.lock()
        self._root = root_from_env()
        self._file_num = file_num_from_env()
        self._fd: int | None = None
        self._size = 0
        self._files: list[str] = []  # this process's files, oldest first; the last one is open
        self._failed: str | None = None  # why the files cannot be written (then lines are dropped)
        self._last_ms = 0  # the time stamped on the newest file, in milliseconds since the epoch

    @property
    def path(self) -> str | None:
        """The file being written, or None before the first line."""
        with self._guard:
            return self._files[-1] if self._fd is not None else None

    @property
    def directory(self) -> str:
        return os.path.join(self._root, "debug", "plog")

    def configure(self) -> None:
        """(Re)read the environment; a new root takes effect with a new file at the next line."""
        root, file_num = root_from_env(), file_num_from_env()
        with self._guard:
            self._file_num = file_num
            if root != self._root:
                self._close_locked()
                self._root, self._files, self._failed = root, [], None

    def write(self, line: str) -> str | None:
        """Append ``line`` (ending in a newline); returns why it could not be written the first time that
        happens (the caller says so once), else None."""
        data = line.encode("utf-8", "backslashreplace")
        with self._guard:
            if self._failed is not None:
                return None
            try:
                if self._fd is None or self._size + len(data) > self.max_bytes:
                    self._open_next_locked()
                assert self._fd is not None
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
                self._size += len(data)
            except OSError as exc:
                self._close_locked()
                self._failed = f"cannot write the log file in {self.directory}: {exc}"
                return self._failed
        return None

    def _open_next_locked(self) -> None:
        self._close_locked()
        directory = self.directory
        _mkdirs(directory)
        # Invariant: each file of a process is stamped later than the one before, by a millisecond at least (a
        # rotation within one would reuse its name), so names sort in the order the files were written.
        self._last_ms = max(int(time.time() * 1000), self._last_ms + 1)
        seconds, millis = divmod(self._last_ms, 1000)
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(seconds)) + f"{millis:03d}"
        path = os.path.join(directory, f"plog-{os.getpid()}_{stamp}.log")
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
        os.fchmod(self._fd, FILE_MODE)
        self._size = os.fstat(self._fd).st_size
        self._files.append(path)
        while len(self._files) > self._file_num:
            oldest = self._files.pop(0)
            with contextlib.suppress(OSError):  # already gone (removed by hand): nothing to age out
                os.unlink(oldest)

    def _close_locked(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def renew_in_child(self) -> None:
        """A forked child: the open file is the parent's; the child's first line starts a file named with its pid."""
        self._close_locked()
        self._files, self._size, self._failed = [], 0, None


def say_once(message: str) -> None:
    """One line on stderr about the log files themselves (they cannot hold it)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"openacl: {message}\n")
