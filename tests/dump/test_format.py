"""openacl.dump.format: names, the DumpData header, raw tensors (read back through the reader), the stats CSV."""

from __future__ import annotations

import math
import pathlib
import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openacl import dtypes
from openacl.dump import format as fmt
from openacl.dump import reader
from openacl.dump.proto import dump_data_pb2

# spec/dump_format.md section 1.3: DumpData{version "2.0", dump_time 1700000000000000, output[{DT_FLOAT, ND,
# shape [2,2], size 16}], input[same], op_name "Abs_1"}, made and checked against msprobe.
SPEC_VECTOR = bytes.fromhex(
    "31000000000000000a03322e30108080f9c0c1c482031a0c080110021a040a0202023010220c080110021a040a020202281032054162735f31"
)


def _table_dtypes() -> list[np.dtype]:
    """Every numpy dtype the dtype table gives a dump-proto number."""
    found = []
    for code in dtypes.ProtoDataType:
        if code == dtypes.ProtoDataType.DT_UNDEFINED:
            continue
        try:
            found.append(dtypes.numpy_from_proto(code))
        except KeyError:
            continue
    return found


TABLE_DTYPES = _table_dtypes()


def _assert_read_back(got: np.ndarray, want: np.ndarray) -> None:
    """Exactly the array written; bfloat16 comes back widened to float32 (as msaccucmp reads it), bit for bit."""
    assert got.shape == want.shape
    if want.dtype == dtypes.BFLOAT16:
        assert got.dtype == np.float32
        assert (got.view(np.uint32) >> 16).astype(np.uint16).tobytes() == want.view(np.uint16).tobytes()
        assert not (got.view(np.uint32) & 0xFFFF).any()
    else:
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()


SETTINGS = settings(derandomize=True, deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _abs_vector_arrays():
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    return [a], [a.copy()]


def _top_level_fields(body: bytes) -> list[int]:
    """Field numbers of the top-level records of a serialized message, in wire order."""
    numbers, pos = [], 0
    while pos < len(body):
        key, pos = _varint(body, pos)
        number, wire = key >> 3, key & 7
        numbers.append(number)
        if wire == 0:
            _, pos = _varint(body, pos)
        elif wire == 2:
            length, pos = _varint(body, pos)
            pos += length
        else:
            raise AssertionError(f"unexpected wire type {wire}")
    return numbers


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _file(op_name, inputs, outputs, dump_time=1700000000000000, **kw) -> bytes:
    return b"".join(fmt.file_parts(op_name, inputs, outputs, dump_time, **kw))


def _raw_file(message: dump_data_pb2.DumpData, payload: bytes = b"") -> bytes:
    body = message.SerializeToString()
    return struct.pack("<Q", len(body)) + body + payload


# ----------------------------------------------------------------------------------------------------- header


def test_header_reproduces_the_spec_test_vector_byte_for_byte():
    inputs, outputs = _abs_vector_arrays()
    assert fmt.header("Abs_1", inputs, outputs, 1700000000000000, original_shape=False) == SPEC_VECTOR
    assert len(SPEC_VECTOR) == 8 + 49


def test_default_header_adds_original_shape_and_nothing_else():
    inputs, outputs = _abs_vector_arrays()
    # the vector with OpOutput.original_shape (field 7, tag 3a) and OpInput.original_shape (field 6, tag 32)
    expected_body = bytes.fromhex(
        "0a03322e30"
        "108080f9c0c1c48203"
        "1a12080110021a040a02020230103a040a020202"
        "2212080110021a040a020202281032040a020202"
        "32054162735f31"
    )
    got = fmt.header("Abs_1", inputs, outputs, 1700000000000000)
    assert got == struct.pack("<Q", len(expected_body)) + expected_body


def test_header_fields_in_field_number_order_and_decoded_with_pb2():
    x = np.zeros((1, 3, 4), np.float16)
    y = np.zeros((5,), np.int64)
    out = np.zeros((2, 6), np.bool_)
    data = fmt.header("layer/conv 1", [x, y], [out], 1234567890123456)
    (length,) = struct.unpack_from("<Q", data)
    body = data[8:]
    assert length == len(body)
    assert _top_level_fields(body) == [1, 2, 3, 4, 4, 6]  # version, dump_time, output, inputs, op_name

    message = dump_data_pb2.DumpData.FromString(body)
    assert message.version == fmt.DUMP_VERSION == "2.0"
    assert message.dump_time == 1234567890123456
    assert message.op_name == "layer/conv 1"  # the header keeps the real name; only file names are sanitized
    assert len(message.attr) == 0 and len(message.buffer) == 0 and len(message.space) == 0
    assert message.dfx_message == ""
    expected = [(x, dump_data_pb2.DT_FLOAT16), (y, dump_data_pb2.DT_INT64)]
    for tensor, (array, code) in zip(message.input, expected, strict=True):
        assert tensor.data_type == code
        assert tensor.format == fmt.FORMAT_ND == dump_data_pb2.FORMAT_ND
        assert list(tensor.shape.dim) == list(array.shape)
        assert list(tensor.original_shape.dim) == list(array.shape)
        assert tensor.size == array.nbytes
        assert tensor.data == b"" and tensor.address == 0 and tensor.offset == 0
    (tensor,) = message.output
    assert tensor.data_type == dump_data_pb2.DT_BOOL
    assert list(tensor.shape.dim) == [2, 6] and tensor.size == 12 and tensor.data == b""


def test_scalar_header_has_a_present_empty_shape():
    message = dump_data_pb2.DumpData.FromString(fmt.header("s", [np.float32(2.5)], [], 1)[8:])
    (tensor,) = message.input
    assert tensor.HasField("shape") and list(tensor.shape.dim) == []
    assert tensor.size == 4


def test_proto_enums_match_the_dtype_table():
    for code in dtypes.ProtoDataType:
        assert dump_data_pb2.OutputDataType.Value(code.name) == code.value
    assert dump_data_pb2.OutputDataType.Value("DT_HIFLOAT4_SCALE") == 42
    assert dump_data_pb2.OutputFormat.Value("FORMAT_MAX") == 255
    for number, name in dtypes.FORMAT_NAMES.items():
        assert dump_data_pb2.OutputFormat.Name(number) == f"FORMAT_{name}"


def test_pb2_is_registered_under_a_package_path():
    assert dump_data_pb2.DESCRIPTOR.name == "openacl/dump/proto/dump_data.proto"
    assert dump_data_pb2.DESCRIPTOR.package == "toolkit.dumpdata"


# ----------------------------------------------------------------------------------------------------- file_parts


def test_file_parts_are_zero_copy_views_in_input_then_output_order():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(5, dtype=np.int16)
    c = np.ones((2, 2), np.float64)
    parts = fmt.file_parts("op", [a, b], [c], 42)
    assert len(parts) == 4
    assert parts[0] == fmt.header("op", [a, b], [c], 42)
    for part, array in zip(parts[1:], [a, b, c], strict=True):
        assert isinstance(part, memoryview) and part.format == "B" and part.ndim == 1
        assert part.nbytes == array.nbytes
        assert np.shares_memory(np.frombuffer(part, np.uint8), array)
        assert bytes(part) == array.tobytes()


def test_file_parts_copy_only_non_contiguous_and_byte_swapped_arrays():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = base[:, ::2]
    fortran = np.asfortranarray(base)
    swapped = base.astype(">f4")
    parts = fmt.file_parts("op", [strided, fortran, swapped], [], 1)
    assert bytes(parts[1]) == np.ascontiguousarray(strided).tobytes()
    assert bytes(parts[2]) == base.tobytes()
    assert bytes(parts[3]) == base.tobytes()  # native little-endian on disk
    dump = reader.read_dump(b"".join(parts))
    for got, want in zip(dump.inputs, [strided, fortran, swapped], strict=True):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_file_parts_handles_zero_size_scalar_and_unknown_dtypes():
    empty = np.zeros((0, 3), np.float32)
    scalar = np.array(7, np.int32)
    dates = np.array(["2020-01-01", "2021-06-30"], dtype="datetime64[D]")  # no proto number: DT_UNDEFINED bytes
    parts = fmt.file_parts("op", [empty, scalar], [dates], 1)
    assert [p.nbytes for p in parts[1:]] == [0, 4, dates.nbytes]
    dump = reader.read_dump(b"".join(parts))
    assert dump.inputs[0].shape == (0, 3) and dump.inputs[0].dtype == np.float32
    assert dump.inputs[1].shape == () and dump.inputs[1] == 7
    assert dump.header.output[0].data_type == dump_data_pb2.DT_UNDEFINED
    assert dump.outputs[0].dtype == np.int8 and dump.outputs[0].shape == (dates.nbytes,)
    assert dump.outputs[0].tobytes() == dates.tobytes()


def test_string_tensors_are_dt_string_in_ge_layout_and_read_back():
    """Regression (issue 15 item 9): a string tensor was ``cannot dump an array of dtype object``."""
    strings = np.array([["ab", ""], ["naïve", "x\0y"]], dtype=object)  # what onnxruntime returns
    parts = fmt.file_parts("op", [strings], [np.array(["z"], dtype="U1")], 1)
    raw = bytes(parts[1])
    heads = np.frombuffer(raw[: 4 * 16], "<i8").reshape(4, 2)
    encoded = [s.encode() for s in strings.reshape(-1)]
    assert heads[:, 1].tolist() == [len(e) for e in encoded]
    assert heads[0, 0] == 64 and [raw[o : o + n] for o, n in heads] == encoded
    assert all(raw[o + n] == 0 for o, n in heads)  # each NUL-terminated, as GE lays them out
    dump = reader.read_dump(b"".join(parts))
    assert dump.header.input[0].data_type == dump_data_pb2.DT_STRING and dump.header.input[0].size == len(raw)
    assert dump.inputs[0].shape == (2, 2) and dump.inputs[0].tolist() == strings.tolist()
    assert dump.outputs[0].tolist() == ["z"]


def test_object_arrays_cannot_be_dumped():
    with pytest.raises(TypeError, match="object"):
        fmt.file_parts("op", [np.array([object()])], [], 1)


@pytest.mark.parametrize("dtype", TABLE_DTYPES, ids=str)
def test_every_table_dtype_round_trips(dtype):
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=3 * 4 * dtype.itemsize, dtype=np.uint8)
    array = raw.view(dtype).reshape(3, 4)  # arbitrary bit patterns: NaN payloads, odd bools, ...
    dump = reader.read_dump(_file("op", [array], [array[1]]))
    assert dump.header.input[0].data_type == dtypes.proto_from_numpy(dtype)
    for got, want in ((dump.inputs[0], array), (dump.outputs[0], array[1])):
        _assert_read_back(got, want)


@st.composite
def _arrays(draw):
    dtype = draw(st.sampled_from(TABLE_DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    count = math.prod(shape)
    data = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
    return np.frombuffer(data, dtype=dtype).reshape(shape)


@SETTINGS
@given(
    op_name=st.text(max_size=20),
    inputs=st.lists(_arrays(), max_size=4),
    outputs=st.lists(_arrays(), max_size=4),
    dump_time=st.integers(0, 2**64 - 1),
)
def test_file_parts_then_read_dump_round_trips(op_name, inputs, outputs, dump_time):
    parts = fmt.file_parts(op_name, inputs, outputs, dump_time)
    data = b"".join(parts)
    assert len(data) == len(parts[0]) + sum(a.nbytes for a in inputs + outputs)
    dump = reader.read_dump(data)
    assert (dump.op_name, dump.dump_time, dump.version) == (op_name, dump_time, "2.0")
    assert dump.header == dump_data_pb2.DumpData.FromString(parts[0][8:])
    assert len(dump.inputs) == len(inputs) and len(dump.outputs) == len(outputs)
    for got, want in zip(dump.inputs + dump.outputs, inputs + outputs, strict=True):
        _assert_read_back(got, want)


@settings(max_examples=60, deadline=None)
@given(
    op_name=st.text(max_size=20),
    inputs=st.lists(_arrays(), max_size=3),
    outputs=st.lists(_arrays(), max_size=3),
    dump_time=st.one_of(st.sampled_from([0, 1, 127, 128, 2**63, 2**64 - 1]), st.integers(0, 2**64 - 1)),
)
def test_a_template_s_spliced_header_is_protobuf_s_own_bytes(op_name, inputs, outputs, dump_time):
    """``HeaderTemplate`` writes the time between its fixed bytes: exactly ``header``'s serialization."""
    template = fmt.HeaderTemplate(op_name, inputs, outputs)
    assert template._spliced
    assert template.parts(inputs, outputs, dump_time)[0] == fmt.header(op_name, inputs, outputs, dump_time)


def test_a_template_whose_splice_would_differ_serializes_instead(monkeypatch):
    """Where the check at build fails (a protobuf that orders fields otherwise), each header is serialized."""
    monkeypatch.setattr(fmt, "_DUMP_TIME_TAG", b"\x11")  # a wrong tag: the check at build sees the difference
    a = np.arange(4, dtype=np.float32)
    template = fmt.HeaderTemplate("op", [a], [a])
    assert not template._spliced
    assert template.parts([a], [a], 1_700_000_000_000_001)[0] == fmt.header("op", [a], [a], 1_700_000_000_000_001)


def test_read_dump_from_a_path_gives_writable_arrays(tmp_path):
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = tmp_path / "Abs.Abs_1.1.0.1700000000000000"
    path.write_bytes(_file("Abs_1", [array], [array]))
    for source in (path, str(path)):
        dump = reader.read_dump(source)
        assert dump.inputs[0].flags.writeable
        np.testing.assert_array_equal(dump.outputs[0], array)
    assert not reader.read_dump(path.read_bytes()).inputs[0].flags.writeable
    assert reader.read_dump(memoryview(path.read_bytes())).inputs[0].shape == (2, 3)


# ----------------------------------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Conv2D", "Conv2D"),
        ("a-b_c9", "a-b_c9"),
        ("layer1/conv.0 x\\y", "layer1_conv_0_x_y"),
        ("é:;,*", "_____"),
        ("", ""),
    ],
)
def test_sanitize(name, expected):
    assert fmt.sanitize(name) == expected


def test_file_name():
    assert fmt.file_name("Add", "add/1.x", 3, 0, 1675157077183551) == "Add.add_1_x.3.0.1675157077183551"
    assert fmt.file_name("Abs", "Abs_1", 1, 2, 42) == "Abs.Abs_1.1.2.0000000000000042"
    assert fmt.file_name("", "", 0, 0, 0) == "_._.0.0.0000000000000000"
    with pytest.raises(ValueError, match="negative"):
        fmt.file_name("Abs", "Abs_1", -1, 0, 1)


def test_now_us_is_a_16_digit_microsecond_timestamp():
    assert len(str(fmt.now_us())) == 16


def test_time_str():
    assert len(fmt.time_str()) == 14 and fmt.time_str().isdigit()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("resnet50", "resnet50"),
        ("ge_default_20240125153322_41", "ge_default_20240125153322_41"),
        ("my model.v1/a\\b", "my_model_v1_a_b"),
        ("..", "__"),
        ("", "_"),
        ("tab\there\x00", "tab_here_"),
        ("名前-1", "名前-1"),
    ],
)
def test_model_dir_name(name, expected):
    assert fmt.model_dir_name(name) == expected


def test_model_dir_name_keeps_long_names_within_the_os_limit():
    long_name = "m" * 300
    name = fmt.model_dir_name(long_name)
    assert len(name.encode()) <= fmt.MAX_NAME_BYTES
    assert name.startswith("m" * 200) and name == fmt.model_dir_name(long_name)
    assert name != fmt.model_dir_name("m" * 301)
    assert len(fmt.model_dir_name("名" * 100).encode()) <= fmt.MAX_NAME_BYTES


def test_dump_dir():
    assert fmt.dump_dir("/d", "20240125153144", 0, "ge_default.1", 6, 0) == pathlib.Path(
        "/d/20240125153144/0/ge_default_1/6/0"
    )
    assert fmt.dump_dir(pathlib.Path("rel"), "20240125153144", 3, None, None, None) == pathlib.Path(
        "rel/20240125153144/3"
    )


def test_hashed_name():
    assert fmt.hashed_name("Abs.Abs_1.1.0.1700000000000000") is None
    assert fmt.hashed_name("a" * 255) is None
    assert fmt.hashed_name("é" * 127) is None  # 254 bytes
    long_name = "Conv." + "x" * 300 + ".1.0.1700000000000000"
    hashed = fmt.hashed_name(long_name)
    assert hashed is not None and hashed.isdigit() and len(hashed) <= 20
    assert hashed == fmt.hashed_name(long_name)  # stable: a pure function of the name
    assert fmt.hashed_name("é" * 128) is not None  # 256 bytes
    assert hashed != fmt.hashed_name(long_name + "0")


# ----------------------------------------------------------------------------------------------------- stats CSV

DEFAULT_HEADER = (
    "Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,Count,Nan Count,"
    "Negative Inf Count,Positive Inf Count\n"
)


def test_stats_csv_default_items():
    inputs = [np.arange(6, dtype=np.float16).reshape(2, 3), np.array([-3, 100, 7], np.int8)]
    outputs = [np.array([1.5, -2.25, 1e6, 1234567.0], np.float32)]
    assert fmt.stats_csv(inputs, outputs) == (
        DEFAULT_HEADER + "Input,0,12,DT_FLOAT16,ND,2x3,5,0,2.5,6,0,0,0\n"
        "Input,1,3,DT_INT8,ND,3,100,-3,34.6667,3,0,0,0\n"
        "Output,0,16,DT_FLOAT,ND,4,1.23457e+06,-2.25,558642,4,0,0,0\n"
    )


def test_stats_csv_nan_and_infinities():
    rows = fmt.stats_csv(
        [
            np.array([1.0, np.nan, np.inf], np.float32),  # NaN skipped by max/min; only +inf: avg +inf
            np.array([-np.inf, 2.0], np.float64),  # only -inf: avg -inf
            np.array([np.inf, -np.inf, 0.5], np.float32),  # both: avg nan
            np.array([np.nan, 4.0, -1.0], np.float32),  # NaN first sticks in max and min
            np.array([2.0, np.nan], np.float16),  # NaN without inf: avg nan
        ],
        [],
    ).splitlines()[1:]
    assert rows == [
        "Input,0,12,DT_FLOAT,ND,3,inf,1,inf,3,1,0,1",
        "Input,1,16,DT_DOUBLE,ND,2,2,-inf,-inf,2,0,1,0",
        "Input,2,12,DT_FLOAT,ND,3,inf,-inf,nan,3,0,1,1",
        "Input,3,12,DT_FLOAT,ND,3,nan,nan,nan,3,1,0,0",
        "Input,4,4,DT_FLOAT16,ND,2,2,2,nan,2,1,0,0",
    ]


def test_stats_csv_integers_bools_scalars_and_unsupported():
    text = fmt.stats_csv(
        [
            np.array([[0, 255], [7, 8]], np.uint8),
            np.array([2**63 - 1, -(2**63)], np.int64),
            np.array([True, False, True]),
            np.array(3.25),
        ],
        [
            np.zeros((0, 4), np.float32),
            np.array([1 + 2j], np.complex64),
            np.array([1e-5, 0.0001234567], np.float32),
            np.array([0.0, -0.0]),
            np.array([-0.0, 0.0]),
        ],
    )
    assert text == (
        DEFAULT_HEADER + "Input,0,4,DT_UINT8,ND,2x2,255,0,67.5,4,0,0,0\n"
        "Input,1,16,DT_INT64,ND,2,9223372036854775807,-9223372036854775808,0,2,0,0,0\n"
        "Input,2,3,DT_BOOL,ND,3,1,0,0.666667,3,0,0,0\n"
        "Input,3,8,DT_DOUBLE,ND,-,3.25,3.25,3.25,1,0,0,0\n"
        "Output,0,0,DT_FLOAT,ND,0x4,,,,,,,\n"
        "Output,1,8,DT_COMPLEX64,ND,1,,,,,,,\n"
        "Output,2,8,DT_FLOAT,ND,2,0.000123457,1e-05,6.67284e-05,2,0,0,0\n"
        "Output,3,16,DT_DOUBLE,ND,2,0,0,0,2,0,0,0\n"
        "Output,4,16,DT_DOUBLE,ND,2,-0,-0,0,2,0,0,0\n"
    )


def test_stats_csv_non_default_items_use_the_adump_layout():
    inputs = [np.array([3.0, -4.0], np.float32), np.array([1, 2, 3], np.int32)]
    outputs = [np.array([np.nan, 1.0], np.float32), np.array([1j], np.complex128)]
    assert fmt.stats_csv(inputs, outputs, ["L2norm", "Max", "Avg"]) == (
        "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,Avg Value,l2norm\n"
        "Input,0,8,DT_FLOAT,ND,2,2,3,-0.5,5\n"
        "Input,1,12,DT_INT32,ND,3,3,3,2,3.74166\n"
        "Output,0,8,DT_FLOAT,ND,2,2,nan,nan,nan\n"
        "Output,1,16,DT_COMPLEX128,ND,1,1,NA,NA,NA\n"
    )
    all_items = list(fmt.STATS_ITEMS)
    assert fmt.stats_csv([], [], all_items) == (
        "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,Min Value,Avg Value,Nan Count,"
        "Negative Inf Count,Positive Inf Count,l2norm\n"
    )


def test_stats_csv_default_item_set_in_any_order_is_the_default_layout():
    arrays = [np.float32([1, 2])]
    reordered = ["Positive Inf", "Negative Inf", "Nan", "Avg", "Min", "Max"]
    assert fmt.stats_csv(arrays, [], reordered) == fmt.stats_csv(arrays, []) == fmt.stats_csv(arrays, [], [])
    assert fmt.stats_csv([], []) == DEFAULT_HEADER


def test_stats_csv_rejects_unknown_items():
    with pytest.raises(ValueError, match="unknown dump_stats item"):
        fmt.stats_csv([], [], ["Max", "Median"])
    with pytest.raises(TypeError):
        fmt.stats_csv([], [], "Max")


def test_stats_csv_huge_values_neither_overflow_the_mean_nor_warn():
    huge = np.array([1e308, 1e308, -1e308, 1e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default = fmt.stats_csv([huge], [])
        adump = fmt.stats_csv([huge], [], ["Avg", "L2norm"])
    assert default.splitlines()[1] == "Input,0,32,DT_DOUBLE,ND,4,1e+308,-1e+308,5e+307,4,0,0,0"
    assert adump.splitlines()[1] == "Input,0,32,DT_DOUBLE,ND,4,4,inf,inf"


def test_4d_tensors_are_labelled_nchw_not_nd_so_msaccucmp_needs_no_conversion():
    """Regression (issue 15.4): every tensor was FORMAT_ND; msaccucmp logged 'Not supported from ND to NCHW'."""
    image, matrix, scalar = np.zeros((1, 3, 4, 4), np.float32), np.zeros((2, 3), np.float32), np.float32(1)
    message = dump_data_pb2.DumpData()
    message.ParseFromString(fmt.header("conv", [image, matrix], [scalar, image], 1)[8:])
    assert [t.format for t in message.input] == [fmt.FORMAT_NCHW, fmt.FORMAT_ND]
    assert [t.format for t in message.output] == [fmt.FORMAT_ND, fmt.FORMAT_NCHW]
    assert fmt.FORMAT_NCHW == dump_data_pb2.FORMAT_NCHW == 0
    assert fmt.stats_csv([image], [matrix]).splitlines()[1].split(",")[4] == "NCHW"
    assert fmt.stats_csv([image], [matrix]).splitlines()[2].split(",")[4] == "ND"
