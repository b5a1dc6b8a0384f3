"""Reading CANN dump files back: one file into arrays (:func:`read_dump`), a tree into its dump files.

This is the reading half of :mod:`openacl.dump.format` (which only writes). ``openacl parse``, ``openacl compare``
and the tests read through here.

Guarantees:

* :func:`read_dump` checks everything msaccucmp checks and more, and raises :class:`DumpFormatError` (a
  ``ValueError``) for any malformed input; it never reads past the end of its buffer.
* Reading a path copies no tensor data: the file is mapped (``mmap``, private and copy-on-write) and every array is
  an ``np.frombuffer`` view of the mapping, so arrays are writable and writing to them never touches the file. The
  mapping lives as long as any array of it does. Reading is bounded by the page cache or the disk, not by Python.
"""

from __future__ import annotations

import math
import mmap
import os
import pathlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from openacl import dtypes
from openacl.dump.format import MAPPING_FILE_NAME, STRING_HEAD, DumpFormatError
from openacl.dump.proto import dump_data_pb2

__all__ = [
    "FAILED_LIST_NAME",
    "DumpFile",
    "DumpFormatError",
    "Names",
    "TensorInfo",
    "find_dump_files",
    "is_skipped_name",
    "map_file",
    "original_name",
    "read_dump",
    "read_header",
    "read_mapping",
]

_LENGTH = struct.Struct("<Q")
_MAX_NDIM = 64  # numpy's limit on dimensions
_SKIP_SUFFIXES = (".csv", ".npy", ".bin", ".tmp")
#: msaccucmp's list of files that failed to convert; never a dump file.
FAILED_LIST_NAME = "convert_failed_file_list.txt"
_SKIP_NAMES = frozenset({MAPPING_FILE_NAME, FAILED_LIST_NAME})


@dataclass(frozen=True)
class TensorInfo:
    """What a header says about one tensor besides its bytes: the layout it is stored in and its model layout.

    ``data_type`` is the proto dtype number (``DT_BF16`` stays 27 although the array is widened to float32),
    ``format`` the primary storage format (``OutputFormat``: ND 2, NCHW 0, NC1HWC0 3, FRACTAL_Z 4, FRACTAL_NZ 29,
    ...), ``shape`` the stored shape and ``original_shape`` the model's shape (``None`` when the header has none).
    ``original_format`` is ``OriginalOp.format`` for outputs that carry one, else ``None``.
    """

    data_type: int
    format: int
    shape: tuple[int, ...]
    original_shape: tuple[int, ...] | None
    original_format: int | None = None


@dataclass
class DumpFile:
    """A dump file as :func:`read_dump` returns it.

    ``inputs`` and ``outputs`` have the exact dtype and shape of the header, a scalar included (shape ``()``).
    They are views of the buffer that was read: writable when read from a path (a private mapping), read-only
    from ``bytes``. ``DT_UNDEFINED`` tensors come back as ``int8`` of shape ``(size,)`` and ``DT_BF16`` ones widened
    to ``float32``, as msaccucmp does. ``input_info`` / ``output_info`` describe each tensor's layout (see
    :class:`TensorInfo`). ``buffers`` and ``workspaces`` hold the raw ``OpBuffer``/``Workspace`` bytes (CANN's L1
    buffers and workspaces; openacl writes none).
    """

    op_name: str
    dump_time: int
    version: str
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]
    header: dump_data_pb2.DumpData
    buffers: list[memoryview] = field(default_factory=list)
    workspaces: list[memoryview] = field(default_factory=list)
    input_info: list[TensorInfo] = field(default_factory=list)
    output_info: list[TensorInfo] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        """Bytes of tensor data in the file (what a throughput figure counts)."""
        return sum(int(t.size) for items in (self.header.input, self.header.output) for t in items)


# --------------------------------------------------------------------------------------------------------------
# One file
# --------------------------------------------------------------------------------------------------------------


def map_file(path: str | os.PathLike[str]) -> memoryview:
    """The bytes of the file at ``path`` without copying them: a private, copy-on-write mapping.

    Pages are faulted in lazily, which the kernel does a block of pages at a time: measured at 14 GB/s from the
    page cache, faster than ``read`` into a buffer (10-12 GB/s); ``MAP_POPULATE`` was 7x slower (2 GB/s). An
    empty file gives an empty ``memoryview`` (an empty file cannot be mapped). ``OSError`` if it cannot be opened.
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return memoryview(b"")
        mapped = mmap.mmap(f.fileno(), size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return memoryview(mapped)


def _bf16_to_float32(raw: memoryview, shape: tuple[int, ...]) -> np.ndarray:
    bits = np.frombuffer(raw, dtype="<u2").astype("<u4") << 16
    return bits.view(np.float32).reshape(shape)


def _decode_strings(where: str, raw: memoryview, shape: tuple[int, ...]) -> np.ndarray:
    """A ``DT_STRING`` tensor (:func:`encode_strings`' layout) as a numpy ``str`` array of the header's shape."""
    count = math.prod(shape)
    if len(shape) > _MAX_NDIM or count * STRING_HEAD.size > len(raw):
        raise DumpFormatError(f"{where}: {count} string heads do not fit in its {len(raw)} bytes")
    items = []
    for index in range(count):
        start, length = STRING_HEAD.unpack_from(raw, index * STRING_HEAD.size)
        if start < 0 or length < 0 or start + length > len(raw):
            raise DumpFormatError(f"{where}: string {index} ({length} bytes at {start}) runs past the tensor")
        items.append(bytes(raw[start : start + length]).decode("utf-8", "surrogateescape"))
    return np.array(items, dtype=str).reshape(shape)


def _tensor(kind: str, index: int, tensor, data: memoryview, offset: int) -> np.ndarray:
    """The array of one OpInput/OpOutput whose ``size`` bytes start at ``data[offset]`` (already bounds-checked)."""
    where = f"{kind} {index}"
    code = tensor.data_type
    size = tensor.size
    shape = tuple(tensor.shape.dim)
    if code == dtypes.ProtoDataType.DT_UNDEFINED:
        return np.frombuffer(data[offset : offset + size], dtype=np.int8)
    if code == dtypes.ProtoDataType.DT_STRING:
        return _decode_strings(where, data[offset : offset + size], shape)
    if code == dtypes.ProtoDataType.DT_BF16:
        itemsize = 2
    else:
        try:
            dtype = dtypes.numpy_from_proto(code)
        except (KeyError, ValueError):
            name = dtypes.proto_name(code)
            raise DumpFormatError(
                f"{where}: data type {name if name != '-' else 'number'} ({code}) is not supported"
            ) from None
        itemsize = dtype.itemsize
    if len(shape) > _MAX_NDIM:
        raise DumpFormatError(f"{where}: shape has {len(shape)} dimensions, more than numpy's {_MAX_NDIM}")
    need = math.prod(shape) * itemsize
    if need > size:
        raise DumpFormatError(
            f"{where}: shape {list(shape)} of {dtypes.proto_name(code)} needs {need} bytes but its size is {size}"
        )
    raw = data[offset : offset + need]  # like msaccucmp, ignore any padding past the elements
    if code == dtypes.ProtoDataType.DT_BF16:
        return _bf16_to_float32(raw, shape)
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def _info(tensor, is_output: bool) -> TensorInfo:
    original = tuple(tensor.original_shape.dim) if tensor.HasField("original_shape") else None
    original_format = None
    if is_output and tensor.HasField("original_op"):
        original_format = int(tensor.original_op.format)
    return TensorInfo(int(tensor.data_type), int(tensor.format), tuple(tensor.shape.dim), original, original_format)


def read_dump(data: bytes | bytearray | memoryview | str | os.PathLike[str]) -> DumpFile:
    """Read a dump file from a path (mapped, see the module docstring) or from its bytes.

    Raises :class:`DumpFormatError` when the bytes are not a dump: too short (msaccucmp wants more than 8
    bytes), a header length of 0 or past the end, a header that does not parse, a tensor whose shape needs more
    bytes than its ``size``, an unsupported dtype, sizes that run past the end of the file, or bytes left over
    after the last tensor. ``OSError`` if a path cannot be read.
    """
    source = map_file(data) if isinstance(data, (str, os.PathLike)) else data
    try:
        view = memoryview(source).cast("B")
    except (TypeError, ValueError) as exc:
        raise DumpFormatError(f"not a contiguous bytes-like object: {exc}") from None
    file_size = view.nbytes
    if file_size <= _LENGTH.size:
        raise DumpFormatError(
            f"dump is {file_size} bytes; it must be longer than the {_LENGTH.size}-byte header length"
        )
    (header_len,) = _LENGTH.unpack_from(view)
    if header_len == 0:
        raise DumpFormatError("header length is 0")
    if header_len > file_size - _LENGTH.size:
        raise DumpFormatError(
            f"header length {header_len} runs past the end: only {file_size - _LENGTH.size} bytes follow it"
        )
    message = dump_data_pb2.DumpData()
    start = _LENGTH.size
    try:
        message.ParseFromString(view[start : start + header_len])
    except Exception as exc:  # upb raises DecodeError, but any failure here means a bad header
        raise DumpFormatError(f"header ({header_len} bytes) is not a DumpData message: {exc}") from None

    offset = start + header_len
    sections = (message.input, message.output, message.buffer, message.space)
    needed = sum(item.size for items in sections for item in items)
    available = file_size - offset
    if needed > available:
        raise DumpFormatError(f"tensor sizes add up to {needed} bytes but only {available} bytes follow the header")
    if needed < available:
        raise DumpFormatError(f"{available - needed} bytes left over after the last tensor")

    inputs = []
    for i, tensor in enumerate(message.input):
        inputs.append(_tensor("input", i, tensor, view, offset))
        offset += tensor.size
    outputs = []
    for i, tensor in enumerate(message.output):
        outputs.append(_tensor("output", i, tensor, view, offset))
        offset += tensor.size
    buffers = []
    for item in message.buffer:
        buffers.append(view[offset : offset + item.size])
        offset += item.size
    workspaces = []
    for item in message.space:
        workspaces.append(view[offset : offset + item.size])
        offset += item.size
    return DumpFile(
        op_name=message.op_name,
        dump_time=message.dump_time,
        version=message.version,
        inputs=inputs,
        outputs=outputs,
        header=message,
        buffers=buffers,
        workspaces=workspaces,
        input_info=[_info(t, False) for t in message.input],
        output_info=[_info(t, True) for t in message.output],
    )


# --------------------------------------------------------------------------------------------------------------
# A tree of files
# --------------------------------------------------------------------------------------------------------------


def is_skipped_name(name: str) -> bool:
    """Stats CSVs, mapping.csv, converted outputs and temporary files (``.name`` or ``name.tmp``)."""
    return name.startswith(".") or name.endswith(_SKIP_SUFFIXES) or name in _SKIP_NAMES


def read_mapping(directory: str | os.PathLike[str]) -> dict[str, str]:
    """``hash -> original name`` from ``directory/mapping.csv``; empty if there is none or it cannot be read."""
    mapping: dict[str, str] = {}
    try:
        text = pathlib.Path(directory, MAPPING_FILE_NAME).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return mapping
    for line in text.splitlines():
        hashed, sep, original = line.partition(",")
        if sep and hashed.strip().isdigit() and original:
            mapping[hashed.strip()] = original
    return mapping


class Names:
    """Original names of files stored under hashed names, reading each directory's mapping.csv once."""

    def __init__(self) -> None:
        self._mappings: dict[pathlib.Path, dict[str, str]] = {}

    def original(self, path: pathlib.Path) -> str:
        """The name ``path`` had before it was hashed (its own name when it was not)."""
        name = path.name
        if not name.isdigit():
            return name
        mapping = self._mappings.get(path.parent)
        if mapping is None:
            mapping = self._mappings[path.parent] = read_mapping(path.parent)
        return mapping.get(name, name)


def original_name(path: str | os.PathLike[str]) -> str:
    """The original name of one file, looking it up in the ``mapping.csv`` beside it when it is hashed."""
    return Names().original(pathlib.Path(path))


def _walk(src: pathlib.Path, names: Names) -> Iterator[pathlib.Path]:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in files:
            path = pathlib.Path(root, name)
            if not is_skipped_name(name) and not is_skipped_name(names.original(path)) and path.is_file():
                yield path


def find_dump_files(src: str | os.PathLike[str], names: Names | None = None) -> list[pathlib.Path]:
    """The dump files at ``src``: the file itself, or every dump file under the directory tree, sorted.

    Skips ``*.csv`` (stats dumps, ``mapping.csv``), ``*.npy`` and ``*.bin`` (converted output),
    ``convert_failed_file_list.txt`` and temporary files (names starting with ``.`` or ending in ``.tmp``), also
    when a hashed name maps back to such a name. ``FileNotFoundError`` if ``src`` does not exist.
    """
    src = pathlib.Path(src)
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise FileNotFoundError(f"no dump file or directory at {src}")
    return sorted(_walk(src, names or Names()))


def read_header(path: str | os.PathLike[str]) -> dump_data_pb2.DumpData:
    """Only the header of the dump file at ``path`` (the tensors are not read): for pairing files cheaply.

    ``DumpFormatError`` for a file whose header length or header is malformed; ``OSError`` if it cannot be read.
    """
    with open(path, "rb") as f:
        head = f.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            raise DumpFormatError(f"dump is {len(head)} bytes; it must be longer than the header length")
        (header_len,) = _LENGTH.unpack(head)
        size = os.fstat(f.fileno()).st_size
        if header_len == 0 or header_len > size - _LENGTH.size:
            raise DumpFormatError(f"header length {header_len} does not fit a {size}-byte file")
        body = f.read(header_len)
    message = dump_data_pb2.DumpData()
    try:
        message.ParseFromString(body)
    except Exception as exc:
        raise DumpFormatError(f"header ({header_len} bytes) is not a DumpData message: {exc}") from None
    return message
