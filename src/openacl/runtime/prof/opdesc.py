"""The operator record a model subscription writes to its pipe, and the getters that read records back.

Layout (CANN's ``ProfOpDesc``, little-endian, :data:`RECORD_SIZE` bytes, what ``get_op_desc_size`` returns)::

    u32 signature   CRC-32 of the record's bytes after this field: a record that was cut or changed is refused
    u32 model_id    the model that ran the operator
    u32 flag        0
    u32 thread_id   the OS thread that ran the model
    u64 op_index    the operator's entry in this process's name table (names never travel through the pipe)
    u64 duration    ns
    u64 start       ns since the epoch (CLOCK_REALTIME)
    u64 end         ns since the epoch
    u64 execution_time, cube_fops, vector_fops   AI Core counters: 0, a CPU has no AI Core
    u32 dev_id      the device whose context ran the model, then 4 bytes of padding

As on CANN, names and types live in the process that profiles (the record carries an index), so only a reader in
the same process can name an operator. The table holds each distinct (name, type) pair once, so it grows with
the models' operators, not with their executions.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.runtime import memory

_RECORD = struct.Struct("<IIIIQQQQQQQI4x")
RECORD_SIZE = _RECORD.size  # 80
MAX_STRING_LEN = 4096  # what pyACL's get_op_type / get_op_name accept as a buffer length
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


@dataclass(frozen=True, slots=True)
class OpTime:
    """One operator execution as onnxruntime's profiler measured it (ns since the epoch)."""

    name: str
    op_type: str
    start_ns: int
    end_ns: int
    thread_id: int = 0
    inputs: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (dtype name, shape) per input
    outputs: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True, slots=True)
class OpRecord:
    """One decoded record."""

    model_id: int
    thread_id: int
    op_index: int
    start_ns: int
    end_ns: int
    duration_ns: int
    device_id: int


class _Names:
    """(name, type) pairs by index. Invariant: an index, once given, always names the same pair."""

    def __init__(self) -> None:
        self._lock = atfork.lock()
        self._pairs: list[tuple[str, str]] = []
        self._index: dict[tuple[str, str], int] = {}

    def index(self, name: str, op_type: str) -> int:
        key = (name, op_type)
        with self._lock:
            found = self._index.get(key)
            if found is None:
                found = self._index[key] = len(self._pairs)
                self._pairs.append(key)
            return found

    def pair(self, index: int) -> tuple[str, str]:
        with self._lock:
            if not 0 <= index < len(self._pairs):
                raise AclError(_INVALID, f"operator record names operator {index}, which this process never profiled")
            return self._pairs[index]


names = _Names()


def encode(model_id: int, device_id: int, ops: list[OpTime]) -> bytes:
    """The records of ``ops``, back to back."""
    parts = []
    for op in ops:
        body = _RECORD.pack(
            0,
            model_id & 0xFFFFFFFF,
            0,
            op.thread_id & 0xFFFFFFFF,
            names.index(op.name, op.op_type),
            op.duration_ns,
            op.start_ns,
            op.end_ns,
            0,
            0,
            0,
            device_id & 0xFFFFFFFF,
        )
        parts.append(struct.pack("<I", zlib.crc32(body[4:])) + body[4:])
    return b"".join(parts)


def _data(op_info: int, length: int) -> bytes:
    if length == 0 or length % RECORD_SIZE:
        raise AclError(_INVALID, f"op_info_len {length} is not a whole number of {RECORD_SIZE}-byte operator records")
    return memory.read_bytes(op_info, length)


def op_num(op_info: int, length: int) -> int:
    """How many records ``[op_info, op_info + length)`` holds (each one checked)."""
    data = _data(op_info, length)
    count = length // RECORD_SIZE
    for index in range(count):
        _check(data, index)
    return count


def _check(data: bytes, index: int) -> bytes:
    record = data[index * RECORD_SIZE : (index + 1) * RECORD_SIZE]
    (signature,) = struct.unpack_from("<I", record)
    if signature != zlib.crc32(record[4:]):
        raise AclError(_INVALID, f"operator record {index} is not one a model subscription wrote (bad signature)")
    return record


def record(op_info: int, length: int, index: int) -> OpRecord:
    """Record ``index`` of the records at ``op_info``; INVALID_PARAM if there is no such (valid) record."""
    data = _data(op_info, length)
    if index >= length // RECORD_SIZE:
        raise AclError(_INVALID, f"index {index} is out of range: op_info holds {length // RECORD_SIZE} records")
    fields = _RECORD.unpack(_check(data, index))
    _, model_id, _, thread_id, op_index, duration, start, end, _, _, _, device_id = fields
    return OpRecord(model_id, thread_id, op_index, start, end, duration, device_id)


def op_name(op_info: int, length: int, index: int) -> str:
    return names.pair(record(op_info, length, index).op_index)[0]


def op_type(op_info: int, length: int, index: int) -> str:
    return names.pair(record(op_info, length, index).op_index)[1]


def string_len(text: str) -> int:
    """What ``get_op_name_len`` / ``get_op_type_len`` report: the UTF-8 bytes a C buffer needs, NUL included."""
    return len(text.encode("utf-8")) + 1


def truncated(text: str, buffer_len: int) -> str:
    """``text`` as a C buffer of ``buffer_len`` bytes holds it (NUL included; a cut never splits a character).

    Decision: a buffer of 0 bytes, or of more than 4096 (pyACL's own limit), is INVALID_PARAM; a short buffer
    truncates, as CANN's docs say."""
    if not 0 < buffer_len <= MAX_STRING_LEN:
        raise AclError(_INVALID, f"buffer length {buffer_len} is not in 1..{MAX_STRING_LEN}")
    return text.encode("utf-8")[: buffer_len - 1].decode("utf-8", "ignore")
