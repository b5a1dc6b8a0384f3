"""openacl.dump.reader: the checks on one file, mapped reading, tensor layouts, finding files in a tree."""

from __future__ import annotations

import contextlib
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openacl.dump import format as fmt
from openacl.dump import reader
from openacl.dump.proto import dump_data_pb2

SETTINGS = settings(derandomize=True, deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _file(op_name, inputs, outputs, dump_time=1700000000000000, **kw) -> bytes:
    return b"".join(bytes(p) for p in fmt.file_parts(op_name, inputs, outputs, dump_time, **kw))


def _raw_file(message: dump_data_pb2.DumpData, payload: bytes = b"") -> bytes:
    body = message.SerializeToString()
    return len(body).to_bytes(8, "little") + body + payload


# ----------------------------------------------------------------------------------------------------- reader


def _header_message(**tensors) -> dump_data_pb2.DumpData:
    message = dump_data_pb2.DumpData(version="2.0", dump_time=1, op_name="x")
    for kind in ("input", "output"):
        for data_type, shape, size in tensors.get(kind, []):
            tensor = getattr(message, kind).add(data_type=data_type, format=2, size=size)
            tensor.shape.dim.extend(shape)
    return message


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "must be longer than"),
        (b"\x01" * 8, "must be longer than"),
        (struct.pack("<Q", 0) + b"\x0a", "header length is 0"),
        (struct.pack("<Q", 2) + b"\x0a", "runs past the end"),
        (struct.pack("<Q", 2**64 - 1) + b"abc", "runs past the end"),
        (struct.pack("<Q", 3) + b"\x0a\x05a", "not a DumpData"),
        (struct.pack("<Q", 2) + b"\xff\xff", "not a DumpData"),
    ],
)
def test_read_dump_rejects_bad_lengths_and_headers(data, match):
    with pytest.raises(reader.DumpFormatError, match=match):
        reader.read_dump(data)


def test_read_dump_rejects_sizes_past_the_end_and_leftover_bytes():
    message = _header_message(input=[(1, [2], 8)], output=[(1, [2], 8)])
    with pytest.raises(reader.DumpFormatError, match="add up to 16 bytes but only 15"):
        reader.read_dump(_raw_file(message, b"\0" * 15))
    with pytest.raises(reader.DumpFormatError, match="1 bytes left over"):
        reader.read_dump(_raw_file(message, b"\0" * 17))
    huge = _header_message(input=[(1, [2], 2**64 - 1)])
    with pytest.raises(reader.DumpFormatError, match="add up to"):
        reader.read_dump(_raw_file(huge, b"\0" * 8))
    assert reader.read_dump(_raw_file(message, b"\0" * 16)).outputs[0].shape == (2,)


def test_read_dump_rejects_unsupported_dtypes_and_short_sizes():
    with pytest.raises(reader.DumpFormatError, match=r"input 0: 1 string heads do not fit in its 4 bytes"):
        reader.read_dump(_raw_file(_header_message(input=[(13, [1], 4)]), b"\0" * 4))
    with pytest.raises(reader.DumpFormatError, match=r"output 0: data type number \(99\) is not supported"):
        reader.read_dump(_raw_file(_header_message(output=[(99, [1], 4)]), b"\0" * 4))
    with pytest.raises(reader.DumpFormatError, match=r"input 0: shape \[2, 3\] of DT_FLOAT needs 24 bytes"):
        reader.read_dump(_raw_file(_header_message(input=[(1, [2, 3], 20)]), b"\0" * 20))
    with pytest.raises(reader.DumpFormatError, match="needs"):
        reader.read_dump(_raw_file(_header_message(input=[(1, [2**40, 2**40], 8)]), b"\0" * 8))
    with pytest.raises(reader.DumpFormatError, match="dimensions"):
        reader.read_dump(_raw_file(_header_message(input=[(1, [1] * 65, 4)]), b"\0" * 4))


def test_read_dump_takes_the_first_bytes_when_size_has_padding_like_msaccucmp():
    payload = np.float32([1, 2]).tobytes() + b"\xee" * 8
    dump = reader.read_dump(_raw_file(_header_message(input=[(1, [2], 16)]), payload))
    np.testing.assert_array_equal(dump.inputs[0], [1, 2])


def test_read_dump_undefined_and_bf16_like_msaccucmp():
    bf16 = np.array([0x3F80, 0xC000, 0x7F80], dtype="<u2")  # 1.0, -2.0, inf
    message = _header_message(input=[(0, [2, 3], 5), (27, [3], 6)])
    dump = reader.read_dump(_raw_file(message, b"abcde" + bf16.tobytes()))
    assert dump.inputs[0].dtype == np.int8 and dump.inputs[0].tobytes() == b"abcde"
    assert dump.inputs[1].dtype == np.float32
    np.testing.assert_array_equal(dump.inputs[1], [1.0, -2.0, np.inf])


def test_read_dump_returns_buffers_and_workspaces():
    message = _header_message(input=[(4, [2], 2)])
    message.buffer.add(size=3)
    message.space.add(size=1)
    dump = reader.read_dump(_raw_file(message, b"\x01\x02" + b"xyz" + b"w"))
    assert dump.inputs[0].tolist() == [1, 2]
    assert [bytes(b) for b in dump.buffers] == [b"xyz"]
    assert [bytes(w) for w in dump.workspaces] == [b"w"]


def test_every_truncation_of_a_valid_file_is_a_format_error():
    data = _file("op", [np.arange(3, dtype=np.float32)], [np.int8([1, 2])])
    for cut in range(len(data)):
        with pytest.raises(reader.DumpFormatError):
            reader.read_dump(data[:cut])


@SETTINGS
@given(st.binary(max_size=200))
def test_read_dump_on_random_bytes_never_crashes(data):
    with contextlib.suppress(reader.DumpFormatError):
        reader.read_dump(data)


@SETTINGS
@given(st.data())
def test_read_dump_on_corrupted_files_never_crashes(data):
    valid = bytearray(_file("op", [np.arange(4, dtype=np.float32)], [np.float16([1, 2])]))
    for _ in range(data.draw(st.integers(1, 4))):
        valid[data.draw(st.integers(0, len(valid) - 1))] = data.draw(st.integers(0, 255))
    with contextlib.suppress(reader.DumpFormatError):
        reader.read_dump(bytes(valid))


def test_dump_format_error_is_a_value_error():
    assert issubclass(reader.DumpFormatError, ValueError)


# ----------------------------------------------------------------------------------------------------- mapped files


def test_read_dump_from_a_path_maps_the_file_and_never_writes_it(tmp_path):
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = tmp_path / "Op.op.1.0.1700000000000000"
    path.write_bytes(_file("op", [array], [array * 2]))
    before = path.read_bytes()
    dump = reader.read_dump(path)
    assert not dump.inputs[0].flags.owndata and dump.inputs[0].flags.writeable  # a view of the mapping
    dump.inputs[0][:] = -1  # private mapping: copy on write
    assert path.read_bytes() == before
    assert reader.read_dump(path).inputs[0].tolist() == array.tolist()
    assert dump.nbytes == 2 * array.nbytes


def test_read_dump_of_an_empty_or_tiny_file_is_a_format_error(tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(reader.DumpFormatError, match="0 bytes"):
        reader.read_dump(empty)
    tiny = tmp_path / "tiny"
    tiny.write_bytes(b"\1\0\0")
    with pytest.raises(reader.DumpFormatError, match="3 bytes"):
        reader.read_dump(tiny)


def test_tensor_info_reports_format_and_original_shape():
    message = dump_data_pb2.DumpData(version="2.0")
    out = message.output.add(data_type=2, format=3, size=2 * 1 * 1 * 2 * 2 * 16)
    out.shape.dim.extend([1, 1, 2, 2, 16])
    out.original_shape.dim.extend([1, 3, 2, 2])
    out.original_op.format = 0
    plain = message.input.add(data_type=1, format=2, size=4)
    plain.shape.dim.extend([1])
    dump = reader.read_dump(_raw_file(message, b"\0" * 4 + b"\0" * out.size))
    assert dump.output_info[0] == reader.TensorInfo(2, 3, (1, 1, 2, 2, 16), (1, 3, 2, 2), 0)
    assert dump.input_info[0] == reader.TensorInfo(1, 2, (1,), None, None)


def test_find_dump_files_and_hashed_names(tmp_path):
    (tmp_path / "a").mkdir()
    good = tmp_path / "a" / "Relu.relu.1.0.1700000000000000"
    good.write_bytes(b"x")
    (tmp_path / "a" / "Relu.relu.1.0.1700000000000000.csv").write_text("stats")
    (tmp_path / "a" / ".Relu.tmp").write_text("partial")
    (tmp_path / "a" / "123").write_bytes(b"x")
    (tmp_path / "a" / "456").write_bytes(b"x")
    (tmp_path / "a" / fmt.MAPPING_FILE_NAME).write_text("123,Conv.long.2.0.1700000000000001\n456,Conv.s.1.0.1.csv\n")
    assert reader.find_dump_files(tmp_path) == [tmp_path / "a" / "123", good]
    assert reader.original_name(tmp_path / "a" / "123") == "Conv.long.2.0.1700000000000001"
    assert reader.find_dump_files(good) == [good]
    with pytest.raises(FileNotFoundError):
        reader.find_dump_files(tmp_path / "missing")
