"""Files a user reads are complete or absent: the one way openacl writes a whole file under a name a user knows.

``replacing(path)`` opens a temporary file beside ``path`` (same directory, so the rename never crosses a file
system), hands it to the caller, and renames it over ``path`` only once everything has been written and the file
closed. A write that fails (a disk filling up mid-write, an exception in the caller's code) removes the temporary
file and leaves whatever ``path`` held before, so a reader sees the old file, the new one, or none: never half of
one. A path that names something other than a regular file (``/dev/stdout``, a pipe) is written in place, and a
symlink keeps pointing at the file it names, which is the one replaced. The temporary name is hidden (a leading dot)
and unique per process and call, so concurrent writers of one path never share a temporary file; the last rename
wins.

Not fsynced: a crash of the process leaves a whole file or none; surviving a power cut needs an fsync of the file
and its directory, which the checkpoint writer (``ge/sinks.py``) adds for itself. The dump files (``dump/sink.py``)
keep their own writer, which follows the same rule on its hot path.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["replacing", "temporary_name", "write_text"]

_serial = itertools.count()  # next() is atomic under the GIL; a forked child keeps counting under its own pid


def temporary_name(path: str | os.PathLike[str]) -> str:
    """A hidden name beside ``path`` that no other call (of this process or another) uses."""
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    return os.path.join(directory, f".{name}.{os.getpid()}.{next(_serial)}.tmp")


def _regular_or_absent(path: str | os.PathLike[str]) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str | None = None,
    newline: str | None = None,
    permissions: int = 0o666,
) -> Iterator[IO[Any]]:
    """A file open for writing (``mode`` "w" or "wb") whose contents replace ``path`` when the block ends
    without an exception; ``permissions`` are masked by the umask, as ``open`` does."""
    if mode not in ("w", "wb"):
        raise ValueError(f"replacing() writes a whole file: mode 'w' or 'wb', not {mode!r}")
    text = mode == "w"
    options = {"encoding": (encoding or "utf-8") if text else None, "newline": newline if text else None}
    if not _regular_or_absent(path):
        with open(path, mode, **options) as out:  # a pipe, a terminal, /dev/null: written in place
            yield out
        return
    target = os.path.realpath(path)  # a symlink stays one: the file it points at is replaced
    tmp = temporary_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, permissions)
    try:
        out = open(fd, mode, **options)  # noqa: SIM115 (closed below, before the rename)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        with out:  # closing flushes: a full disk shows here at the latest, before the rename
            yield out
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """``Path.write_text``, complete or absent."""
    with replacing(path, "w", encoding=encoding) as out:
        out.write(text)
