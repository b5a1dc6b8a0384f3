"""DVPP programs written like Ascend's samples and acllite apps run unmodified under ``openacl run``."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from PIL import Image
from tests.conformance.test_examples import ROOT
from tests.media.images import jpeg_bytes, photo

from openacl.model.model import DEMO_MODEL

PROGRAMS = ROOT / "tests" / "conformance" / "programs"


def run(program: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    if "OPENACL_SOC_NAME" not in env:
        full_env.pop("OPENACL_SOC_NAME", None)  # the default SoC
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(PROGRAMS / program), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


@pytest.fixture
def picture(tmp_path):
    data = jpeg_bytes(photo(500, 375, seed=3))
    path = tmp_path / "picture.jpg"
    path.write_bytes(data)
    return path, data


def reference_probabilities(data: bytes) -> np.ndarray:
    """The same pipeline in Pillow and onnxruntime: decode to RGB, bilinear resize to 64x64, run the model."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = image.size
    rgb = np.asarray(image.crop((0, 0, w & ~1, h & ~1)).resize((64, 64), Image.Resampling.BILINEAR))
    chw = (rgb.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    session = ort.InferenceSession(str(DEMO_MODEL), providers=["CPUExecutionProvider"])
    return session.run(["probabilities"], {"input": chw})[0][0]


@pytest.mark.parametrize("soc", ["Ascend310", "Ascend310P3"])
def test_jpegd_resize_classify_sample_agrees_with_pillow_and_onnxruntime(picture, soc):
    path, data = picture
    result = run("dvpp_classify.py", str(DEMO_MODEL), str(path), OPENACL_SOC_NAME=soc)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"soc {soc}" in out
    assert "jpeg 500x375, 3 components" in out and "jpegd output 500x374" in out
    assert "dvpp classification sample passed" in out
    line = next(line for line in out.splitlines() if line.startswith("probabilities "))
    ours = np.array([float(p) for p in line.split()[1:]])
    expected = reference_probabilities(data)
    assert int(np.argmax(ours)) == int(np.argmax(expected))
    assert np.abs(ours - expected).max() < 0.02


def test_letterbox_and_batch_crop_sample_writes_the_crops(picture, tmp_path):
    path, data = picture
    result = run("dvpp_detect_crop.py", str(path), str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "letterbox paste area 0..415 x 0..311" in result.stdout
    assert "dvpp detection crop sample passed" in result.stdout
    crops = [np.asarray(Image.open(tmp_path / f"crop_{i}.jpg").convert("RGB"), np.int16) for i in range(2)]
    assert all(crop.shape == (64, 96, 3) for crop in crops)
    board = np.asarray(Image.open(io.BytesIO(data)).convert("RGB").crop((0, 0, 500, 374)).resize((416, 312)), np.int16)
    same_size = board[100:164, 200:296]  # crop 1 is cut at its own size
    assert np.abs(crops[1] - same_size).mean() < 8
    halved = np.asarray(Image.fromarray(board[32:160, 16:208].astype(np.uint8)).resize((96, 64)), np.int16)
    assert np.abs(crops[0] - halved).mean() < 8


def test_regression_vpc_sample_copy_past_its_input_buffer_failed_with_100000(picture, tmp_path):
    """Ascend's VPC sample copies the decoded picture (aligned 128 x 16) into a VPC input buffer sized for 16 x 2;
    a device does not fault on it. openacl used to refuse the copy (100000); now it is cut at the end of the
    buffer, with one warning naming it, and the sample runs to the end."""
    path, _ = picture
    out = tmp_path / "resized.yuv"
    result = run(
        "vpc_jpeg_resize.py", str(path), str(out), ASCEND_SLOG_PRINT_TO_STDOUT="1", ASCEND_GLOBAL_LOG_LEVEL="2"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "vpc sample passed" in result.stdout
    warnings = [line for line in result.stdout.splitlines() if line.startswith("[WARNING]")]
    assert len(warnings) == 1, warnings
    decoded, vpc_in = 512 * 384 * 3 // 2, 512 * 376 * 3 // 2 + 32  # dvpp_malloc adds 32 bytes
    assert "memcpy destination 0x" in warnings[0]
    assert f"(+{decoded} bytes) runs {decoded - vpc_in} bytes past the end of its {vpc_in}-byte" in warnings[0]
    assert out.stat().st_size == 224 * 224 * 3 // 2
