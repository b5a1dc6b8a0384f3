"""Dynamic AIPP: the declaration, the description CANN gives, the parameter checks and codes, CANN's byte layout,
and what an execution feeds the model (checked pixel by pixel against a plain-Python reference)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

import acl
from openacl.errors import AclCode
from openacl.model import aipp
from tests.aipp_models import (
    AIPP_INPUT,
    RGB888_U8,
    XRGB8888_U8,
    YUV2RGB,
    YUV400_U8,
    YUV420SP_U8,
    aipp_model,
    reference_aipp,
)

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
H2D, D2H = 1, 2


class AippIO:
    """A loaded AIPP model with a device buffer for every described input and output."""

    def __init__(self, path) -> None:
        self.model_id, ret = acl.mdl.load_from_file(str(path))
        assert ret == 0
        self.desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, self.model_id) == 0
        self.inputs, self.in_ptrs = self._dataset(acl.mdl.get_num_inputs(self.desc), acl.mdl.get_input_size_by_index)
        self.outputs, self.out_ptrs = self._dataset(
            acl.mdl.get_num_outputs(self.desc), acl.mdl.get_output_size_by_index
        )
        self.aipp_index, ret = acl.mdl.get_input_index_by_name(self.desc, AIPP_INPUT)
        assert ret == 0

    def _dataset(self, count, size_of):
        dataset = acl.mdl.create_dataset()
        ptrs = []
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            assert ret == 0
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
            assert ret == 0
            ptrs.append((ptr, size))
        return dataset, ptrs

    def put_image(self, data: bytes, index: int = 0) -> None:
        ptr, size = self.in_ptrs[index]
        self._keep = data
        assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), H2D) == 0

    def output(self, shape, dtype=np.float32, index: int = 0) -> np.ndarray:
        ptr, size = self.out_ptrs[index]
        return np.frombuffer(acl.util.ptr_to_bytes(ptr, size), dtype).reshape(shape).copy()


def _params(fmt, width, height, batch=1, **kw):
    handle = acl.mdl.create_aipp(batch)
    assert handle != 0
    assert acl.mdl.set_aipp_input_format(handle, fmt) == 0
    assert acl.mdl.set_aipp_src_image_size(handle, width, height) == 0
    if "csc" in kw:
        m, ib, ob = kw["csc"]
        assert acl.mdl.set_aipp_csc_params(handle, 1, *m, *ob, *ib) == 0
    if kw.get("rbuv"):
        assert acl.mdl.set_aipp_rbuv_swap_switch(handle, 1) == 0
    if kw.get("ax"):
        assert acl.mdl.set_aipp_ax_swap_switch(handle, 1) == 0
    for b in range(batch):
        if "crop" in kw:
            assert acl.mdl.set_aipp_crop_params(handle, 1, *kw["crop"], b) == 0
        if "pad" in kw:
            assert acl.mdl.set_aipp_padding_params(handle, 1, *kw["pad"], b) == 0
        if "mean" in kw:
            assert acl.mdl.set_aipp_dtc_pixel_mean(handle, *kw["mean"], b) == 0
        if "min" in kw:
            assert acl.mdl.set_aipp_dtc_pixel_min(handle, *kw["min"], b) == 0
        if "var" in kw:
            assert acl.mdl.set_aipp_pixel_var_reci(handle, *kw["var"], b) == 0
    return handle


def _image(nbytes: int, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8).tobytes()


# ----- declaration and description -----


def test_an_aipp_model_describes_the_image_input_and_the_aipp_data_input(ctx, tmp_path):
    io = AippIO(aipp_model(tmp_path / "m.onnx", conf="aipp_op { aipp_mode: dynamic max_src_image_size: 1000 }"))
    assert acl.mdl.get_num_inputs(io.desc) == 2
    assert io.aipp_index == 1
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == 1000  # max_src_image_size
    assert acl.mdl.get_input_size_by_index(io.desc, 1) == 64 + 96 == acl.mdl.get_aipp_data_size(1)[0]
    assert acl.mdl.get_input_dims(io.desc, 1) == ({"name": AIPP_INPUT, "dimCount": 1, "dims": [160]}, 0)
    assert acl.mdl.get_aipp_type(io.model_id, 0) == (aipp.ACL_DATA_WITH_DYNAMIC_AIPP, 1, 0)
    assert acl.mdl.get_aipp_type(io.model_id, 1) == (aipp.ACL_DYNAMIC_AIPP_NODE, aipp.ACL_INVALID_NODE_INDEX, 0)
    assert acl.mdl.get_aipp_type(io.model_id, 2) == (0, 0, INVALID)
    info, ret = acl.mdl.get_first_aipp_info(io.model_id, 0)
    assert ret == 0 and info["shapeCount"] == 1 and info["srcDimNum"] == 4
    assert info["outDims"][0]["srcDims"] == {"name": "image", "dimCount": 4, "dims": [1, 3, 4, 6]}
    assert info["outDims"][0]["srcSize"] == 1000 and info["outDims"][0]["aippOutSize"] == 3 * 4 * 6 * 4
    assert "matrixR0C2" not in info  # pyACL's dict leaves it out
    assert acl.mdl.get_first_aipp_info(io.model_id, 1) == (None, AclCode.ACL_ERROR_GE_AIPP_NOT_EXIST)


def test_two_aipp_inputs_get_one_data_input_each(ctx, tmp_path):
    conf = "aipp_op { aipp_mode: dynamic related_input_rank: 1 }\naipp_op { aipp_mode: dynamic related_input_rank: 0 }"
    io = AippIO(aipp_model(tmp_path / "m.onnx", conf=conf, inputs=2))
    assert acl.mdl.get_num_inputs(io.desc) == 4
    assert acl.mdl.get_aipp_type(io.model_id, 1)[:2] == (aipp.ACL_DATA_WITH_DYNAMIC_AIPP, 2)
    assert acl.mdl.get_aipp_type(io.model_id, 0)[:2] == (aipp.ACL_DATA_WITH_DYNAMIC_AIPP, 3)
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == 1 * 4 * 6 * 4  # the default: 4 bytes a pixel


@pytest.mark.parametrize(
    ("conf", "extra"),
    [
        ("aipp_op { aipp_mode: static }", {}),
        ("aipp_op { aipp_mode: dynamic related_input_rank: 3 }", {}),
        ("aipp_op { aipp_mode: dynamic max_src_image_size: many }", {}),
        ("aipp_mode: dynamic", {}),
        ("aipp_op { aipp_mode: dynamic }", {"shape": (1, 2, 4, 6)}),
        ("aipp_op { aipp_mode: dynamic }", {"layout": "NCWH"}),
        ("aipp_op { aipp_mode: dynamic }", {"elem": TensorProto.INT64}),
    ],
    ids=["static-without-input-format", "no-such-input", "bad-size", "no-block", "two-channels", "bad-layout", "int64"],
)
def test_a_bad_declaration_fails_the_load(ctx, tmp_path, conf, extra):
    path = aipp_model(tmp_path / "m.onnx", conf=conf, **extra)
    assert acl.mdl.load_from_file(str(path))[1] == AclCode.ACL_ERROR_PARSE_MODEL


# ----- the parameter set -----


def test_parameter_set_limits_and_data_size():
    assert acl.mdl.create_aipp(0) == 0
    assert acl.mdl.create_aipp(aipp.MAX_BATCH + 1) == 0
    assert acl.mdl.get_aipp_data_size(0) == (0, INVALID)
    assert acl.mdl.get_aipp_data_size(3) == (64 + 3 * 96, 0)
    handle = acl.mdl.create_aipp(2)
    assert acl.mdl.set_aipp_crop_params(handle, 1, 0, 0, 2, 2, 2) == INVALID  # batch index past the batch
    assert acl.mdl.set_aipp_dtc_pixel_mean(handle, 1, 2, 3, 4, 1) == 0
    assert acl.mdl.destroy_aipp(handle) == 0
    assert acl.mdl.destroy_aipp(handle) == INVALID
    assert acl.mdl.set_aipp_input_format(handle, 1) == INVALID
    with pytest.raises(TypeError):
        acl.mdl.set_aipp_rbuv_swap_switch(handle, 256)  # "b": 0..255
    with pytest.raises(TypeError):
        acl.mdl.set_aipp_dtc_pixel_mean(handle, 1 << 15, 0, 0, 0, 0)  # "h": a short


def test_half_floats_saturate_as_cann_converts_them():
    handle = acl.mdl.create_aipp(1)
    assert acl.mdl.set_aipp_pixel_var_reci(handle, 1e9, float("-inf"), float("nan"), 1 / 3, 0) == 0
    stored = aipp.get(handle).batches[0].var_reci
    assert stored[:3] == (65504.0, -65504.0, 65504.0)
    assert stored[3] == float(np.float16(1 / 3))


def test_encode_decode_is_cann_layout_and_round_trips():
    params = aipp.AippParams(2, batches=[aipp.BatchParams(), aipp.BatchParams()])
    params.input_format, params.csc, params.src_w, params.src_h = YUV420SP_U8, 1, 640, 480
    params.matrix, params.input_bias = YUV2RGB, (0, 128, 128)
    params.batches[1].crop, params.batches[1].crop_box = 1, (2, 4, 100, 50)
    params.batches[1].mean, params.batches[1].var_reci = (104, 117, 123, 0), (0.5, 0.25, 2.0, 1.0)
    raw = aipp.encode(params)
    assert len(raw) == 64 + 2 * 96
    assert raw[0] == YUV420SP_U8 and raw[1] == 1 and raw[4] == 2  # inputFormat, cscSwitch, batchNum
    assert int.from_bytes(raw[8:12], "little") == 640 and int.from_bytes(raw[12:16], "little") == 480
    assert int.from_bytes(raw[64 + 96 + 8 : 64 + 96 + 12], "little") == 2  # batch 1's cropStartPosW
    assert raw[64 + 96 + 72 : 64 + 96 + 74] == np.float16(0.5).tobytes()  # dtcPixelVarReciChn0, a half float
    back = aipp.decode(raw)
    assert back.matrix == YUV2RGB and back.input_bias == (0, 128, 128)
    assert back.batches[1].crop_box == (2, 4, 100, 50) and back.batches[1].var_reci == (0.5, 0.25, 2.0, 1.0)
    assert back.batches[0].var_reci == (1.0, 1.0, 1.0, 1.0)


# ----- set_input_aipp and its checks -----


@pytest.fixture
def model(ctx, tmp_path):
    return AippIO(aipp_model(tmp_path / "m.onnx"))


def test_set_input_aipp_writes_the_parameters_into_the_data_buffer(model):
    handle = _params(RGB888_U8, 6, 4)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle) == 0
    ptr, size = model.in_ptrs[model.aipp_index]
    raw = acl.util.ptr_to_bytes(ptr, size)
    assert aipp.decode(raw).input_format == RGB888_U8 and aipp.decode(raw).src_w == 6


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        (lambda h: acl.mdl.set_aipp_input_format(h, 7), INVALID),  # ARGB8888: not on CANN's inference chips
        (lambda h: acl.mdl.set_aipp_src_image_size(h, 0, 4), INVALID),
        (lambda h: acl.mdl.set_aipp_src_image_size(h, 8, 4), INVALID),  # output 4x8, the model takes 4x6
        (lambda h: acl.mdl.set_aipp_crop_params(h, 1, 1, 0, 6, 4, 0), INVALID),  # crop leaves the image
        (lambda h: acl.mdl.set_aipp_scf_params(h, 1, 6, 4, 6, 4, 0), INVALID),  # dynamic AIPP has no scf
        (lambda h: acl.mdl.set_aipp_input_format(h, YUV400_U8), INVALID),  # 1 channel, the model has 3
    ],
    ids=["format", "no-size", "output-size", "crop", "scf", "channels"],
)
def test_set_input_aipp_refuses_what_cann_refuses(model, setup, code):
    handle = _params(RGB888_U8, 6, 4)
    setup(handle)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle) == code


def test_set_input_aipp_index_and_batch_rules(model):
    handle = _params(RGB888_U8, 6, 4)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, 0, handle) == INVALID  # the image, not the data
    assert acl.mdl.set_aipp_by_input_index(model.model_id, model.inputs, 1, handle) == AclCode.ACL_ERROR_FAILURE
    assert acl.mdl.set_aipp_by_input_index(model.model_id, model.inputs, 0, handle) == 0
    two = _params(RGB888_U8, 6, 4, batch=2)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, two) == INVALID
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, 12345) == INVALID
    assert acl.mdl.set_input_aipp(999, model.inputs, model.aipp_index, handle) == AclCode.ACL_ERROR_INVALID_MODEL_ID


def test_executing_without_parameters_is_refused(model):
    ptr, size = model.in_ptrs[model.aipp_index]
    assert acl.rt.memset(ptr, size, 0, size) == 0  # device memory is not zeroed by malloc
    model.put_image(_image(6 * 4 * 3))
    assert acl.mdl.execute(model.model_id, model.inputs, model.outputs) == INVALID


# ----- what the model receives -----


CASES = {
    "rgb": (RGB888_U8, 6, 4, {}),
    "rgb-swap-normalise": (
        RGB888_U8,
        6,
        4,
        {"rbuv": 1, "mean": (10, 20, 30, 0), "min": (1.5, 0, 0.5, 0), "var": (0.5, 0.25, 2.0, 1)},
    ),
    "xrgb": (XRGB8888_U8, 6, 4, {}),
    "rgbx-ax-swap": (XRGB8888_U8, 6, 4, {"ax": 1}),
    "yuv420sp-csc": (YUV420SP_U8, 6, 4, {"csc": (YUV2RGB, (0, 128, 128), (0, 0, 0))}),
    "yuv420sp-crop-csc-swap": (
        YUV420SP_U8,
        10,
        8,
        {"crop": (2, 4, 6, 4), "rbuv": 1, "csc": (YUV2RGB, (0, 128, 128), (0, 0, 0))},
    ),
    "yuv420sp-csc-output-bias-unused": (YUV420SP_U8, 6, 4, {"csc": (YUV2RGB, (0, 128, 128), (50, 60, 70))}),
    "rgb-crop-pad": (RGB888_U8, 5, 3, {"crop": (1, 1, 4, 2), "pad": (1, 1, 1, 1)}),
    "rgb-to-yuv-output-bias": (
        RGB888_U8,
        6,
        4,
        {"csc": ((66, 129, 25, -38, -74, 112, 112, -94, -18), (0, 0, 0), (16, 128, 128))},
    ),
}


def test_csc_takes_the_bias_of_its_direction(model):
    """YUV input: only the input bias counts; RGB input: only the output bias (CANN's two formulas)."""
    src = _image(36, seed=5)
    outs = []
    for ob in ((0, 0, 0), (50, 60, 70)):
        handle = _params(YUV420SP_U8, 6, 4, csc=(YUV2RGB, (0, 128, 128), ob))
        assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle) == 0
        model.put_image(src)
        assert acl.mdl.execute(model.model_id, model.inputs, model.outputs) == 0
        outs.append(model.output((1, 3, 4, 6)))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("case", list(CASES))
def test_execution_feeds_the_model_the_aipp_of_the_image(model, case):
    fmt, width, height, p = CASES[case]
    per_pixel = {YUV420SP_U8: 1.5, RGB888_U8: 3, XRGB8888_U8: 4}[fmt]
    src = _image(int(width * height * per_pixel), seed=len(case))
    handle = _params(fmt, width, height, **p)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle) == 0
    model.put_image(src)
    assert acl.mdl.execute(model.model_id, model.inputs, model.outputs) == 0
    want = reference_aipp(src, fmt, width, height, p)
    np.testing.assert_array_equal(model.output((1, 3, 4, 6))[0], want)


def test_batch_nhwc_and_uint8_output(ctx, tmp_path):
    path = aipp_model(tmp_path / "m.onnx", shape=(2, 4, 6, 1), layout="NHWC", elem=TensorProto.UINT8)
    io = AippIO(path)
    handle = _params(YUV400_U8, 6, 4, batch=2, mean=(100, 0, 0, 0))
    assert acl.mdl.set_aipp_by_input_index(io.model_id, io.inputs, 0, handle) == 0
    src = _image(2 * 24, seed=3)
    io.put_image(src)
    assert acl.mdl.execute(io.model_id, io.inputs, io.outputs) == 0
    got = io.output((2, 4, 6, 1), np.uint8)
    for b in range(2):
        want = reference_aipp(src[b * 24 : (b + 1) * 24], YUV400_U8, 6, 4, {"mean": (100, 0, 0, 0)})
        np.testing.assert_array_equal(got[b, :, :, 0], np.clip(want[0], 0, 255).astype(np.uint8))


def test_async_execution_reads_the_image_when_it_runs(model, stream):
    handle = _params(RGB888_U8, 6, 4)
    assert acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle) == 0
    src = _image(72, seed=9)
    host = src
    ptr, size = model.in_ptrs[0]
    assert acl.rt.memcpy_async(ptr, size, acl.util.bytes_to_ptr(host), len(host), H2D, stream) == 0
    assert acl.mdl.execute_async(model.model_id, model.inputs, model.outputs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(model.output((1, 3, 4, 6))[0], reference_aipp(src, RGB888_U8, 6, 4, {}))
