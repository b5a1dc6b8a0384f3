"""examples/ge_train_loop.py runs, and what it writes reads back with TensorBoard's reader and safetensors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


def test_train_loop_example(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ge_train_loop.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "trained 200 steps" in result.stdout

    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={"scalars": 0, "histograms": 0})
    events.Reload()
    loss = events.Scalars("loss")
    assert [e.step for e in loss] == list(range(200))
    assert loss[-1].value < 1e-3 < loss[0].value
    assert len(events.Histograms("w")) == 200

    ckpt = tmp_path / "ckpt"
    assert sorted(p.name for p in ckpt.iterdir()) == ["2-1.safetensors", "2-2.safetensors", "2-3.safetensors"]
    tensors = load_file(ckpt / "2-3.safetensors")
    np.testing.assert_allclose(tensors["w"].ravel(), [2.0, -3.0, 0.5], atol=0.05)
    np.testing.assert_allclose(tensors["b"], [1.0], atol=0.05)
    with safe_open(ckpt / "2-3.safetensors", framework="numpy") as f:
        assert f.metadata()["graph_id"] == "2" and f.metadata()["step"] == "3"
