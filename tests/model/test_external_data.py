"""Models whose weights are ONNX external data load, run and dump from any current directory.

torch's exporter writes external data by default, and every model over 2 GB has it. The model is saved in one
temporary folder and used from another, so only the model's own folder can resolve its weights.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import acl
from openacl.dump import reader as dump_reader
from openacl.errors import AclCode
from tests.model_io import ModelIO

ROOT = Path(__file__).resolve().parents[2]
LOG_ENV = {"ASCEND_PROCESS_LOG_PATH": os.environ["ASCEND_PROCESS_LOG_PATH"]}  # the suite's log directory
RNG = np.random.default_rng(7)
W = RNG.standard_normal((8, 4)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def save_external_model(folder: Path) -> Path:
    """``y = relu(x @ W + B)`` with W and B in ``weights.bin`` beside ``ext.onnx``."""
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
            helper.make_node("Add", ["xw", "B"], ["xwb"], name="add"),
            helper.make_node("Relu", ["xwb"], ["y"], name="relu"),
        ],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ext.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="weights.bin", size_threshold=0)
    assert (folder / "weights.bin").stat().st_size == W.nbytes + B.nbytes
    return path


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W + B, 0)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """The model's path, with the current directory set to a different, empty folder."""
    path = save_external_model(tmp_path / "models")
    other = tmp_path / "cwd"
    other.mkdir()
    monkeypatch.chdir(other)
    return path


@pytest.fixture
def inited(ctx):
    assert acl.init() == 0
    yield
    acl.finalize()


X = RNG.standard_normal((2, 8)).astype(np.float32)


def test_external_data_model_loads_and_executes_from_another_directory(inited, elsewhere):
    io = ModelIO(elsewhere)
    np.testing.assert_allclose(io.run(X)[0], expected(X), rtol=1e-6)
    assert acl.mdl.unload(io.model_id) == 0


def test_external_data_model_described_from_another_directory(inited, elsewhere):
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc_from_file(desc, str(elsewhere)) == 0
    assert acl.mdl.get_output_size_by_index(desc, 0) == 2 * 4 * 4
    assert acl.mdl.destroy_desc(desc) == 0


def test_external_data_model_dumps_from_another_directory(inited, elsewhere, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_list": [{"model_name": "ext"}]}}))
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(config)) == 0
    io = ModelIO(elsewhere)
    io.run(X)
    assert acl.mdl.finalize_dump() == 0
    dumps = {d.op_name: d for d in map(dump_reader.read_dump, (p for p in out.rglob("*") if p.is_file()))}
    assert set(dumps) == {"matmul", "add", "relu"}
    np.testing.assert_array_equal(dumps["matmul"].outputs[0], X @ W)
    np.testing.assert_allclose(dumps["relu"].outputs[0], expected(X), rtol=1e-6)


def test_load_from_mem_of_an_external_data_model_is_parse_model(inited, elsewhere, acl_log):
    data = elsewhere.read_bytes()
    ptr, ret = acl.rt.malloc(len(data), 0)
    assert ret == 0
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
    _, ret = acl.mdl.load_from_mem(ptr, len(data))
    assert ret == AclCode.ACL_ERROR_PARSE_MODEL
    assert any("external data files (weights.bin)" in r.getMessage() for r in acl_log.records)
    assert acl.rt.free(ptr) == 0


@pytest.mark.subprocess
def test_openacl_dump_of_an_external_data_model_from_another_directory(tmp_path):
    path = save_external_model(tmp_path / "models")
    other = tmp_path / "cwd"
    other.mkdir()
    np.save(other / "x.npy", X)
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "dump", str(path), "-o", "out", "--input", "x=x.npy", "--json"],
        cwd=other,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", **LOG_ENV},
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["files"] == 3
    relu = next(p for p in Path(summary["directory"]).iterdir() if p.name.startswith("Relu."))
    np.testing.assert_allclose(dump_reader.read_dump(relu).outputs[0], expected(X), rtol=1e-6)
