"""``openacl.model.dynamic``: declaring gears, the shapes they give, and the gear buffer."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.model import dynamic
from openacl.model import model as _model
from openacl.model.dynamic import Gears, Kind
from openacl.runtime.buffers import data_buffers
from tests.gear_models import batch_model, hw_model, nhwc_classifier, reference

PARSE = AclCode.ACL_ERROR_PARSE_MODEL
NOT_A_GEAR = AclCode.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
SHORT = AclCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def _code(call) -> int:
    with pytest.raises(AclError) as info:
        call()
    return int(info.value.code)


# ----- declaring -----


def test_batch_gears_in_atc_syntax():
    gears = dynamic.declared({"dynamic_batch_size": " 1,2,4,8 "}, ["data"], [(-1, 3, 4, 4)])
    assert gears == Gears(Kind.BATCH, ((1,), (2,), (4,), (8,)), ((-1, 3, 4, 4),))
    assert gears.width == 1 and gears.gear_input_shape == (1,) and gears.gear_input_size == 8


def test_image_size_and_dims_gears():
    hw = dynamic.declared({"dynamic_image_size": "224,224; 448,320;"}, ["x"], [(1, 3, -1, -1)])
    assert hw.kind is Kind.HW and hw.gears == ((224, 224), (448, 320)) and hw.gear_input_size == 16
    dims = dynamic.declared(
        {"dynamic_dims": "20,20,1,1; 40,40,2,2"}, ["d", "l", "m"], [(1, 1, 40, -1), (1, -1), (-1, -1)]
    )
    assert dims.kind is Kind.DIMS and dims.width == 4 and dims.gear_input_size == 32


@pytest.mark.parametrize("layout", [{}, {"input_format": "NHWC"}, {"input_format": " nhwc "}])
def test_regression_nhwc_image_size_gears_were_refused_as_not_nchw(layout):
    """ATC takes ``--dynamic_image_size`` with ``--input_format=NHWC``: H and W are dims 1 and 2."""
    hw = dynamic.declared({"dynamic_image_size": "8,6;16,12", **layout}, ["x"], [(1, -1, -1, 3)])
    assert hw.kind is Kind.HW and hw.shapes((16, 12)) == ((1, 16, 12, 3),)
    batch = dynamic.declared({"dynamic_batch_size": "1,4", **layout}, ["x"], [(-1, 8, 8, 3)])
    assert batch.shapes((4,)) == ((4, 8, 8, 3),)


def test_layout_is_declared_or_read_from_the_symbolic_dims():
    assert dynamic.is_nhwc("NHWC", (1, 8, 8, 3)) and not dynamic.is_nhwc("NCHW", (1, -1, -1, 3))
    assert dynamic.is_nhwc(None, (1, -1, -1, 3)) and not dynamic.is_nhwc(None, (1, 3, -1, -1))
    assert not dynamic.is_nhwc("NHWC", (1, 3))  # only a 4-D input has a layout


def test_no_metadata_means_no_gears_even_with_symbolic_dims():
    assert dynamic.declared({"producer": "x"}, ["data"], [(-1, 3)]) is None


@pytest.mark.parametrize(
    ("metadata", "shapes", "message"),
    [
        ({"dynamic_batch_size": "4"}, [(-1, 3)], "1 gears, ATC allows 2 to 100"),
        ({"dynamic_batch_size": ",".join(map(str, range(1, 102)))}, [(-1, 3)], "101 gears"),
        ({"dynamic_batch_size": "1,x"}, [(-1, 3)], "must be integers"),
        ({"dynamic_batch_size": "0,2"}, [(-1, 3)], "must be positive"),
        ({"dynamic_batch_size": "2,2"}, [(-1, 3)], "listed twice"),
        ({"dynamic_batch_size": "1,2"}, [(1, 3)], "no input has a symbolic"),
        ({"dynamic_batch_size": "1,2"}, [(3, -1)], "dynamic in its first dim only"),
        ({"dynamic_batch_size": "1,2"}, [(-1, -1)], "dynamic in its first dim only"),
        ({"dynamic_image_size": "8,8;16,16"}, [(1, -1, 8, -1)], "dynamic in H and W only"),
        ({"dynamic_image_size": "8,8;16,16"}, [(-1, -1)], "NCHW [n, c, -1, -1] or NHWC [n, -1, -1, c]"),
        ({"dynamic_image_size": "8,8;16,16", "input_format": "NCHW"}, [(1, -1, -1, 3)], "dynamic in H and W"),
        ({"dynamic_image_size": "8,8;16,16", "input_format": "NHWC"}, [(1, 3, -1, -1)], "dynamic in H and W"),
        ({"dynamic_image_size": "8,8;16,16", "input_format": "NWHC"}, [(1, -1, -1, 3)], "ATC takes NCHW, NHWC"),
        ({"dynamic_image_size": "8;16"}, [(1, 3, -1, -1)], "one height and one width"),
        ({"dynamic_image_size": "8,8;16"}, [(1, 3, -1, -1)], "different numbers of values"),
        ({"dynamic_dims": "1,2;3,4"}, [(1, -1, -1, -1)], "needs 3 values"),
        ({"dynamic_batch_size": "1,2", "dynamic_dims": "1;2"}, [(-1, 3)], "ATC allows only one"),
    ],
)
def test_bad_declarations_fail_the_load_naming_the_rule(metadata, shapes, message):
    with pytest.raises(AclError) as info:
        dynamic.declared(metadata, [f"in{i}" for i in range(len(shapes))], shapes)
    assert info.value.code == PARSE
    assert message in str(info.value)


# ----- shapes -----


def test_shapes_fill_every_dynamic_input():
    batch = Gears(Kind.BATCH, ((1,), (8,)), ((-1, 3), (5,), (-1, 2, 2)))
    assert batch.shapes((8,)) == ((8, 3), (5,), (8, 2, 2))
    hw = Gears(Kind.HW, ((8, 6), (4, 4)), ((1, 3, -1, -1), (1, 1, -1, -1)))
    assert hw.shapes((8, 6)) == ((1, 3, 8, 6), (1, 1, 8, 6))
    dims = Gears(Kind.DIMS, ((20, 20, 1, 1), (40, 60, 2, 2)), ((1, 1, 40, -1), (1, -1), (-1, -1)))
    assert dims.shapes((40, 60, 2, 2)) == ((1, 1, 40, 40), (1, 60), (2, 2))


def test_largest_gear_and_largest_shape_per_input():
    dims = Gears(Kind.DIMS, ((9, 1), (2, 5), (3, 3)), ((-1,), (-1, 4)))
    # input 0 is largest on gear (9, 1), input 1 on (2, 5); the gear with most bytes overall is (2, 5): 2 + 20
    assert dims.largest_input_shapes() == ((9,), (5, 4))
    assert dims.largest == (2, 5)
    batch = Gears(Kind.BATCH, ((4,), (1,)), ((-1, 3),))
    assert batch.largest == (4,)


def test_dims_in_cann_layout_and_back():
    dims = Gears(Kind.DIMS, ((20, 20, 1, 1), (40, 40, 2, 2)), ((1, 1, 40, -1), (1, -1), (-1, -1)))
    assert dynamic.full_dims(dims, (20, 20, 1, 1)) == [1, 1, 40, 20, 1, 20, 1, 1]  # CANN's documented example
    assert dynamic.gear_of_full_dims(dims, [1, 1, 40, 40, 1, 40, 2, 2]) == (40, 40, 2, 2)
    assert _code(lambda: dynamic.gear_of_full_dims(dims, [1, 1, 40, 40])) == INVALID
    assert _code(lambda: dynamic.gear_of_full_dims(dims, [2, 1, 40, 40, 1, 40, 2, 2])) == NOT_A_GEAR
    assert _code(lambda: dynamic.gear_of_full_dims(dims, [1] * 129)) == INVALID


def test_pyacl_dicts_for_each_kind():
    batch = Gears(Kind.BATCH, ((1,), (4,)), ((-1, 3),))
    hw = Gears(Kind.HW, ((8, 6), (4, 4)), ((1, 3, -1, -1),))
    assert dynamic.batch_info(batch) == {"batchCount": 2, "batch": [1, 4]}
    assert dynamic.batch_info(hw) == dynamic.batch_info(None) == {"batchCount": 0, "batch": []}
    assert dynamic.hw_info(hw) == {"hwCount": 2, "hw": [[8, 6], [4, 4]]}
    assert dynamic.hw_info(batch) == {"hwCount": 0, "hw": []}
    assert dynamic.gear_count(batch) == 0 and dynamic.dynamic_dims(batch, 0) == []


def test_dynamic_dims_query_counts():
    dims = Gears(Kind.DIMS, ((2,), (3,)), ((-1, 2),))
    assert dynamic.dynamic_dims(dims, 2) == [
        {"name": "", "dimCount": 2, "dims": [2, 2]},
        {"name": "", "dimCount": 2, "dims": [3, 2]},
    ]
    assert dynamic.dynamic_dims(dims, 3)[2] == {"name": "", "dimCount": 0, "dims": []}
    assert _code(lambda: dynamic.dynamic_dims(dims, 1)) == INVALID
    assert _code(lambda: dynamic.dynamic_dims(dims, 4097)) == INVALID


def test_input_range():
    batch = Gears(Kind.BATCH, ((2,), (8,), (4,)), ((-1, 3),))
    assert dynamic.input_range((-1, 3), batch, 0) == [[2, 8], [3, 3]]
    assert dynamic.input_range((-1, 3), None, 0) == [[1, -1], [3, 3]]


# ----- the gear buffer -----


def _load(path):
    """A real model, loaded as acl.mdl.load_from_file does."""
    return _model.load_from_file(str(path))


def _dataset_with(*sizes: int) -> tuple[int, list[int]]:
    dataset = acl.mdl.create_dataset()
    ptrs = []
    for size in sizes:
        ptr, _ = acl.rt.malloc(size, 0)
        acl.rt.memset(ptr, size, 0xAB, size)
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        ptrs.append(ptr)
    return dataset, ptrs


@pytest.mark.parametrize(("size", "dtype"), [(8, np.uint64), (16, np.uint64), (4, np.uint32), (7, np.uint32)])
def test_batch_gear_is_written_as_u64_when_it_fits_else_u32(ctx, tmp_path, size, dtype):
    model = _load(batch_model(tmp_path / "b.onnx", "1,4"))
    dataset, ptrs = _dataset_with(16, size)
    dynamic.set_gear(model, dataset, 1, Kind.BATCH, (4,))
    width = np.dtype(dtype).itemsize
    raw = acl.util.ptr_to_bytes(ptrs[1], size)
    assert np.frombuffer(raw[:width], dtype)[0] == 4
    assert raw[width:] == b"\xab" * (size - width)  # nothing written past the value
    assert model.last_output_shapes == [(4, 48), (4,)]  # the gear get_cur_output_dims reports
    buffer = acl.mdl.get_dataset_buffer(dataset, 1)
    assert dynamic.read_gear(model.gears, data_buffers.get(buffer)) == (4,)


def test_hw_gear_is_height_then_width(ctx, tmp_path):
    model = _load(hw_model(tmp_path / "hw.onnx", "8,6;4,4"))
    dataset, ptrs = _dataset_with(16)
    dynamic.set_gear(model, dataset, 0, Kind.HW, (8, 6))
    assert list(np.frombuffer(acl.util.ptr_to_bytes(ptrs[0], 16), np.uint64)) == [8, 6]


def test_set_gear_refusals_in_cann_order(ctx, tmp_path):
    batch = _load(batch_model(tmp_path / "b.onnx", "1,4"))
    static = _load(batch_model(tmp_path / "static.onnx", None))
    dataset, _ = _dataset_with(8, 3)
    assert _code(lambda: dynamic.set_gear(batch, dataset, 0, Kind.BATCH, (0,))) == INVALID
    assert _code(lambda: dynamic.set_gear(batch, dataset, 5, Kind.BATCH, (4,))) == INVALID
    assert _code(lambda: dynamic.set_gear(batch, 0xBAD, 0, Kind.BATCH, (4,))) == INVALID
    assert _code(lambda: dynamic.set_gear(batch, dataset, 0, Kind.BATCH, (3,))) == NOT_A_GEAR
    assert _code(lambda: dynamic.set_gear(batch, dataset, 1, Kind.BATCH, (4,))) == SHORT
    assert _code(lambda: dynamic.set_gear(batch, dataset, 0, Kind.HW, (4, 4))) == NOT_A_GEAR
    assert _code(lambda: dynamic.set_gear(static, dataset, 0, Kind.BATCH, (4,))) == NOT_A_GEAR
    assert batch.last_output_shapes == [(4, 48), (4,)]  # still the largest gear: no refusal chose one


def test_reading_a_buffer_that_holds_no_gear(ctx):
    gears = Gears(Kind.BATCH, ((1,), (4,)), ((-1, 3),))
    dataset, _ = _dataset_with(8)
    buffer = data_buffers.get(acl.mdl.get_dataset_buffer(dataset, 0))
    with pytest.raises(AclError) as info:
        dynamic.read_gear(gears, buffer)
    assert info.value.code == NOT_A_GEAR and "set by set_dynamic_*" in str(info.value)


def test_regression_nhwc_image_size_model_loads_reports_nhwc_and_runs_each_gear(ctx, tmp_path):
    """The model whose input is ``[1, -1, -1, 3]`` with ``input_format: NHWC`` failed to load ("must be NCHW")."""
    model = _load(nhwc_classifier(tmp_path / "nhwc.onnx", "8,6;4,4"))
    assert model.gears.kind is Kind.HW
    assert model.acl_inputs[0].format == 1  # ACL_FORMAT_NHWC
    assert model.acl_inputs[0].size == 8 * 6 * 3 * 4
    assert model.gear_outputs == {(8, 6): [(1, 5)], (4, 4): [(1, 5)]}
    data = np.random.default_rng(1).standard_normal((1, 4, 4, 3)).astype(np.float32)
    (want,) = reference(tmp_path / "nhwc.onnx", {"image": data})
    np.testing.assert_allclose(model.run([data])[0], want, rtol=1e-6)
