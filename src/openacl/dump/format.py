"""CANN operator dump files: where they go, what they are called, the bytes inside and the stats CSV.

One dump file is ``uint64 header_len (little-endian) + DumpData header + raw inputs + raw outputs``
(spec/dump_format.md section 1.3). The header is a ``toolkit.dumpdata.DumpData`` protobuf message: version "2.0",
the dump time in microseconds, one ``OpInput``/``OpOutput`` per tensor (proto dtype, model format, shape,
original_shape, size) and the op name. Its ``data`` fields stay empty: the tensor bytes follow the header.

Guarantees:

* :func:`file_parts` copies no tensor data. It hands back the header and one zero-copy ``memoryview`` (format
  ``"B"``) per tensor; the concatenation of the parts is the file. An array is only copied when it has to be:
  when it is not C-contiguous or not in native byte order.

Reading files back is :mod:`openacl.dump.reader`'s job (it raises this module's :class:`DumpFormatError`).

Where openacl differs from CANN:

* Every tensor is labelled with the format of the model's tensors, as CANN's dumps of ONNX models are: NCHW
  (``FORMAT_NCHW``) for a 4-D tensor, ND otherwise (:func:`model_format`), so msaccucmp reads them without a
  format conversion. Address 0, offset 0 and no ``attr`` (msaccucmp crashes on a non-JSON attr).
* A numpy dtype the dump proto has no number for (bfloat16 from ml_dtypes, strings, datetimes, ...) is written
  as ``DT_UNDEFINED`` raw bytes, which readers (msaccucmp too) read back as ``int8`` of shape ``(size,)``.
* :func:`hashed_name` uses a stable BLAKE2b hash; CANN uses ``std::hash`` of the path, which differs between
  builds. Both are decimal names listed in ``mapping.csv``.
"""

from __future__ import annotations

import hashlib
import math
import os
import pathlib
import re
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openacl import dtypes
from openacl.dump.proto import dump_data_pb2

__all__ = [
    "DUMP_VERSION",
    "FORMAT_ND",
    "MAPPING_FILE_NAME",
    "MAX_NAME_BYTES",
    "STATS_ITEMS",
    "DumpFormatError",
    "dump_dir",
    "file_name",
    "file_parts",
    "hashed_name",
    "header",
    "model_dir_name",
    "model_format",
    "now_us",
    "sanitize",
    "stats_csv",
    "time_str",
]

#: ``DumpData.version`` of every file CANN writes today ("big dump", format version 2).
DUMP_VERSION = "2.0"
#: ``OutputFormat.FORMAT_ND``: a plain row-major array of any rank.
FORMAT_ND = 2
#: ``OutputFormat.FORMAT_NCHW``: what ONNX's 4-D tensors (images, activations, conv weights) are.
FORMAT_NCHW = 0
#: The longest file name (in UTF-8 bytes) Linux file systems take; longer names get a :func:`hashed_name`.
MAX_NAME_BYTES = 255
#: Where the disk writer records ``hash,original_name`` lines for hashed file names (one per directory).
MAPPING_FILE_NAME = "mapping.csv"

_LENGTH = struct.Struct("<Q")
_MAX_NDIM = 64  # numpy's limit on dimensions
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_UNSAFE_DIR_CHARS = re.compile(r"[./\\ \x00-\x1f\x7f]")


class DumpFormatError(ValueError):
    """A dump file (or buffer) that is not a well-formed CANN dump."""


# --------------------------------------------------------------------------------------------------------------
# Names and directories
# --------------------------------------------------------------------------------------------------------------


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
    return f"{file_name_prefix(op_type, op_name, task_id)}{int(stream_id)}.{int(timestamp_us):016d}"


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


# --------------------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------------------


def _proto_dtype(dtype: np.dtype) -> int:
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    return dtypes.proto_from_numpy(dtype)


def model_format(shape: tuple[int, ...]) -> int:
    """The format CANN labels an ONNX model's tensor with: ``FORMAT_NCHW`` when 4-D, ``FORMAT_ND`` otherwise."""
    return FORMAT_NCHW if len(shape) == 4 else FORMAT_ND


def _fill_tensor(tensor, array: np.ndarray, original_shape: bool) -> None:
    shape = array.shape
    tensor.data_type = _proto_dtype(array.dtype)
    tensor.format = model_format(shape)
    tensor.shape.dim.extend(shape)  # marks the field present even for a scalar, as CANN's JSON dump shows it
    if original_shape:
        tensor.original_shape.dim.extend(shape)
    tensor.size = array.nbytes


def _message(
    op_name: str,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray],
    dump_time_us: int,
    original_shape: bool,
) -> dump_data_pb2.DumpData:
    message = dump_data_pb2.DumpData(version=DUMP_VERSION, dump_time=dump_time_us, op_name=op_name)
    for array in outputs:
        _fill_tensor(message.output.add(), array, original_shape)
    for array in inputs:
        _fill_tensor(message.input.add(), array, original_shape)
    return message


def header(
    op_name: str,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray],
    dump_time_us: int,
    *,
    original_shape: bool = True,
) -> bytes:
    """The first part of a dump file: the 8-byte little-endian header length, then the serialized DumpData.

    One ``OpInput``/``OpOutput`` per array: proto dtype, :func:`model_format`, shape, ``original_shape`` (equal to the
    shape; left out with ``original_shape=False``, which is how the spec's 49-byte test vector was made) and
    ``size`` in bytes. No ``attr``, no ``data``. Only dtypes, shapes and sizes are read, never tensor data.
    """
    inputs = [np.asarray(a) for a in inputs]
    outputs = [np.asarray(a) for a in outputs]
    body = _message(op_name, inputs, outputs, dump_time_us, original_shape).SerializeToString()
    return _LENGTH.pack(len(body)) + body


def _writable_layout(array) -> np.ndarray:
    """``array`` as a C-contiguous, native-byte-order ndarray; copies only when the input is neither."""
    array = np.asarray(array)
    if array.dtype.hasobject:
        raise TypeError(f"cannot dump an array of dtype {array.dtype}: it holds Python objects, not raw values")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array


def _raw_bytes(array: np.ndarray) -> memoryview:
    # reshape(-1) and view() of a C-contiguous array are views; unlike memoryview(array).cast("B") this also
    # works for zero-size arrays and for dtypes the buffer protocol cannot describe (datetime64, bfloat16).
    return memoryview(array.reshape(-1).view(np.uint8))


def file_parts(
    op_name: str,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray],
    dump_time_us: int,
    *,
    original_shape: bool = True,
) -> list[bytes | memoryview]:
    """``[header, raw input 0, ..., raw output 0, ...]``: write them in order and you have the dump file.

    The tensor parts are zero-copy ``memoryview`` objects (format ``"B"``) of the arrays, which must stay
    unchanged until the parts are written. See :func:`header` for ``original_shape``.
    """
    inputs = [_writable_layout(a) for a in inputs]
    outputs = [_writable_layout(a) for a in outputs]
    body = _message(op_name, inputs, outputs, dump_time_us, original_shape).SerializeToString()
    parts: list[bytes | memoryview] = [_LENGTH.pack(len(body)) + body]
    parts.extend(_raw_bytes(a) for a in inputs)
    parts.extend(_raw_bytes(a) for a in outputs)
    return parts


class HeaderTemplate:
    """One operator's header, built once and re-stamped on each run while its tensors keep dtypes and shapes.

    A model's operators see the same layouts run after run, so a dump need not rebuild the same protobuf
    message every time: :meth:`parts` sets ``dump_time`` and serializes. Thread-safe.
    """

    def __init__(
        self,
        op_name: str,
        inputs: Sequence[np.ndarray],
        outputs: Sequence[np.ndarray],
        *,
        original_shape: bool = True,
    ) -> None:
        inputs = [_writable_layout(a) for a in inputs]
        outputs = [_writable_layout(a) for a in outputs]
        self.layout = layout_key(inputs, outputs)
        self._message = _message(op_name, inputs, outputs, 0, original_shape)
        self._lock = threading.Lock()

    def parts(
        self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], dump_time_us: int
    ) -> list[bytes | memoryview]:
        """As :func:`file_parts`, for tensors whose :func:`layout_key` equals this template's ``layout``."""
        with self._lock:
            self._message.dump_time = dump_time_us
            body = self._message.SerializeToString()
        parts: list[bytes | memoryview] = [_LENGTH.pack(len(body)) + body]
        parts.extend(_raw_bytes(_writable_layout(a)) for a in inputs)
        parts.extend(_raw_bytes(_writable_layout(a)) for a in outputs)
        return parts


def layout_key(inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> tuple:
    """What a header depends on besides the op name and time: each tensor's dtype and shape."""
    return (*((a.dtype, a.shape) for a in inputs), None, *((a.dtype, a.shape) for a in outputs))


# --------------------------------------------------------------------------------------------------------------
# Stats CSV (dump_data = "stats")
# --------------------------------------------------------------------------------------------------------------

#: The ``dump_stats`` items in CANN's column order, with their CSV header names.
STATS_ITEMS: dict[str, str] = {
    "Max": "Max Value",
    "Min": "Min Value",
    "Avg": "Avg Value",
    "Nan": "Nan Count",
    "Negative Inf": "Negative Inf Count",
    "Positive Inf": "Positive Inf Count",
    "L2norm": "l2norm",
}
_DEFAULT_STATS = ("Max", "Min", "Avg", "Nan", "Negative Inf", "Positive Inf")
_CSV_HEAD = "Input/Output,Index,Data Size,Data Type,Format,Shape"
_DEFAULT_HEADER = _CSV_HEAD + ",Max Value,Min Value,Avg Value,Count,Nan Count,Negative Inf Count,Positive Inf Count\n"
# The dtypes CANN's AICPU dump task computes stats for; anything else gets empty stat fields.
_STATS_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_STATS_INTS = frozenset(
    np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
)
_STATS_BOOL = np.dtype(np.bool_)


def _fmt_float(value: float) -> str:
    """``value`` as C++ ``ostream << double`` prints it: ``%g`` with 6 significant digits, ``inf``, ``nan``."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:g}"


@dataclass(frozen=True)
class _Stats:
    kind: str  # "float", "int" or "bool"
    max: float | int
    min: float | int
    avg: float
    count: int
    nan: int
    neg_inf: int
    pos_inf: int
    l2norm: float

    def value(self, number: float | int) -> str:
        if self.kind == "float":
            return _fmt_float(float(number))
        return str(int(number))  # ints print as integers (int8/uint8 as numbers, not chars); bool as 0/1


def _float32(value: float) -> float:
    """``value`` rounded to float32, as adump sends Avg and l2norm (overflowing to inf, quietly)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def _compute_stats(array: np.ndarray, l2norm: bool) -> _Stats | None:
    """CANN's ``DataStats::Stats`` over ``array``; ``None`` for an unsupported dtype or an empty tensor."""
    with np.errstate(all="ignore"):  # inf and NaN are data here, not accidents
        return _stats_of(array, l2norm)


def _stats_of(array: np.ndarray, l2norm: bool) -> _Stats | None:
    dtype = array.dtype.newbyteorder("=") if not array.dtype.isnative else array.dtype
    if dtype in _STATS_FLOATS:
        kind = "float"
    elif dtype in _STATS_INTS:
        kind = "int"
    elif dtype == _STATS_BOOL:
        kind = "bool"
    else:
        return None
    flat = np.ascontiguousarray(array, dtype=dtype).reshape(-1)
    count = flat.size
    if count == 0:
        return None
    if kind == "bool":
        flat = flat.view(np.uint8)
    nan = neg_inf = pos_inf = 0
    if kind == "float":
        nan = int(np.count_nonzero(np.isnan(flat)))
        pos_inf = int(np.count_nonzero(flat == np.inf))
        neg_inf = int(np.count_nonzero(flat == -np.inf))
    first = flat[0]
    if kind == "float" and math.isnan(first):
        # CANN starts max and min at element 0 and only replaces them when `x > max` / `x < min`, which is never
        # true against NaN: a NaN first element sticks, any later NaN is skipped.
        maximum = minimum = first
    else:
        maximum, minimum = np.fmax.reduce(flat), np.fmin.reduce(flat)  # fmax/fmin skip NaN
        if kind == "float" and maximum == 0:  # ties keep the earliest element, which decides the sign of zero
            maximum = flat[int(np.argmax(flat == 0))]
        if kind == "float" and minimum == 0:
            minimum = flat[int(np.argmax(flat == 0))]
    # CANN keeps a running mean in double, then forces +-inf when only one sign of inf was seen. A running mean
    # that meets NaN, or both infinities, ends as NaN. Finite values: a float64 mean (equal to 6 digits).
    if pos_inf and not neg_inf:
        avg = math.inf
    elif neg_inf and not pos_inf:
        avg = -math.inf
    elif nan or pos_inf:
        avg = math.nan
    else:
        avg = float(np.mean(flat, dtype=np.float64))
        if math.isinf(avg):  # the float64 sum overflowed; the running mean would not have
            avg = float(np.sum(flat.astype(np.float64) / count))
    norm = math.nan
    if l2norm:
        wide = flat.astype(np.float64)
        norm = float(np.sqrt(np.dot(wide, wide)))
    return _Stats(kind, maximum.item(), minimum.item(), avg, count, nan, neg_inf, pos_inf, norm)


def _stats_items(items: Sequence[str] | None) -> tuple[str, ...]:
    if not items:
        return _DEFAULT_STATS
    if isinstance(items, str):
        raise TypeError("items must be a sequence of item names, not a string")
    unknown = [item for item in items if item not in STATS_ITEMS]
    if unknown:
        raise ValueError(f"unknown dump_stats item(s) {unknown}; the items are {list(STATS_ITEMS)}")
    chosen = set(items)
    return tuple(item for item in STATS_ITEMS if item in chosen)


def _stats_row(io: str, index: int, array: np.ndarray, items: tuple[str, ...]) -> str:
    shape = "x".join(str(d) for d in array.shape) or "-"
    data_type = dtypes.proto_name(_proto_dtype(array.dtype))
    fmt = dtypes.FORMAT_NAMES.get(model_format(array.shape), "-")
    head = f"{io},{index},{array.nbytes},{data_type},{fmt},{shape}"
    stats = _compute_stats(array, "L2norm" in items)
    if items == _DEFAULT_STATS:  # CANN's AICPU dump task (and adump's compatible layout)
        if stats is None:
            return head + ",,,,,,,\n"
        fields = [
            stats.value(stats.max),
            stats.value(stats.min),
            _fmt_float(stats.avg),
            str(stats.count),
            str(stats.nan),
            str(stats.neg_inf),
            str(stats.pos_inf),
        ]
        return head + "," + ",".join(fields) + "\n"
    # adump's host layout: Count, then the chosen items; Avg and l2norm travel as float32.
    if stats is None:
        return head + f",{array.size}" + ",NA" * len(items) + "\n"
    values = {
        "Max": stats.value(stats.max),
        "Min": stats.value(stats.min),
        "Avg": _fmt_float(_float32(stats.avg)),
        "Nan": str(stats.nan),
        "Negative Inf": str(stats.neg_inf),
        "Positive Inf": str(stats.pos_inf),
        "L2norm": _fmt_float(_float32(stats.l2norm)),
    }
    return head + f",{stats.count}," + ",".join(values[item] for item in items) + "\n"


def stats_csv(inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], items: Sequence[str] | None = None) -> str:
    """The text of a stats-mode dump (``<dump file name>.csv``, spec section 5): a header line, then one line
    per input, then one per output, each ending in ``"\\n"``.

    ``items`` are ``dump_stats`` names from :data:`STATS_ITEMS` (any order); ``None`` or empty means the first
    six. With exactly those six the layout is CANN's AICPU one (``Count`` between ``Avg Value`` and
    ``Nan Count``); any other set uses adump's host layout (``Count`` right after ``Shape``, then the items in
    :data:`STATS_ITEMS` order).

    Numbers print as C++ ``ostream`` does: 6 significant digits (``%g``), ``nan``, ``inf``, ``-inf``; integer and
    bool max/min print as integers. Max and min skip NaN unless the first element is NaN (CANN's rule). An
    unsupported dtype (complex, ``DT_UNDEFINED``) or an empty tensor gets empty stat fields in the default
    layout and ``NA`` in the other (where openacl still prints ``Count``; CANN leaves that column out of a
    failed row, which shifts it).
    """
    chosen = _stats_items(items)
    if chosen == _DEFAULT_STATS:
        lines = [_DEFAULT_HEADER]
    else:
        lines = [_CSV_HEAD + ",Count" + "".join("," + STATS_ITEMS[item] for item in chosen) + "\n"]
    lines.extend(_stats_row("Input", i, np.asarray(a), chosen) for i, a in enumerate(inputs))
    lines.extend(_stats_row("Output", i, np.asarray(a), chosen) for i, a in enumerate(outputs))
    return "".join(lines)
