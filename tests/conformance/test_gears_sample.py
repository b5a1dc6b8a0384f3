"""The dynamic-gears sample program runs unmodified under ``openacl run``, and each gear's outputs are
onnxruntime's on that gear."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.gear_models import batch_model, hw_model, reference

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).with_name("dynamic_gears_sample.py")


def _gear_input(shape) -> np.ndarray:
    """The sample's own input formula."""
    count = int(np.prod(shape))
    return (np.arange(count) % 7 * 0.25 - 0.5).astype(np.float32).reshape(shape)


@pytest.mark.parametrize(
    ("build", "input_name", "shapes"),
    [
        (batch_model, "data", [(b, 3, 4, 4) for b in (1, 2, 4, 8)]),
        (hw_model, "image", [(1, 3, 8, 8), (1, 3, 16, 12), (1, 3, 32, 32)]),
    ],
    ids=["dynamic-batch", "dynamic-hw"],
)
def test_dynamic_gears_sample_runs_every_gear(tmp_path, build, input_name, shapes):
    model = build(tmp_path / "model.onnx")
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(SAMPLE), str(model), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "execute sample success" in result.stdout
    for number, shape in enumerate(shapes):
        want = reference(model, {input_name: _gear_input(shape)})
        for index, expected in enumerate(want):
            np.testing.assert_array_equal(np.load(out / f"gear{number}_out{index}.npy"), expected)
