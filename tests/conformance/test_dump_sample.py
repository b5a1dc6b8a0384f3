"""tests/conformance/programs/dump_classify.py, written like Ascend's samples, dumps through acl.json's ``"dump"``
section; its dump compares clean against a golden ``openacl dump`` and catches one Conv's weights × 1.05."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from tests.tools.convnet import conv_bn_relu_net

from openacl.dump.reader import read_dump

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "programs" / "dump_classify.py"


def openacl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "openacl", *args], cwd=ROOT, capture_output=True, text=True, timeout=180
    )


def _classify(tmp_path: Path, model: Path, dump_path: Path, inputs: list[Path]) -> list[Path]:
    """Run the sample with a dump of every operator's inputs and outputs; the step directories it dumped."""
    dump_path.mkdir()  # CANN refuses a dump_path that does not exist
    config = tmp_path / f"acl_{dump_path.name}.json"
    config.write_text(
        json.dumps({"dump": {"dump_path": str(dump_path), "dump_list": [{"model_name": "net"}], "dump_mode": "all"}})
    )
    result = openacl("run", str(PROGRAM), str(model), str(config), *map(str, inputs))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("top1") == len(inputs)
    return sorted((p for p in dump_path.glob("*/0/net/*/*") if p.is_dir()), key=lambda p: int(p.name))


def test_a_sample_dumps_through_acl_json_and_compares_with_a_golden_dump(tmp_path):
    proto = conv_bn_relu_net(blocks=4, size=16)
    model = tmp_path / "net.onnx"
    onnx.save(proto, model)
    rng = np.random.default_rng(7)
    images = [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(2)]
    inputs = []
    for i, image in enumerate(images):
        inputs.append(tmp_path / f"image{i}.bin")
        image.tofile(inputs[-1])
        np.save(tmp_path / f"image{i}.npy", image)

    steps = _classify(tmp_path, model, tmp_path / "npu", inputs)
    assert [p.name for p in steps] == ["0", "1"]
    files = sorted(steps[1].iterdir())
    assert len(files) == len(proto.graph.node)
    conv0 = read_dump(next(p for p in files if p.name.startswith("Conv.conv0.")))
    np.testing.assert_array_equal(conv0.inputs[0], images[1])  # step 1 holds the second input, not the first

    golden = tmp_path / "golden"
    made = openacl("dump", str(model), "--input", f"input={tmp_path / 'image1.npy'}", "--mode", "all", "-o",
                   str(golden), "--quiet")  # fmt: skip
    assert made.returncode == 0, made.stderr
    same = openacl("compare", str(steps[1]), str(golden), "--json")
    assert same.returncode == 0, same.stdout + same.stderr
    assert json.loads(same.stdout)["first_divergence"] is None

    # a "device" whose second Conv has its weights scaled by 1.05: compare names that Conv, not an earlier op
    weight = next(init for init in proto.graph.initializer if init.name == "w1")
    weight.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(weight) * np.float32(1.05), "w1"))
    (tmp_path / "device").mkdir()
    onnx.save(proto, tmp_path / "device" / "net.onnx")
    device_steps = _classify(tmp_path, tmp_path / "device" / "net.onnx", tmp_path / "device_dump", inputs[1:])
    diverged = openacl("compare", str(device_steps[0]), str(golden), "--json")
    assert diverged.returncode == 1, diverged.stdout + diverged.stderr
    first = json.loads(diverged.stdout)["first_divergence"]
    assert (first["op_name"], first["tensor"]) == ("conv1", "input.1")  # its weight: the cause, not a symptom
