"""``acl.mdl`` on models with gears: descriptions, the get/set functions and their codes, execution on a gear."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.dtypes import AclDataType, AclFormat
from openacl.errors import AclCode
from openacl.model.model import DEMO_MODEL
from tests.gear_models import (
    GEAR_INPUT,
    GearIO,
    batch_model,
    contrib_batch_model,
    dims_model,
    hw_model,
    reference,
)

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
NOT_A_GEAR = AclCode.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
SHORT = AclCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
BAD_MODEL = AclCode.ACL_ERROR_INVALID_MODEL_ID


def _rand(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture
def batch(ctx, tmp_path):
    path = batch_model(tmp_path / "batch.onnx")
    io = GearIO(path)
    io.path = path
    return io


# ----- descriptions -----


def test_batch_model_description_as_cann_reports_it(batch):
    desc = batch.desc
    assert acl.mdl.get_num_inputs(desc) == 2
    assert batch.gear_index == 1  # the gear input is last
    assert acl.mdl.get_input_name_by_index(desc, 1) == GEAR_INPUT
    assert acl.mdl.get_input_dims(desc, 0) == ({"name": "data", "dimCount": 4, "dims": [-1, 3, 4, 4]}, 0)
    assert acl.mdl.get_input_dims_v2(desc, 0) == acl.mdl.get_input_dims(desc, 0)
    assert acl.mdl.get_input_size_by_index(desc, 0) == 8 * 3 * 4 * 4 * 4  # the largest gear
    assert acl.mdl.get_input_dims(desc, 1) == ({"name": GEAR_INPUT, "dimCount": 1, "dims": [1]}, 0)
    assert acl.mdl.get_input_size_by_index(desc, 1) == 8
    assert acl.mdl.get_input_data_type(desc, 1) == AclDataType.ACL_INT64
    assert acl.mdl.get_input_format(desc, 1) == AclFormat.ACL_FORMAT_ND
    assert acl.mdl.get_input_format(desc, 0) == AclFormat.ACL_FORMAT_NCHW
    # outputs: the largest gear's dims and size, as a CANN sample prints them
    assert acl.mdl.get_output_dims(desc, 0) == ({"name": "scaled", "dimCount": 2, "dims": [8, 48]}, 0)
    assert acl.mdl.get_output_size_by_index(desc, 0) == 8 * 48 * 4
    assert acl.mdl.get_output_size_by_index(desc, 1) == 8 * 4
    assert acl.mdl.get_input_dims_range(desc, 0) == (
        {"rangeCount": 4, "range": [[1, 8], [3, 3], [4, 4], [4, 4]]},
        0,
    )
    assert acl.mdl.get_input_dims_range(desc, 1) == ({"rangeCount": 1, "range": [[1, 1]]}, 0)
    assert acl.mdl.get_tensor_real_name(desc, GEAR_INPUT) == GEAR_INPUT
    assert acl.mdl.get_tensor_real_name(desc, "nope") is None


def test_gear_getters_for_each_kind(ctx, tmp_path, batch):
    assert acl.mdl.get_dynamic_batch(batch.desc) == ({"batchCount": 4, "batch": [1, 2, 4, 8]}, 0)
    assert acl.mdl.get_dynamic_hw(batch.desc, -1) == ({"hwCount": 0, "hw": []}, 0)
    assert acl.mdl.get_input_dynamic_gear_count(batch.desc, -1) == (0, 0)
    hw = GearIO(hw_model(tmp_path / "hw.onnx"))
    assert acl.mdl.get_dynamic_hw(hw.desc, hw.gear_index) == ({"hwCount": 3, "hw": [[8, 8], [16, 12], [32, 32]]}, 0)
    assert acl.mdl.get_dynamic_batch(hw.desc) == ({"batchCount": 0, "batch": []}, 0)
    assert acl.mdl.get_input_dims(hw.desc, 0)[0]["dims"] == [1, 3, -1, -1]
    assert acl.mdl.get_input_dims(hw.desc, 1)[0]["dims"] == [2]
    dims = GearIO(dims_model(tmp_path / "dims.onnx"))
    count, ret = acl.mdl.get_input_dynamic_gear_count(dims.desc, -1)
    assert (count, ret) == (3, 0)
    gears, ret = acl.mdl.get_input_dynamic_dims(dims.desc, -1, count)
    assert ret == 0
    assert gears[1] == {"name": "", "dimCount": 5, "dims": [1, 4, 4, 1, 1]}  # a [1,4,4] + b [1,1]
    assert acl.mdl.get_input_dims(dims.desc, 2)[0]["dims"] == [3]  # one value per symbolic dimension
    assert acl.mdl.get_input_dynamic_dims(dims.desc, -1, 4097) == (None, INVALID)
    assert acl.mdl.get_input_dynamic_dims(dims.desc, -1, 2) == (None, INVALID)


def test_a_static_model_has_no_gears(ctx):
    desc = acl.mdl.create_desc()
    model_id, _ = acl.mdl.load_from_file(str(DEMO_MODEL))
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_num_inputs(desc) == 1
    assert acl.mdl.get_input_index_by_name(desc, GEAR_INPUT) == (0, INVALID)
    assert acl.mdl.get_dynamic_batch(desc) == ({"batchCount": 0, "batch": []}, 0)
    assert acl.mdl.get_dynamic_hw(desc, -1) == ({"hwCount": 0, "hw": []}, 0)
    assert acl.mdl.get_input_dynamic_dims(desc, -1, 0) == ([], 0)


def test_getters_on_a_bad_description_return_empty_dicts(ctx):
    assert acl.mdl.get_dynamic_batch(0xBAD) == ({}, INVALID)
    assert acl.mdl.get_dynamic_hw(0xBAD, 0) == ({}, INVALID)
    assert acl.mdl.get_input_dims_v2(0xBAD, 0) == ({}, INVALID)
    assert acl.mdl.get_input_dims_range(0xBAD, 0) == ({}, INVALID)
    assert acl.mdl.get_input_dynamic_gear_count(0xBAD, 0) == (0, INVALID)
    assert acl.mdl.get_input_dynamic_dims(0xBAD, 0, 1) == (None, INVALID)
    first, _ = acl.mdl.get_dynamic_batch(0xBAD)
    first["mutated"] = True
    assert acl.mdl.get_dynamic_batch(0xBAD) == ({}, INVALID)  # each failure is a fresh dict


def test_no_gears_declared_means_a_dynamic_shape_model(ctx, tmp_path):
    """The documented default: symbolic dims without gear metadata, no gear input, shape from buffer size."""
    path = batch_model(tmp_path / "free.onnx", gears=None)
    model_id, _ = acl.mdl.load_from_file(str(path))
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_num_inputs(desc) == 1
    assert acl.mdl.get_input_size_by_index(desc, 0) == 0
    assert acl.mdl.get_input_dims_range(desc, 0)[0]["range"][0] == [1, -1]
    x = _rand((3, 3, 4, 4))
    ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    ptrs = []
    for dataset, size in ((ins, x.nbytes), (outs, 3 * 48 * 4), (outs, 3 * 4)):
        ptr, _ = acl.rt.malloc(size, 0)
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        ptrs.append(ptr)
    data = x.tobytes()
    assert acl.rt.memcpy(ptrs[0], len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 0  # the batch of 3 comes from the buffer's size
    out_total = np.frombuffer(acl.util.ptr_to_bytes(ptrs[2], 12), np.float32)
    np.testing.assert_array_equal(out_total, reference(path, {"data": x})[1])


def test_bad_gear_metadata_fails_the_load(ctx, tmp_path, acl_log):
    path = batch_model(tmp_path / "bad.onnx", gears="1,2", dynamic_image_size="8,8;4,4")
    assert acl.mdl.load_from_file(str(path)) == (0, AclCode.ACL_ERROR_PARSE_MODEL)
    assert "ATC allows only one" in acl_log.text


BOUNDARIES = (0, -1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64)


def _gear_lists(value: int) -> dict[str, str]:
    return {"batch": f"1,{value}", "hw": f"8,8;16,{value}", "dims": f"2,3,5;4,1,{value}"}


@pytest.mark.parametrize("kind", ["batch", "hw", "dims"])
@pytest.mark.parametrize("value", BOUNDARIES)
def test_regression_a_gear_past_int64_fails_the_load_with_parse_model(ctx, tmp_path, acl_log, kind, value):
    """A gear value past int64 reached ONNX shape inference and came back as 500000 with a traceback; every gear
    value that is not a positive int64 is 100013, as every other bad gear list is."""
    make = {"batch": batch_model, "hw": hw_model, "dims": dims_model}[kind]
    data = make(tmp_path / "m.onnx", _gear_lists(value)[kind]).read_bytes()
    model_id, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
    if not 0 < value < 2**63:
        assert ret == AclCode.ACL_ERROR_PARSE_MODEL
        assert "positive int64" in acl_log.text
    else:  # a huge gear that fits is a model the load may take or refuse, with a documented code
        assert ret in (0, AclCode.ACL_ERROR_PARSE_MODEL), ret
        if ret == 0:
            assert acl.mdl.unload(model_id) == 0
    assert not [r for r in acl_log.records if r.exc_info or "internal error" in r.getMessage()]


# ----- setting a gear -----


def test_set_dynamic_batch_size_codes(batch, acl_log):
    model, ins = batch.model_id, batch.inputs[0]
    assert acl.mdl.set_dynamic_batch_size(model, ins, batch.gear_index, 3) == NOT_A_GEAR
    assert "3: not one of the model's dynamic_batch_size gears (1; 2; 4; 8)" in acl_log.text
    assert acl.mdl.set_dynamic_batch_size(model, ins, batch.gear_index, 0) == INVALID
    assert acl.mdl.set_dynamic_batch_size(model, ins, 9, 2) == INVALID
    assert acl.mdl.set_dynamic_batch_size(model, 0xBAD, batch.gear_index, 2) == INVALID
    assert acl.mdl.set_dynamic_batch_size(999_999, ins, batch.gear_index, 2) == BAD_MODEL
    assert acl.mdl.set_dynamic_hw_size(model, ins, batch.gear_index, 8, 8) == NOT_A_GEAR
    assert acl.mdl.set_input_dynamic_dims(model, ins, batch.gear_index, {"dimCount": 1, "dims": [2]}) == NOT_A_GEAR
    assert acl.mdl.set_dynamic_batch_size(model, ins, batch.gear_index, 4) == 0
    with pytest.raises(TypeError, match=r"acl\.mdl\.set_dynamic_batch_size args parse failed"):
        acl.mdl.set_dynamic_batch_size(model, ins, batch.gear_index, "4")
    with pytest.raises(TypeError, match=r"acl\.mdl\.set_dynamic_hw_size args parse failed"):
        acl.mdl.set_dynamic_hw_size(model, ins, batch.gear_index, 8)


def test_a_short_gear_buffer_is_145012(ctx, batch):
    ptr, _ = acl.rt.malloc(3, 0)
    dataset = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, 3))
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, dataset, 0, 2) == SHORT


def test_set_input_dynamic_dims_converts_the_dict_as_pyacl(ctx, tmp_path):
    io = GearIO(dims_model(tmp_path / "dims.onnx"))
    args = (io.model_id, io.inputs[0], io.gear_index)
    with pytest.raises(TypeError, match="argument 4 is not dict"):
        acl.mdl.set_input_dynamic_dims(*args, [1, 2])
    with pytest.raises(TypeError, match=r"The dims of parameter 4 is not a list\."):
        acl.mdl.set_input_dynamic_dims(*args, {"dimCount": 5, "dims": (1, 2, 4, 3, 5)})
    with pytest.raises(TypeError, match="not list of int"):
        acl.mdl.set_input_dynamic_dims(*args, {"dimCount": 5, "dims": [1, 2, 4, 3]})
    with pytest.raises(TypeError, match="not list of int"):
        acl.mdl.set_input_dynamic_dims(*args, {"dimCount": 2, "dims": [1, 2.0]})
    assert acl.mdl.set_input_dynamic_dims(*args, {"name": "", "dimCount": 5, "dims": [1, 9, 4, 3, 5]}) == NOT_A_GEAR
    assert acl.mdl.set_input_dynamic_dims(*args, {"dimCount": 3, "dims": [2, 3, 5]}) == INVALID
    assert acl.mdl.set_input_dynamic_dims(*args, {"dimCount": 5, "dims": [1, 2, 4, 3, 5, 99]}) == 0
    assert acl.mdl.set_dynamic_batch_size(io.model_id, io.inputs[0], io.gear_index, 2) == NOT_A_GEAR
    ptr = io.inputs[1][io.gear_index][0]
    assert list(np.frombuffer(acl.util.ptr_to_bytes(ptr, 24), np.uint64)) == [2, 3, 5]


def test_cur_output_dims_follow_the_gear_set_then_the_gear_run(batch):
    assert acl.mdl.get_cur_output_dims(batch.desc, 0)[0]["dims"] == [8, 48]  # the largest before any
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, batch.inputs[0], batch.gear_index, 2) == 0
    assert acl.mdl.get_cur_output_dims(batch.desc, 0)[0]["dims"] == [2, 48]
    assert acl.mdl.get_cur_output_dims(batch.desc, 1) == ({"name": "total", "dimCount": 1, "dims": [2]}, 0)
    batch.load(_rand((2, 3, 4, 4)))
    assert batch.execute() == 0
    assert acl.mdl.get_cur_output_dims(batch.desc, 0)[0]["dims"] == [2, 48]


# ----- execution on a gear -----


@pytest.mark.parametrize("gear", [1, 2, 4, 8])
def test_batch_execution_on_each_gear_matches_onnxruntime(batch, gear):
    x = _rand((gear, 3, 4, 4), seed=gear)
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, batch.inputs[0], batch.gear_index, gear) == 0
    batch.load(x)
    assert batch.execute() == 0
    got = batch.read_outputs()
    for g, w in zip(got, reference(batch.path, {"data": x}), strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("gear", [(8, 8), (16, 12), (32, 32)])
def test_hw_execution_on_each_gear_matches_onnxruntime(ctx, tmp_path, gear):
    path = hw_model(tmp_path / "hw.onnx")
    io = GearIO(path)
    x = _rand((1, 3, *gear), seed=sum(gear))
    assert acl.mdl.set_dynamic_hw_size(io.model_id, io.inputs[0], io.gear_index, *gear) == 0
    io.load(x)
    assert io.execute() == 0
    (got,) = io.read_outputs()
    assert got.shape == (1, 2, gear[0] // 2, gear[1] // 2)
    np.testing.assert_array_equal(got, reference(path, {"image": x})[0])


@pytest.mark.parametrize("index", [0, 1, 2])
def test_dims_execution_on_each_gear_matches_onnxruntime(ctx, tmp_path, index):
    path = dims_model(tmp_path / "dims.onnx")
    io = GearIO(path)
    gears, _ = acl.mdl.get_input_dynamic_dims(io.desc, -1, 3)
    dims = gears[index]["dims"]
    a, b = _rand(dims[:3], seed=index), _rand(dims[3:], seed=10 + index)
    assert acl.mdl.set_input_dynamic_dims(io.model_id, io.inputs[0], io.gear_index, gears[index]) == 0
    io.load(a, b)
    assert io.execute() == 0
    got = io.read_outputs()
    for g, w in zip(got, reference(path, {"a": a, "b": b}), strict=True):
        np.testing.assert_array_equal(g, w)


def test_outputs_shape_inference_cannot_fix_come_from_a_run(ctx, tmp_path):
    path = contrib_batch_model(tmp_path / "gelu.onnx")
    io = GearIO(path)
    assert acl.mdl.get_output_dims(io.desc, 0)[0]["dims"] == [5, 6]
    assert acl.mdl.set_dynamic_batch_size(io.model_id, io.inputs[0], io.gear_index, 2) == 0
    x = _rand((2, 6))
    io.load(x)
    assert io.execute() == 0
    np.testing.assert_array_equal(io.read_outputs()[0], reference(path, {"data": x})[0])


def test_execute_without_a_gear_set_runs_nothing(batch, acl_log):
    acl.rt.memset(batch.inputs[1][1][0], 8, 0, 8)  # a gear buffer holding 0: never set
    out_ptr, out_size = batch.outputs[1][0]
    acl.rt.memset(out_ptr, out_size, 0x7F, out_size)
    assert batch.execute() == NOT_A_GEAR
    assert "set by set_dynamic_*" in acl_log.text
    assert acl.util.ptr_to_bytes(out_ptr, out_size) == b"\x7f" * out_size


def test_buffers_too_small_for_the_gear_are_refused(ctx, batch):
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, batch.inputs[0], batch.gear_index, 4) == 0
    small_ptr, _ = acl.rt.malloc(4 * 48 * 4 - 4, 0)
    outs = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(small_ptr, 4 * 48 * 4 - 4))
    acl.mdl.add_dataset_buffer(outs, acl.mdl.get_dataset_buffer(batch.outputs[0], 1))
    assert acl.mdl.execute(batch.model_id, batch.inputs[0], outs) == INVALID
    ins = acl.mdl.create_dataset()  # the gear's inputs do not fit a 2-sample buffer
    ptr, _ = acl.rt.malloc(2 * 48 * 4, 0)
    acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(ptr, 2 * 48 * 4))
    acl.mdl.add_dataset_buffer(ins, acl.mdl.get_dataset_buffer(batch.inputs[0], 1))
    assert acl.mdl.execute(batch.model_id, ins, batch.outputs[0]) == INVALID
    assert acl.mdl.execute(batch.model_id, ins, batch.outputs[0]) == INVALID
    without_gear = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(without_gear, acl.mdl.get_dataset_buffer(batch.inputs[0], 0))
    assert acl.mdl.execute(batch.model_id, without_gear, batch.outputs[0]) == INVALID


def test_execute_async_runs_the_gear_set_when_it_was_called(batch, stream):
    """The gear is read at the call: a later set_dynamic_batch_size does not change a queued execution."""
    second_outputs = GearIO.__new__(GearIO)
    second_outputs.desc = batch.desc
    second = second_outputs._dataset(2, acl.mdl.get_output_size_by_index)
    x = _rand((8, 3, 4, 4), seed=3)
    batch.load(x)
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, batch.inputs[0], batch.gear_index, 2) == 0
    assert acl.mdl.execute_async(batch.model_id, batch.inputs[0], batch.outputs[0], stream) == 0
    assert acl.mdl.set_dynamic_batch_size(batch.model_id, batch.inputs[0], batch.gear_index, 8) == 0
    assert acl.mdl.execute_async(batch.model_id, batch.inputs[0], second[0], stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    for dataset_buffers, gear in ((batch.outputs[1], 2), (second[1], 8)):
        ptr, _ = dataset_buffers[1]
        total = np.frombuffer(acl.util.ptr_to_bytes(ptr, gear * 4), np.float32)
        np.testing.assert_array_equal(total, reference(batch.path, {"data": x[:gear]})[1])


def test_a_dumped_gear_execution_holds_the_gear_shapes(ctx, tmp_path):
    from openacl.dump.reader import read_dump

    path = batch_model(tmp_path / "batch.onnx")
    chunks: dict[str, bytearray] = {}

    def on_chunk(chunk):
        chunks.setdefault(chunk["file_name"], bytearray()).extend(
            acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
        )

    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(on_chunk, 0) == 0
    io = GearIO(path)
    assert acl.mdl.set_dynamic_batch_size(io.model_id, io.inputs[0], io.gear_index, 2) == 0
    io.load(_rand((2, 3, 4, 4)))
    assert io.execute() == 0
    acl.mdl.dump_unreg_callback()
    assert acl.mdl.finalize_dump() == 0
    relu = next(name for name in chunks if ".Relu" in name or "Relu." in name)
    assert read_dump(bytes(chunks[relu])).outputs[0].shape == (2, 3, 4, 4)


# ----- descriptions without loading, memory loads, AIPP -----


def test_get_desc_from_file_and_mem(ctx, tmp_path):
    path = hw_model(tmp_path / "hw.onnx")
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc_from_file(desc, str(path)) == 0
    assert acl.mdl.get_num_inputs(desc) == 2
    assert acl.mdl.get_dynamic_hw(desc, -1)[0]["hwCount"] == 3
    assert acl.mdl.get_cur_output_dims(desc, 0)[0]["dims"] == [1, 2, 16, 16]
    data = path.read_bytes()
    other = acl.mdl.create_desc()
    assert acl.mdl.get_desc_from_mem(other, acl.util.bytes_to_ptr(data), len(data)) == 0
    assert acl.mdl.get_input_size_by_index(other, 0) == acl.mdl.get_input_size_by_index(desc, 0)
    assert acl.mdl.get_desc_from_file(desc, str(tmp_path / "missing.onnx")) == AclCode.ACL_ERROR_INVALID_FILE
    assert acl.mdl.get_desc_from_file(0xBAD, str(path)) == INVALID
    assert acl.mdl.get_desc_from_mem(other, acl.util.bytes_to_ptr(data), 0) == AclCode.ACL_ERROR_MODEL_SIZE_INVALID


def test_query_size_from_mem_and_load_from_mem_with_mem(ctx):
    data = DEMO_MODEL.read_bytes()
    ptr = acl.util.bytes_to_ptr(data)
    work, weight, ret = acl.mdl.query_size_from_mem(ptr, len(data))
    assert ret == 0 and (work, weight) == acl.mdl.query_size(str(DEMO_MODEL))[:2]
    assert acl.mdl.query_size_from_mem(ptr, 0) == (0, 0, AclCode.ACL_ERROR_MODEL_SIZE_INVALID)
    work_ptr, _ = acl.rt.malloc(work, 0)
    weight_ptr, _ = acl.rt.malloc(weight, 0)
    model_id, ret = acl.mdl.load_from_mem_with_mem(ptr, len(data), work_ptr, work, weight_ptr, weight)
    assert ret == 0 and model_id > 0
    assert acl.mdl.load_from_mem_with_mem(ptr, len(data), work_ptr, work - 1, weight_ptr, weight) == (0, INVALID)


def test_aipp_queries_on_models_without_aipp(batch):
    assert acl.mdl.get_aipp_type(batch.model_id, 0) == (0, 0xFFFFFFFF, 0)
    assert acl.mdl.get_aipp_type(batch.model_id, 5) == (0, 0, INVALID)
    assert acl.mdl.get_aipp_type(999_999, 0) == (0, 0, BAD_MODEL)
    assert acl.mdl.get_first_aipp_info(batch.model_id, 0) == (None, AclCode.ACL_ERROR_GE_AIPP_NOT_EXIST)
