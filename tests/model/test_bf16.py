"""bfloat16 models (issue 15 item 6): bf16 inputs, outputs and intermediates load, execute, dump and parse back.

onnxruntime's Python binding has no numpy type for bfloat16 and its CPU provider few bf16 kernels (Cast,
Identity, Transpose, Reshape, Concat, ...), so the model computes in float32 between bf16 casts, the way mixed
precision graphs do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import acl
from openacl import dtypes
from openacl.dump import reader as dump_reader
from openacl.tools.parse import parse_dumps

ROOT = Path(__file__).resolve().parents[2]
LOG_ENV = {"ASCEND_PROCESS_LOG_PATH": os.environ["ASCEND_PROCESS_LOG_PATH"]}  # the suite's log directory
BF16 = np.dtype(ml_dtypes.bfloat16)
H2D, D2H = 1, 2


def save_bf16_model(path: Path) -> Path:
    """``x`` (bf16 [2, 3]) → float → relu → bf16 ``h`` (intermediate) → transpose: ``y`` (bf16 [3, 2]) and ``f``
    (float32 [3, 2])."""
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT, name="to_float"),
            helper.make_node("Relu", ["xf"], ["r"], name="relu"),
            helper.make_node("Cast", ["r"], ["h"], to=TensorProto.BFLOAT16, name="to_bf16"),
            helper.make_node("Transpose", ["h"], ["y"], name="transpose"),
            helper.make_node("Cast", ["y"], ["f"], to=TensorProto.FLOAT, name="out_float"),
        ],
        "bf16net",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3, 2]),
            helper.make_tensor_value_info("f", TensorProto.FLOAT, [3, 2]),
        ],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


X = np.array([[1.5, -2.0, 3.140625], [-0.0078125, 65280.0, 7.0]], BF16)
WANT_Y = np.maximum(X.astype(np.float32), 0).astype(BF16).T


@pytest.fixture
def inited(ctx):
    assert acl.init() == 0
    yield
    acl.finalize()


def _execute(path: Path) -> tuple[np.ndarray, np.ndarray]:
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0, ret
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    assert acl.mdl.get_input_data_type(desc, 0) == dtypes.AclDataType.ACL_BF16
    assert acl.mdl.get_output_data_type(desc, 0) == dtypes.AclDataType.ACL_BF16
    assert acl.mdl.get_input_size_by_index(desc, 0) == X.nbytes == 12
    datasets, buffers = [], []
    for sizes in ([X.nbytes], [acl.mdl.get_output_size_by_index(desc, i) for i in range(2)]):
        dataset = acl.mdl.create_dataset()
        for size in sizes:
            ptr, ret = acl.rt.malloc(size, 0)
            assert ret == 0
            acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
            buffers.append((ptr, size))
        datasets.append(dataset)
    host = X.tobytes()
    assert acl.rt.memcpy(buffers[0][0], 12, acl.util.bytes_to_ptr(host), 12, H2D) == 0
    assert acl.mdl.execute(model_id, datasets[0], datasets[1]) == 0
    y = np.frombuffer(acl.util.ptr_to_bytes(buffers[1][0], 12), BF16).reshape(3, 2)
    f = np.frombuffer(acl.util.ptr_to_bytes(buffers[2][0], 24), np.float32).reshape(3, 2)
    assert acl.mdl.unload(model_id) == 0
    return y, f


def test_bf16_model_loads_and_executes(inited, tmp_path):
    """Regression: a model with bf16 inputs or outputs was ACL_ERROR_PARSE_MODEL (100013) at load."""
    y, f = _execute(save_bf16_model(tmp_path / "bf16net.onnx"))
    assert y.view(np.uint16).tolist() == WANT_Y.view(np.uint16).tolist()
    np.testing.assert_array_equal(f, WANT_Y.astype(np.float32))


def test_bf16_dump_writes_dt_bf16_and_parses_back(inited, tmp_path):
    """Regression: a bf16 intermediate made execute fail (500001) under a dump, and bf16 was DT_UNDEFINED."""
    out = tmp_path / "dump"
    out.mkdir()
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_list": [{"model_name": "bf16net"}]}}))
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(config)) == 0
    y, _ = _execute(save_bf16_model(tmp_path / "bf16net.onnx"))
    assert acl.mdl.finalize_dump() == 0
    assert y.view(np.uint16).tolist() == WANT_Y.view(np.uint16).tolist()  # a dumped run gives the same outputs
    files = {dump_reader.read_dump(p).op_name: p for p in out.rglob("*") if p.is_file()}
    assert set(files) == {"to_float", "relu", "to_bf16", "transpose", "out_float"}
    transpose = dump_reader.read_dump(files["transpose"])
    assert transpose.header.output[0].data_type == dtypes.ProtoDataType.DT_BF16 == 27
    assert transpose.header.output[0].size == 12
    raw = Path(files["transpose"]).read_bytes()[-12:]  # the output's raw bytes end the file
    assert raw == WANT_Y.tobytes()
    np.testing.assert_array_equal(transpose.outputs[0], WANT_Y.astype(np.float32))  # widened, as msaccucmp
    parsed = parse_dumps(out, tmp_path / "npy")
    assert not parsed.failed
    npy = next(p for p in parsed.written if p.name.startswith("Transpose.") and ".output.0." in p.name)
    np.testing.assert_array_equal(np.load(npy), WANT_Y.astype(np.float32))


def test_bf16_stats_dump_has_values(inited, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    config = tmp_path / "dump.json"
    section = {"dump_path": str(out), "dump_list": [{"model_name": "bf16net", "layer": ["to_bf16"]}]}
    config.write_text(json.dumps({"dump": {**section, "dump_data": "stats"}}))
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(config)) == 0
    _execute(save_bf16_model(tmp_path / "bf16net.onnx"))
    assert acl.mdl.finalize_dump() == 0
    (csv,) = [p for p in out.rglob("*.csv")]
    output_row = csv.read_text().splitlines()[1].split(",")  # dump_mode "output": the header, then output 0
    assert output_row[:6] == ["Output", "0", "12", "DT_BF16", "ND", "2x3"]
    assert float(output_row[6]) == 65280.0 and float(output_row[7]) == 0.0


@pytest.mark.subprocess
def test_openacl_dump_of_a_bf16_model(tmp_path):
    """Regression: ``openacl dump`` exited with "No corresponding Numpy type for Tensor Type. bfloat16"."""
    path = save_bf16_model(tmp_path / "bf16net.onnx")
    np.save(tmp_path / "x.npy", X.astype(np.float32))  # .npy has no bfloat16: floats are rounded to it
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "dump", str(path), "-o", str(tmp_path / "out"), "--input", "x=x.npy"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", **LOG_ENV},
    )
    assert result.returncode == 0, result.stderr
    (transpose,) = [p for p in (tmp_path / "out").rglob("Transpose.*") if p.is_file()]
    assert Path(transpose).read_bytes()[-12:] == WANT_Y.tobytes()
