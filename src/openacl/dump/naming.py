"""Where dump files go and what they are called: CANN's directory levels, file names, hashed long names (with their
``mapping.csv``) and timestamps. The one place dump names are made (spec/dump_format.md section 1).

Where openacl differs from CANN: :func:`sanitize` replaces every character msaccucmp's name pattern rejects (CANN
only space, ``.``, ``/`` and ``\\``), and :func:`hashed_name` uses a stable BLAKE2b hash where CANN uses
``std::hash`` of the path, which differs between builds. Both are decimal names listed in ``mapping.csv``.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import time

#: The longest file name (in UTF-8 bytes) Linux file systems take; longer names get a :func:`hashed_name`.
MAX_NAME_BYTES = 255
#: Where the disk writer records ``hash,original_name`` lines for hashed file names (one per directory).
MAPPING_FILE_NAME = "mapping.csv"

_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_UNSAFE_DIR_CHARS = re.compile(r"[./\\ \x00-\x1f\x7f]")


def sanitize(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_`` (msaccucmp's name pattern).

    CANN itself only replaces space, ``.``, ``/`` and ``\\``; anything else would make msaccucmp skip the file.
    """
    return _UNSAFE_NAME_CHARS.sub("_", name)


def _name_bytes(name: str) -> bytes:
    return name.encode("utf-8", "surrogatepass")


def _digest(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(_name_bytes(name), digest_size=8).digest(), "little")


def model_dir_name(model_name: str) -> str:
    """The directory name for a model: ``.``, ``/``, ``\\``, space and control characters become ``_``.

    The result is never empty, ``.`` or ``..``. A name longer than :data:`MAX_NAME_BYTES` bytes keeps its first
    part and ends in ``_`` plus a stable hash of the whole name.
    """
    name = _UNSAFE_DIR_CHARS.sub("_", model_name) or "_"
    raw = _name_bytes(name)
    if len(raw) > MAX_NAME_BYTES:
        suffix = f"_{_digest(model_name)}"
        head = raw[: MAX_NAME_BYTES - len(suffix)].decode("utf-8", "ignore")
        name = head + suffix
    return name


def now_us() -> int:
    """Microseconds since the epoch (16 digits): the file-name timestamp and ``DumpData.dump_time``."""
    return time.time_ns() // 1000


def time_str(seconds: float | None = None) -> str:
    """The ``YYYYMMDDHHMMSS`` directory name (local time) CANN adds under ``dump_path`` when dumping starts."""
    return time.strftime("%Y%m%d%H%M%S", time.localtime(seconds))


def file_name(op_type: str, op_name: str, task_id: int, stream_id: int, timestamp_us: int) -> str:
    """``{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}`` with op_type and op_name :func:`sanitize`-d.

    The timestamp is zero-padded to 16 digits (msaccucmp insists on 16). An op type or name that is empty
    becomes ``_``, so the name matches msaccucmp's pattern and never starts with a dot.
    """
    if task_id < 0 or stream_id < 0 or timestamp_us < 0:
        raise ValueError(
            f"task_id, stream_id and timestamp must not be negative, got {task_id}, {stream_id}, {timestamp_us}"
        )
    return file_name_with_prefix(file_name_prefix(op_type, op_name, task_id), stream_id, timestamp_us)


def file_name_prefix(op_type: str, op_name: str, task_id: int) -> str:
    """``{op_type}.{op_name}.{task_id}.``: the part of :func:`file_name` that is the same on every run."""
    return f"{sanitize(op_type) or '_'}.{sanitize(op_name) or '_'}.{int(task_id)}."


def dump_dir(
    dump_path: str | os.PathLike[str],
    time_str: str,
    device_id: int,
    model_name: str | None,
    model_id: int | None,
    step: int | None,
) -> pathlib.Path:
    """``{dump_path}/{time_str}/{device_id}/{model_name}/{model_id}/{step}`` (spec section 1.1).

    ``model_name`` goes through :func:`model_dir_name`. Like CANN's AICPU dump task, each of the last three
    levels is left out when it is ``None`` (a single-operator dump has none of them).
    """
    path = pathlib.Path(dump_path) / time_str / str(int(device_id))
    if model_name is not None:
        path /= model_dir_name(model_name)
    if model_id is not None:
        path /= str(int(model_id))
    if step is not None:
        path /= str(int(step))
    return path


def hashed_name(name: str) -> str | None:
    """A decimal stand-in for a file name longer than :data:`MAX_NAME_BYTES` UTF-8 bytes, else ``None``.

    The stand-in is stable across processes and machines (BLAKE2b, 64 bits, at most 20 digits). The disk writer
    then names the file with it and appends ``"{hash},{name}\\n"`` to :data:`MAPPING_FILE_NAME` in the same
    directory, as CANN's adump writer does; msaccucmp and :mod:`openacl.tools.parse` read the name back from there.
    """
    if len(_name_bytes(name)) <= MAX_NAME_BYTES:
        return None
    return str(_digest(name))


def file_name_with_prefix(prefix: str, stream_id: int, timestamp_us: int) -> str:
    """:func:`file_name` from its :func:`file_name_prefix` (made once per operator)."""
    return f"{prefix}{int(stream_id)}.{int(timestamp_us):016d}"
