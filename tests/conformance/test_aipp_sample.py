"""The dynamic-AIPP sample program runs unmodified under ``openacl run``; what its model received is the
per-pixel reference AIPP of its YUV420SP image."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from tests.aipp_models import YUV2RGB, YUV420SP_U8, aipp_model, reference_aipp

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).with_name("dynamic_aipp_sample.py")


def test_dynamic_aipp_sample_crops_converts_and_normalises(tmp_path):
    width, height = 12, 10
    conf = f"aipp_op {{ aipp_mode: dynamic related_input_rank: 0 max_src_image_size: {width * height * 3 // 2} }}"
    model = aipp_model(tmp_path / "aipp.onnx", shape=(1, 3, 4, 6), conf=conf)
    image = np.random.default_rng(11).integers(0, 256, width * height * 3 // 2, dtype=np.uint8).tobytes()
    (tmp_path / "image.yuv").write_bytes(image)
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "openacl",
            "run",
            str(SAMPLE),
            str(model),
            str(tmp_path / "image.yuv"),
            str(width),
            str(height),
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "execute sample success" in result.stdout
    params = {
        "crop": (2, 2, 6, 4),  # the sample's centre crop: (12 - 6) // 2, (10 - 4) // 2 rounded down to even
        "csc": (YUV2RGB, (0, 128, 128), (0, 0, 0)),
        "mean": (104, 117, 123, 0),
        "var": (0.5, 0.5, 0.5, 1.0),
    }
    want = reference_aipp(image, YUV420SP_U8, width, height, params)
    np.testing.assert_array_equal(np.load(out / "out0.npy")[0], want)
