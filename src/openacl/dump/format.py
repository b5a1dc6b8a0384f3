"""CANN operator dump files: the bytes inside and the stats CSV (names: ``naming``; reading back: ``reader``).

One dump file is ``uint64 header_len (little-endian) + DumpData header + raw inputs + raw outputs``
(spec/dump_format.md section 1.3). The header is a ``toolkit.dumpdata.DumpData`` protobuf message: version "2.0",
the dump time in microseconds, one ``OpInput``/``OpOutput`` per tensor (proto dtype, format ND, shape,
original_shape, size) and the op name. Its ``data`` fields stay empty: the tensor bytes follow the header.

Guarantees:

* :func:`file_parts` copies no tensor data. It hands back the header and one zero-copy ``memoryview`` (format
  ``"B"``) per tensor; the concatenation of the parts is the file. An array is only copied when it has to be:
  when it is not C-contiguous or not in native byte order.
* :func:`read_dump` checks everything msaccucmp checks and more, and raises :class:`DumpFormatError` (a
  ``ValueError``) for any malformed input; it never reads past the end of its buffer.

Where openacl differs from CANN:

* Every tensor is labelled with the format of the model's tensors, as CANN's dumps of ONNX models are: NCHW
  (``FORMAT_NCHW``) for a 4-D tensor, ND otherwise (:func:`model_format`), so msaccucmp reads them without a
  format conversion. Address 0, offset 0 and no ``attr`` (msaccucmp crashes on a non-JSON attr).
* bfloat16 (ml_dtypes) is ``DT_BF16`` (27). Strings are ``DT_STRING`` in GE's string-tensor layout
  (:func:`encode_strings`), which msaccucmp does not read. Any other numpy dtype the dump proto has no number for
  (datetimes, ...) is written as ``DT_UNDEFINED`` raw bytes, which readers (msaccucmp too) read back as ``int8``
  of shape ``(size,)``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openacl import atfork, dtypes, lazy
from openacl.dump.naming import (  # names and directories moved to naming.py; kept here for existing importers
    MAPPING_FILE_NAME,
    MAX_NAME_BYTES,
    dump_dir,
    file_name,
    hashed_name,
    model_dir_name,
    now_us,
    sanitize,
    time_str,
)

# protobuf and the dump schema's private pool load with the first header built, not with ``import acl``.
dump_data_pb2 = lazy.module("openacl.dump.proto.dump_data_pb2")

__all__ = [
    "DEFAULT_STATS",
    "DUMP_VERSION",
    "FORMAT_NCHW",
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

_LENGTH = struct.Struct("<Q")
_MAX_NDIM = 64  # numpy's limit on dimensions


class DumpFormatError(ValueError):
    """A dump file (or buffer) that is not a well-formed CANN dump."""


# --------------------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------------------


STRING_HEAD = struct.Struct("<qq")  # GE's StringHead: offset of the string from the tensor's start, its length


def is_strings(array: np.ndarray) -> bool:
    """A tensor of strings: what onnxruntime returns for ``tensor(string)`` (object arrays of ``str``), or numpy
    ``U``/``S`` arrays."""
    return array.dtype.kind in "OUS"


def encode_strings(array: np.ndarray) -> np.ndarray:
    """A string tensor's dump bytes, laid out as GE lays out a ``DT_STRING`` tensor: one 16-byte head per element
    (int64 offset of its bytes from the start of the tensor data, int64 length), then each element's UTF-8 bytes
    followed by a NUL. ``TypeError`` for an object array holding anything but ``str`` or ``bytes``."""
    items = []
    for item in np.asarray(array).reshape(-1).tolist():
        if isinstance(item, str):
            items.append(item.encode("utf-8", "surrogateescape"))
        elif isinstance(item, bytes):
            items.append(item)
        else:
            raise TypeError(f"cannot dump an array of dtype {array.dtype} holding {type(item).__name__}")
    out = bytearray(STRING_HEAD.size * len(items))
    for index, raw in enumerate(items):
        STRING_HEAD.pack_into(out, index * STRING_HEAD.size, len(out), len(raw))
        out += raw + b"\0"
    return np.frombuffer(bytes(out), np.uint8)


def _proto_dtype(dtype: np.dtype) -> int:
    if dtype.kind in "OUS":
        return dtypes.ProtoDataType.DT_STRING
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    return dtypes.proto_from_numpy(dtype)


def model_format(shape: tuple[int, ...]) -> int:
    """The format CANN labels an ONNX model's tensor with: ``FORMAT_NCHW`` when 4-D, ``FORMAT_ND`` otherwise."""
    return FORMAT_NCHW if len(shape) == 4 else FORMAT_ND


def _fill_tensor(tensor, array: np.ndarray, original_shape: bool) -> None:
    shape = array.shape
    tensor.data_type = _proto_dtype(array.dtype)
    tensor.format = model_format(tuple(array.shape))
    tensor.shape.dim.extend(shape)  # marks the field present even for a scalar, as CANN's JSON dump shows it
    if original_shape:
        tensor.original_shape.dim.extend(shape)
    tensor.size = encode_strings(array).nbytes if is_strings(array) else array.nbytes


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
    if is_strings(array):
        return array  # written through encode_strings
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
    if is_strings(array):
        return memoryview(encode_strings(array))
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
    unchanged until the parts are written. See :func:`header` for ``original_shape``. A one-off
    :class:`HeaderTemplate`: both build files the same way.
    """
    template = HeaderTemplate(op_name, inputs, outputs, original_shape=original_shape)
    return template.parts(inputs, outputs, dump_time_us)


class HeaderTemplate:
    """One operator's header, built once and re-stamped on each run while its tensors keep dtypes and shapes.

    A model's operators see the same layouts run after run, so a dump need not rebuild the same protobuf
    message every time. ``dump_time`` is field 2 of ``DumpData``, and protobuf writes fields in number order:
    the header is the bytes before it (the version), the field's tag and varint, and the bytes after it, which
    never change. So :meth:`parts` splices this run's time in, with no message, no serialization and no lock;
    the template checks at build that the splice gives protobuf's own bytes, and re-serializes (under its lock)
    where it would not. Thread-safe.
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
        self._lock = atfork.lock()
        without_time = self._message.SerializeToString()  # proto3: a zero dump_time is not written
        version = dump_data_pb2.DumpData(version=DUMP_VERSION).SerializeToString()
        self._head, self._tail = version, without_time[len(version) :]
        probe = 1_764_806_400_123_456  # a time of the form now_us gives: the splice must equal protobuf's bytes
        self._spliced = without_time.startswith(version) and self._splice(probe) == self._serialized(probe)

    def _splice(self, dump_time_us: int) -> bytes:
        time_field = _DUMP_TIME_TAG + _varint(dump_time_us) if dump_time_us else b""  # proto3 leaves a zero out
        body = b"".join((self._head, time_field, self._tail))
        return _LENGTH.pack(len(body)) + body

    def _serialized(self, dump_time_us: int) -> bytes:
        with self._lock:
            self._message.dump_time = dump_time_us
            body = self._message.SerializeToString()
        return _LENGTH.pack(len(body)) + body

    def parts(
        self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], dump_time_us: int
    ) -> list[bytes | memoryview]:
        """As :func:`file_parts`, for tensors whose :func:`layout_key` equals this template's ``layout``."""
        header = self._splice(dump_time_us) if self._spliced else self._serialized(dump_time_us)
        parts: list[bytes | memoryview] = [header]
        for arrays in (inputs, outputs):
            for a in arrays:
                plain = (
                    type(a) is np.ndarray and a.flags.c_contiguous and a.dtype.isnative and a.dtype.kind not in "OUS"
                )
                parts.append(memoryview(a.reshape(-1).view(np.uint8)) if plain else _raw_bytes(_writable_layout(a)))
        return parts


_DUMP_TIME_TAG = bytes([2 << 3])  # field 2, wire type 0 (varint)


def _varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf base-128 varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def layout_key(inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> tuple:
    """What a header depends on besides the op name and time: each tensor's dtype and shape (and a string
    tensor's byte size, which its contents decide)."""
    return (*map(_layout, inputs), None, *map(_layout, outputs))


def _layout(array: np.ndarray) -> tuple:
    if is_strings(array):
        return array.dtype, array.shape, encode_strings(array).nbytes
    return array.dtype, array.shape


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
#: The items of ``dump_stats`` when it is not given: all but L2norm (the dump configuration uses this too).
DEFAULT_STATS = tuple(STATS_ITEMS)[:6]
_DEFAULT_STATS = DEFAULT_STATS
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
    if dtypes.is_bfloat16(array.dtype):
        array = array.astype(np.float32)  # exact: every bfloat16 is a float32
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
    size = encode_strings(array).nbytes if is_strings(array) else array.nbytes
    head = f"{io},{index},{size},{data_type},{fmt},{shape}"
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
