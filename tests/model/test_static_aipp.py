"""Static AIPP: a model whose ATC config fixes the preprocessing (``aipp_mode: static``) takes the raw image,
describes that input as CANN does, answers ``get_first_aipp_info`` with its configuration, and feeds the model the
AIPP of the image (checked pixel by pixel against the plain-Python reference); with batch and image-size gears."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

import acl
from openacl.errors import AclCode, AclError
from openacl.model import aipp
from openacl.model import model as _model
from tests.aipp_models import (
    AIPP_INPUT,
    RGB888_U8,
    XRGB8888_U8,
    YUV2RGB,
    YUV400_U8,
    YUV420SP_U8,
    aipp_model,
    reference_aipp,
    static_conf,
)
from tests.model_io import ModelIO

PARSE = AclCode.ACL_ERROR_PARSE_MODEL
H2D = 1
ACL_FORMAT_NCHW, ACL_FORMAT_NHWC, ACL_FLOAT, ACL_UINT8 = 0, 1, 0, 4
PER_PIXEL = {YUV420SP_U8: 1.5, RGB888_U8: 3, XRGB8888_U8: 4, YUV400_U8: 1}
CSC = (YUV2RGB, (0, 128, 128), (0, 0, 0))


def _image(nbytes: int, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8).tobytes()


class StaticIO(ModelIO):
    def put(self, data: bytes, index: int = 0) -> None:
        ptr, size = self.inputs[1][index]
        self._keep = data
        assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), H2D) == 0

    def execute(self) -> None:
        assert acl.mdl.execute(self.model_id, self.inputs[0], self.outputs[0]) == 0

    def output(self, shape, dtype=np.float32) -> np.ndarray:
        ptr, _ = self.outputs[1][0]
        count = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return np.frombuffer(acl.util.ptr_to_bytes(ptr, count), dtype).reshape(shape).copy()


# ----- declaration and description -----


def test_regression_static_aipp_model_failed_to_load_as_dynamic_only(ctx, tmp_path):
    """A model converted with ``aipp_mode: static`` was refused at load ("openacl runs dynamic AIPP only")."""
    path = aipp_model(tmp_path / "m.onnx", conf=static_conf(YUV420SP_U8, 6, 4, {"csc": CSC}))
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    assert acl.mdl.unload(model_id) == 0


def test_a_static_aipp_model_describes_its_input_as_cann_does(ctx, tmp_path):
    """The spec's YUV420SP detector, small: the input is the source image, NHWC uint8 of the model input's
    height and width, sized as the YUV420SP picture; no AIPP data input."""
    params = {"csc": CSC, "var": (0.0039216,) * 4}
    io = StaticIO(aipp_model(tmp_path / "m.onnx", conf=static_conf(YUV420SP_U8, 6, 4, params)))
    assert acl.mdl.get_num_inputs(io.desc) == 1
    assert acl.mdl.get_input_dims(io.desc, 0) == ({"name": "image", "dimCount": 4, "dims": [1, 4, 6, 3]}, 0)
    assert acl.mdl.get_input_data_type(io.desc, 0) == ACL_UINT8
    assert acl.mdl.get_input_format(io.desc, 0) == ACL_FORMAT_NHWC
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == 6 * 4 * 3 // 2
    assert acl.mdl.get_input_index_by_name(io.desc, AIPP_INPUT)[1] == AclCode.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.get_aipp_type(io.model_id, 0) == (aipp.ACL_DATA_WITH_STATIC_AIPP, aipp.ACL_INVALID_NODE_INDEX, 0)
    info, ret = acl.mdl.get_first_aipp_info(io.model_id, 0)
    assert ret == 0
    assert (info["inputFormat"], info["srcImageSizeW"], info["srcImageSizeH"], info["cscSwitch"]) == (1, 6, 4, 1)
    assert (info["matrixR0C0"], info["matrixR1C2"], info["matrixR2C2"]) == (256, -183, 0)
    assert (info["inputBias1"], info["inputBias2"], info["cropSwitch"]) == (128, 128, 0)
    assert info["varReciChn0"] == float(np.float16(0.0039216))  # stored as a half float
    assert (info["srcFormat"], info["srcDatatype"], info["shapeCount"]) == (ACL_FORMAT_NCHW, ACL_FLOAT, 1)
    out = info["outDims"][0]
    assert out["srcDims"]["dims"] == [1, 4, 6, 3] and out["srcSize"] == 36
    assert out["aippOutdims"]["dims"] == [1, 3, 4, 6] and out["aippOutSize"] == 3 * 4 * 6 * 4
    handle = acl.mdl.create_aipp(1)
    assert acl.mdl.set_aipp_by_input_index(io.model_id, io.inputs[0], 0, handle) == AclCode.ACL_ERROR_FAILURE


def test_omitted_sizes_and_csc_matrix_take_atc_defaults(ctx, tmp_path):
    """No ``src_image_size``: the model input's; ``csc_switch`` without a matrix: ATC's BT.601 default."""
    conf = "aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n csc_switch: true\n}"
    io = StaticIO(aipp_model(tmp_path / "m.onnx", conf=conf))
    info, _ = acl.mdl.get_first_aipp_info(io.model_id, 0)
    assert (info["srcImageSizeW"], info["srcImageSizeH"]) == (6, 4)
    assert (info["matrixR0C0"], info["matrixR0C1"], info["inputBias0"]) == (298, 516, 16)
    src = _image(36, seed=2)
    io.put(src)
    io.execute()
    matrix = (298, 516, 0, 298, -100, -208, 298, 0, 409)
    want = reference_aipp(src, YUV420SP_U8, 6, 4, {"csc": (matrix, (16, 128, 128), (0, 0, 0))})
    np.testing.assert_array_equal(io.output((1, 3, 4, 6))[0], want)


@pytest.mark.parametrize(
    ("conf", "extra", "message"),
    [
        ("aipp_op { aipp_mode: static }", {}, "input_format ''"),
        ("aipp_op { aipp_mode: static input_format: YUV422SP_U8 }", {}, "input_format 'YUV422SP_U8'"),
        ("aipp_op { aipp_mode: static input_format: RGB888_U8 resize: true }", {}, "resize"),
        ("aipp_op { aipp_mode: static input_format: RGB888_U8 src_image_size_w: 8 }", {}, "model's input is 4x6"),
        (
            "aipp_op { aipp_mode: static input_format: RGB888_U8 crop: true load_start_pos_w: 2 }",
            {},
            "leaves the source image",
        ),
        ("aipp_op { aipp_mode: static input_format: RGB888_U8 crop: maybe }", {}, "not true or false"),
        ("aipp_op { aipp_mode: static input_format: RGB888_U8 } oops", {}, "outside an aipp_op block"),
        (
            "aipp_op { aipp_mode: static input_format: RGB888_U8 }\n"
            "aipp_op { aipp_mode: dynamic related_input_rank: 1 }",
            {"inputs": 2},
            "must be the same",
        ),
        ("aipp_op { aipp_mode: static input_format: YUV400_U8 }", {}, "makes 1 channels"),
        (
            "aipp_op { aipp_mode: static input_format: RGB888_U8 }",
            {"shape": (1, 3, -1, -1), "metadata": {"dynamic_dims": "4,6;8,8"}},
            "dynamic_dims",
        ),
        (
            "aipp_op { aipp_mode: static input_format: RGB888_U8 crop: true }",
            {"shape": (1, 3, "H", "W"), "metadata": {"dynamic_image_size": "4,6;8,8"}},
            "the gear is the image",
        ),
    ],
    ids=["no-format", "format", "resize", "size", "crop", "bool", "text", "mixed", "channels", "dims", "hw-crop"],
)
def test_a_bad_static_declaration_fails_the_load_naming_the_rule(ctx, tmp_path, conf, extra, message):
    path = aipp_model(tmp_path / "m.onnx", conf=conf, **extra)
    with pytest.raises(AclError) as info:
        _model.describe_bytes(None, "m.onnx", str(path))
    assert info.value.code == PARSE
    assert message in str(info.value)
    assert acl.mdl.load_from_file(str(path))[1] == PARSE


# ----- what the model receives -----


CASES = {
    "rgb": (RGB888_U8, 6, 4, {}),
    "rgb-swap-normalise": (RGB888_U8, 6, 4, {"rbuv": 1, "mean": (10, 20, 30, 0), "var": (0.5, 0.25, 2.0, 1)}),
    "xrgb-ax-swap-min": (XRGB8888_U8, 6, 4, {"ax": 1, "min": (1.5, 0, 0.5, 0)}),
    "yuv420sp-crop-csc-swap": (YUV420SP_U8, 10, 8, {"crop": (2, 4, 6, 4), "rbuv": 1, "csc": CSC}),
    "yuv420sp-pad": (YUV420SP_U8, 4, 2, {"pad": (1, 1, 1, 1), "csc": CSC}),
    "rgb-crop-pad-to-yuv": (
        RGB888_U8,
        5,
        3,
        {
            "crop": (1, 1, 4, 2),
            "pad": (1, 1, 1, 1),
            "csc": ((66, 129, 25, -38, -74, 112, 112, -94, -18), (0,) * 3, (16, 128, 128)),
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_execution_feeds_the_model_the_aipp_of_the_image(ctx, tmp_path, case):
    fmt, width, height, p = CASES[case]
    io = StaticIO(aipp_model(tmp_path / "m.onnx", conf=static_conf(fmt, width, height, p)))
    src = _image(int(width * height * PER_PIXEL[fmt]), seed=len(case))
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == len(src)
    io.put(src)
    io.execute()
    np.testing.assert_array_equal(io.output((1, 3, 4, 6))[0], reference_aipp(src, fmt, width, height, p))


def test_nhwc_uint8_model_input_batch_of_two(ctx, tmp_path):
    """The model's own input NHWC uint8 (what a Caffe/TF detector converted by ATC often has), two images."""
    conf = static_conf(YUV400_U8, 6, 4, {"mean": (100, 0, 0, 0)})
    path = aipp_model(tmp_path / "m.onnx", shape=(2, 4, 6, 1), conf=conf, layout="NHWC", elem=TensorProto.UINT8)
    io = StaticIO(path)
    assert acl.mdl.get_input_dims(io.desc, 0)[0]["dims"] == [2, 4, 6, 1]
    src = _image(48, seed=4)
    io.put(src)
    io.execute()
    got = io.output((2, 4, 6, 1), np.uint8)
    for b in range(2):
        want = reference_aipp(src[b * 24 : (b + 1) * 24], YUV400_U8, 6, 4, {"mean": (100, 0, 0, 0)})
        np.testing.assert_array_equal(got[b, :, :, 0], np.clip(want[0], 0, 255).astype(np.uint8))


# ----- with gears -----


def test_static_aipp_with_batch_gears_runs_each_gear(ctx, tmp_path):
    p = {"crop": (2, 2, 6, 4), "csc": CSC}
    conf = static_conf(YUV420SP_U8, 10, 8, p)
    path = aipp_model(tmp_path / "m.onnx", shape=("N", 3, 4, 6), conf=conf, metadata={"dynamic_batch_size": "1,2,4"})
    io = StaticIO(path)
    assert acl.mdl.get_num_inputs(io.desc) == 2  # the image, then the gear input
    assert acl.mdl.get_input_dims(io.desc, 0)[0]["dims"] == [-1, 8, 10, 3]
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == 4 * 120  # the largest gear's images
    assert acl.mdl.get_input_dims_range(io.desc, 0)[0]["range"] == [[1, 4], [8, 8], [10, 10], [3, 3]]
    info, _ = acl.mdl.get_first_aipp_info(io.model_id, 0)
    assert info["shapeCount"] == 3 and [d["srcSize"] for d in info["outDims"]] == [120, 240, 480]
    assert info["outDims"][1]["aippOutdims"]["dims"] == [2, 3, 4, 6]
    src = _image(2 * 120, seed=8)
    io.put(src)
    assert acl.mdl.set_dynamic_batch_size(io.model_id, io.inputs[0], 1, 2) == 0
    io.execute()
    got = io.output((2, 3, 4, 6))
    for b in range(2):
        np.testing.assert_array_equal(got[b], reference_aipp(src[b * 120 : (b + 1) * 120], YUV420SP_U8, 10, 8, p))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_static_aipp_with_image_size_gears_takes_the_gear_as_the_image(ctx, tmp_path, layout):
    shape = (1, 3, "H", "W") if layout == "NCHW" else (1, "H", "W", 3)
    conf = "aipp_op { aipp_mode: static input_format: RGB888_U8 rbuv_swap_switch: true }"
    metadata = {"dynamic_image_size": "4,6;8,10"}
    io = StaticIO(aipp_model(tmp_path / "m.onnx", shape=shape, conf=conf, metadata=metadata, layout=layout))
    assert acl.mdl.get_input_dims(io.desc, 0)[0]["dims"] == [1, -1, -1, 3]
    assert acl.mdl.get_input_size_by_index(io.desc, 0) == 8 * 10 * 3
    assert acl.mdl.get_dynamic_hw(io.desc, -1) == ({"hwCount": 2, "hw": [[4, 6], [8, 10]]}, 0)
    src = _image(4 * 6 * 3, seed=6)
    io.put(src)
    assert acl.mdl.set_dynamic_hw_size(io.model_id, io.inputs[0], 1, 4, 6) == 0
    io.execute()
    want = reference_aipp(src, RGB888_U8, 6, 4, {"rbuv": 1})
    got = io.output((1, 3, 4, 6) if layout == "NCHW" else (1, 4, 6, 3))[0]
    np.testing.assert_array_equal(got if layout == "NCHW" else got.transpose(2, 0, 1), want)


def test_a_source_buffer_short_of_the_images_is_refused_before_anything_runs(ctx, tmp_path):
    """The buffer must hold the gear's images: ``ACL_ERROR_INVALID_PARAM``, the outputs untouched."""
    conf = static_conf(RGB888_U8, 6, 4, {})
    path = aipp_model(tmp_path / "m.onnx", shape=("N", 3, 4, 6), conf=conf, metadata={"dynamic_batch_size": "1,2"})
    io = StaticIO(path)
    inputs = acl.mdl.create_dataset()
    ptr, _ = acl.rt.malloc(72, 0)  # one image, the gear takes two
    acl.mdl.add_dataset_buffer(inputs, acl.create_data_buffer(ptr, 72))
    acl.mdl.add_dataset_buffer(inputs, acl.mdl.get_dataset_buffer(io.inputs[0], 1))
    assert acl.mdl.set_dynamic_batch_size(io.model_id, inputs, 1, 2) == 0
    ptr_out, size_out = io.outputs[1][0]
    assert acl.rt.memset(ptr_out, size_out, 0x7F, size_out) == 0
    assert acl.mdl.execute(io.model_id, inputs, io.outputs[0]) == AclCode.ACL_ERROR_INVALID_PARAM
    assert acl.util.ptr_to_bytes(ptr_out, size_out) == b"\x7f" * size_out


def test_an_omitted_crop_size_is_the_model_input_size(ctx, tmp_path):
    conf = (
        "aipp_op { aipp_mode: static input_format: RGB888_U8 src_image_size_w: 10 src_image_size_h: 8\n"
        "  crop: true load_start_pos_w: 3 load_start_pos_h: 2 }"
    )
    io = StaticIO(aipp_model(tmp_path / "m.onnx", conf=conf))
    info, _ = acl.mdl.get_first_aipp_info(io.model_id, 0)
    assert (info["cropSwitch"], info["cropSizeW"], info["cropSizeH"]) == (1, 6, 4)
    src = _image(10 * 8 * 3, seed=12)
    io.put(src)
    io.execute()
    want = reference_aipp(src, RGB888_U8, 10, 8, {"crop": (3, 2, 6, 4)})
    np.testing.assert_array_equal(io.output((1, 3, 4, 6))[0], want)
