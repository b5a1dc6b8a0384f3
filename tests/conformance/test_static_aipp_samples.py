"""Programs that run models converted with ATC's static AIPP, or with NHWC image-size gears, unmodified under
``openacl run``; their outputs match onnxruntime run on the input converted the documented way."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from tests.aipp_models import detector_model
from tests.conformance.test_dvpp_samples import picture, run  # noqa: F401 - the fixture
from tests.gear_models import nhwc_classifier

BOARD = 416


def yuv420sp_to_model_input(nv12: bytes, width: int, height: int) -> np.ndarray:
    """The spec's YOLOv3 AIPP written out in numpy: NV12, BT.601 full-range CSC with input bias 0/128/128 in
    CANN's fixed point (``(M · (yuv − bias)) >> 8``, clamped), times var_reci 0.0039216 as a half float."""
    data = np.frombuffer(nv12, np.uint8)
    y = data[: width * height].reshape(height, width).astype(np.int64)
    uv = data[width * height :].reshape(height // 2, width // 2, 2).astype(np.int64)
    u = uv[..., 0].repeat(2, 0).repeat(2, 1) - 128
    v = uv[..., 1].repeat(2, 0).repeat(2, 1) - 128
    r = (256 * y + 359 * v) >> 8
    g = (256 * y - 88 * u - 183 * v) >> 8
    b = (256 * y + 454 * u) >> 8
    rgb = np.clip(np.stack([r, g, b]), 0, 255).astype(np.float32)
    return (rgb * np.float32(np.float16(0.0039216)))[None]


def test_static_aipp_yolo_style_pipeline_matches_onnxruntime(picture, tmp_path):  # noqa: F811
    path, _ = picture
    detector_model(tmp_path / "yolov3.onnx")
    out = tmp_path / "out"
    out.mkdir()
    result = run("static_aipp_detect.py", str(tmp_path / "yolov3.om"), str(path), str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "input 0 data dims [1, 416, 416, 3] type 4" in result.stdout  # as the NPU run printed it
    assert "model input size 259584, dvpp picture 259584" in result.stdout
    assert "aipp input format 1 src 416x416" in result.stdout
    assert "static aipp detection sample passed" in result.stdout
    board = (out / "board.yuv").read_bytes()
    data = yuv420sp_to_model_input(board, BOARD, BOARD)
    info = np.array([[416, 416, 374, 500]], np.float32)  # JPEGD gives an even height: 375 -> 374
    session = ort.InferenceSession(str(tmp_path / "yolov3.onnx"), providers=["CPUExecutionProvider"])
    feature, half = session.run(None, {"data": data, "img_info": info})
    np.testing.assert_allclose(np.load(out / "out0.npy"), feature, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.load(out / "out1.npy"), half)


def nhwc_image(height: int, width: int) -> np.ndarray:
    h, w, c = np.meshgrid(np.arange(height), np.arange(width), np.arange(3), indexing="ij")
    return (((h * 31 + w * 17 + c * 7) % 255) / 255.0).astype(np.float32)[None]


def test_nhwc_dynamic_image_size_classifier_matches_onnxruntime(tmp_path):
    nhwc_classifier(tmp_path / "classifier.onnx")
    out = tmp_path / "out"
    out.mkdir()
    result = run("nhwc_hw_classify.py", str(tmp_path / "classifier.om"), str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "input dims [1, -1, -1, 3] format 1" in result.stdout
    assert "nhwc dynamic image size sample passed" in result.stdout
    session = ort.InferenceSession(str(tmp_path / "classifier.onnx"), providers=["CPUExecutionProvider"])
    for height, width in ((32, 32), (48, 64), (64, 48)):
        (want,) = session.run(None, {"image": nhwc_image(height, width)})
        np.testing.assert_allclose(np.load(out / f"gear{height}x{width}.npy"), want, rtol=1e-6, atol=1e-7)
