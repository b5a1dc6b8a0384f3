"""A model's graph without its weights' bytes: what openacl keeps of a loaded model, and builds sessions from.

Parsing a whole ONNX file with protobuf holds its weights twice (the file's bytes and the parsed message) and
keeping the message holds them for the model's life, beside onnxruntime's own copy. Instead the file is walked
at the wire-format level: every initializer whose ``raw_data`` is at least :data:`LARGE_BYTES` is rewritten as
ONNX *external data* pointing back into the model's own bytes (its file, or for a model from memory an
in-memory file of that name), and only the rest is parsed. The result is a complete, valid ModelProto of a few
kilobytes per operator: onnxruntime sessions made from it (the dump's observed sessions) read the weights from
the model's bytes themselves, and the weights are never a Python object.

Small initializers stay inline, so shape inference and its data propagation (``Reshape`` shapes) see them.
Initializers that already use external data are left as they are; their files resolve against the model's
folder, as onnxruntime resolves them for the model itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from openacl import lazy
from openacl.errors import AclCode, AclError

numpy_helper = lazy.module("onnx.numpy_helper")

LARGE_BYTES = 4096
#: More top-level fields than any model has (opsets, metadata): bytes that are not a model are refused quickly.
MAX_MODEL_FIELDS = 100_000
_WINDOW = 1 << 20  # a file is read a MiB at a time while walking it

#: The external-data file name of a model from memory: its bytes, handed to onnxruntime as an in-memory file.
IN_MEMORY = "openacl-model-bytes"

#: Field numbers of onnx.proto3 used here.
_MODEL_GRAPH = 7
_GRAPH_INITIALIZER = 5
_TENSOR_RAW_DATA = 9
_TENSOR_EXTERNAL_DATA = 13
_TENSOR_DATA_LOCATION = 14
_EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

Read = Callable[[int, int], bytes]  # (offset, size) -> exactly those bytes


FileStamp = tuple[int, int, int, int]  # device, inode, size, modification time (ns)


def _stamp(status: os.stat_result) -> FileStamp:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def file_stamp(path: str) -> FileStamp | None:
    """A file's identity now (None when it cannot be read): what :meth:`Weights.check` compares with."""
    try:
        return _stamp(os.stat(path))
    except OSError:
        return None


class MalformedModel(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True)
class Skeleton:
    """The serialized graph (``data``) and the name its large initializers' external data refers to."""

    data: bytes
    location: str
    moved: int  # how many initializers were rewritten as external data
    stamp: FileStamp | None = None  # the file's identity when it was read (None for bytes)


def _varint(read: Read, pos: int, end: int) -> tuple[int, int]:
    head = read(pos, min(10, end - pos))
    value = shift = 0
    for i, byte in enumerate(head):
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + i + 1
        shift += 7
    raise MalformedModel(f"truncated varint at byte {pos}")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _encode_varint(field << 3 | wire)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _key(field, _LEN) + _encode_varint(len(payload)) + payload


def _fields(read: Read, start: int, end: int):
    """``(field, wire type, field start, payload start, payload end)`` of each field of the message in
    ``[start, end)``, without reading any payload."""
    pos = start
    while pos < end:
        key, body = _varint(read, pos, end)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, after = _varint(read, body, end)
        elif wire == _I64:
            after = body + 8
        elif wire == _I32:
            after = body + 4
        elif wire == _LEN:
            size, body = _varint(read, body, end)
            after = body + size
        else:
            raise MalformedModel(f"wire type {wire} at byte {pos}")
        if after > end:
            raise MalformedModel(f"field {field} at byte {pos} runs past its message")
        yield field, wire, pos, body, after
        pos = after


def _tensor(read: Read, start: int, end: int, location: str) -> tuple[bytes, bool]:
    """One initializer's bytes, its large ``raw_data`` replaced by a reference to where it lies."""
    kept: list[bytes] = []
    raw: tuple[int, int] | None = None
    for field, wire, field_start, body, after in _fields(read, start, end):
        if field == _TENSOR_DATA_LOCATION and wire == _VARINT and _varint(read, body, after)[0] == _EXTERNAL:
            return read(start, end - start), False  # already external data: left as it is
        if field == _TENSOR_RAW_DATA and wire == _LEN and after - body >= LARGE_BYTES:
            raw = (body, after - body)
            continue
        kept.append(read(field_start, after - field_start))
    if raw is None:
        return b"".join(kept), False
    offset, size = raw
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(size))):
        entry = _length_delimited(1, key.encode()) + _length_delimited(2, value.encode())
        kept.append(_length_delimited(_TENSOR_EXTERNAL_DATA, entry))
    kept.append(_key(_TENSOR_DATA_LOCATION, _VARINT) + _encode_varint(_EXTERNAL))
    return b"".join(kept), True


def _rewrite(
    read: Read,
    start: int,
    end: int,
    target: int,
    rewrite: Callable[[int, int], tuple[bytes, int]],
    limit: int | None = None,
) -> tuple[bytes, int]:
    """The message in ``[start, end)`` with each length-delimited field ``target`` replaced by ``rewrite(payload
    start, payload end)``'s bytes, every other field copied as it is; the sum of the rewrites' counts. More than
    ``limit`` fields (when given) is :class:`MalformedModel`."""
    parts: list[bytes] = []
    moved = 0
    for count, (field, wire, field_start, body, after) in enumerate(_fields(read, start, end)):
        if count == limit:
            raise MalformedModel(f"more than {limit} fields")
        if field == target and wire == _LEN:
            payload, rewritten = rewrite(body, after)
            parts.append(_length_delimited(field, payload))
            moved += rewritten
        else:
            parts.append(read(field_start, after - field_start))
    return b"".join(parts), moved


def skeleton(read: Read, size: int, location: str) -> Skeleton:
    """The ModelProto bytes at ``read`` (``size`` bytes) with large initializers moved to external data named
    ``location``, whose offsets are those of the original bytes."""

    def graph(start: int, end: int) -> tuple[bytes, int]:
        return _rewrite(read, start, end, _GRAPH_INITIALIZER, lambda b, a: _tensor(read, b, a, location))

    data, moved = _rewrite(read, 0, size, _MODEL_GRAPH, graph, MAX_MODEL_FIELDS)
    return Skeleton(data, location, moved)


def of_bytes(data: bytes | memoryview, location: str) -> Skeleton:
    view = memoryview(data)
    return skeleton(lambda offset, n: bytes(view[offset : offset + n]), len(view), location)


def of_file(path: str) -> Skeleton:
    """The skeleton of a model file; its large initializers refer to the file itself (by its name, which
    resolves against the file's folder)."""
    with open(path, "rb") as f:
        status = os.fstat(f.fileno())
        fd, size = f.fileno(), status.st_size

        window = [0, b""]

        def read(offset: int, n: int) -> bytes:
            start, held = window
            if start <= offset and offset + n <= start + len(held):
                return held[offset - start : offset - start + n]
            if n >= _WINDOW:
                data = os.pread(fd, n, offset)
            else:
                window[:] = [offset, os.pread(fd, _WINDOW, offset)]
                data = window[1][:n]
            if len(data) != n and offset + n <= size:
                raise MalformedModel(f"short read at byte {offset}")
            return data

        found = skeleton(read, size, os.path.basename(path))
    return Skeleton(found.data, found.location, found.moved, _stamp(status))


@dataclass(frozen=True)
class Weights:
    """Where a skeleton's external data lies: files in ``folder`` (the model file's own folder), or, for a model
    from memory, ``data`` (the model's bytes, the in-memory file :data:`IN_MEMORY`).

    Invariant: weights are read from ``files`` (the model file first, then any external data files beside it) only
    while each is the file it was when the model was loaded (its stamp): :meth:`check` refuses one that was
    changed, replaced or removed since. Reading it would give another model's bytes, and onnxruntime maps the
    weights it reads from a file, so a session made before the file was truncated in place would kill the
    process (SIGBUS) on its next run.
    """

    folder: str | None = None
    data: bytes | None = None
    files: tuple[tuple[str, FileStamp], ...] = ()

    @classmethod
    def of_file(cls, path: str, stamp: FileStamp | None, external: Sequence[str]) -> Weights:
        """The weights of the model file at ``path`` (stamped ``stamp`` when its skeleton was read), and of the
        ``external`` data files beside it, stamped now (one that cannot be read is left to onnxruntime)."""
        folder = os.path.dirname(os.path.abspath(path))
        files = [(os.path.abspath(path), stamp)]
        for name in external:
            beside = os.path.join(folder, name)
            if (found := file_stamp(beside)) is not None:
                files.append((beside, found))
        return cls(folder=folder, files=tuple(files))

    def check(self, label: str, model_file: bool = True) -> None:
        """Raise ``ACL_ERROR_READ_MODEL_FAILURE`` when a weights file is no longer the one that was loaded.
        ``model_file=False`` checks only the external data files (``files[1:]``): all that a model's own
        session maps, as it holds the weights inside the model file in its own memory."""
        for path, stamp in self.files if model_file else self.files[1:]:
            try:
                same = _stamp(os.stat(path)) == stamp
            except OSError as exc:
                raise AclError(
                    AclCode.ACL_ERROR_READ_MODEL_FAILURE,
                    f"{label}: cannot read its weights from {path} ({exc.strerror}); load the model again",
                ) from None
            if not same:
                raise AclError(
                    AclCode.ACL_ERROR_READ_MODEL_FAILURE,
                    f"{label}: {path} changed since the model was loaded, and a dump reads the weights from it; "
                    "load the model again",
                )

    def apply(self, options) -> None:
        """Let an onnxruntime session made from the skeleton find its weights."""
        if self.folder is not None:
            options.add_session_config_entry("session.model_external_initializers_file_folder_path", self.folder)
        if self.data is not None:
            options.add_external_initializers_from_files_in_memory([IN_MEMORY], [self.data], [len(self.data)])

    def array(self, tensor) -> np.ndarray:
        """An initializer of the skeleton as a read-only array, read from wherever its bytes are."""
        location = {entry.key: entry.value for entry in tensor.external_data}
        if self.data is not None and location.get("location") == IN_MEMORY:
            offset, size = int(location["offset"]), int(location["length"])
            inline = type(tensor)()
            inline.CopyFrom(tensor)
            del inline.external_data[:]
            inline.data_location = 0
            inline.raw_data = self.data[offset : offset + size]
            array = numpy_helper.to_array(inline)
        else:
            try:
                array = numpy_helper.to_array(tensor, self.folder or "")
            except OSError as exc:
                raise AclError(
                    AclCode.ACL_ERROR_READ_MODEL_FAILURE, f"cannot read weight {tensor.name!r}: {exc}"
                ) from None
        array.flags.writeable = False
        return array
