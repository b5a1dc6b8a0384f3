"""Programs written like hicann/ge's GE-PY examples (``import ge`` only) run unmodified under ``openacl run``.

Each prints its outputs as GE-PY prints a ``Tensor``; the test parses that block and checks it against numpy.
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from tests.conformance.test_examples import ROOT, run

PROGRAMS = ROOT / "tests" / "conformance" / "programs" / "gepy"

# GE-PY's Tensor.__str__: four lines indented by eight spaces, each but the last ending in "," (", " before
# GE-PY's mid-2026 releases; both are read).
_BLOCK = re.compile(
    r"Tensor(\d+)(?: details: |详情：)\n"
    r" {8}Tensor format is (\d+), ?\n"
    r" {8}data_type is (\d+), ?\n"
    r" {8}shape is (\[[^\]]*\]), ?\n"
    r" {8}data is (.*)\n"
    r" {8}\n"
)


def tensors(stdout: str) -> list[tuple[int, int, list[int], np.ndarray]]:
    """(format, data_type, shape, data) of each printed tensor, in order."""
    found = []
    for _, fmt, dtype, shape, data in _BLOCK.findall(stdout):
        found.append((int(fmt), int(dtype), ast.literal_eval(shape), np.array(ast.literal_eval(data))))
    return found


def run_program(name: str, tmp_path, *args: str):
    result = run("run", str(PROGRAMS / name), *args, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[Error]" not in result.stdout, result.stdout
    return result.stdout


def six(values: np.ndarray) -> np.ndarray:
    """What GE prints: each float through ``%f``."""
    return np.vectorize(lambda v: float(f"{v:f}"))(values.astype(np.float64))


pytestmark = pytest.mark.subprocess


def test_relu_add(tmp_path):
    out = run_program("relu_add.py", tmp_path)
    x = np.array([[-1.0, 0.5, 2.0], [-3.0, 4.0, 0.25]], np.float32)
    [(fmt, dtype, shape, data)] = tensors(out)
    assert (fmt, dtype, shape) == (2, 0, [2, 3])
    np.testing.assert_array_equal(data, six(x + np.maximum(x, 0)))
    assert "[Info] GE finalized" in out
    [dump] = list(tmp_path.glob("ge_onnx_*_graph_0_relu_add.pbtxt"))
    assert re.fullmatch(r"ge_onnx_\d{8}_graph_0_relu_add\.pbtxt", dump.name)
    assert 'op_type: "Relu"' in dump.read_text()


def test_operator_overload_promotes_int64_to_float(tmp_path):
    [(fmt, dtype, shape, data)] = tensors(run_program("operator_overload.py", tmp_path))
    a = np.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5], np.float32)
    b = np.array([1, 2, 3, 4, 5, 6], np.int64)  # int(1.9) == 1: GE-PY truncates for integer types
    c = np.array([10, 20, 30, 40, 50, 60], np.int64)
    assert (fmt, dtype, shape) == (2, 0, [2, 3])  # DT_FLOAT: a float beats an integer
    np.testing.assert_array_equal(data, (a + b + c).reshape(2, 3))


def test_control_edge(tmp_path):
    out = run_program("control_edge.py", tmp_path)
    assert "[Info] third runs after ['first', 'second']" in out
    [(_, _, shape, data)] = tensors(out)
    assert shape == [2, 2]
    np.testing.assert_array_equal(data, np.array([[1.5, 2.5], [3.5, 4.5]]))


def test_if_graph(tmp_path):
    out = run_program("if_graph.py", tmp_path)
    assert "[Info] subgraphs: ['then_branch', 'else_branch']" in out
    assert "[Info] graph 1 cond 1: 0 output(s)" in out  # the unwired If: an empty NetOutput
    x = np.array([1.0, 2.0, 4.0], np.float32)
    then_out, else_out = tensors(out)
    assert then_out[:3] == (2, 0, [3]) and else_out[:3] == (2, 0, [3])
    np.testing.assert_array_equal(then_out[3], 5 + x)
    np.testing.assert_array_equal(else_out[3], x * 3)


def test_concat_dynamic_input(tmp_path):
    [(_, dtype, shape, data)] = tensors(run_program("concat.py", tmp_path))
    expected = np.concatenate([np.full((rows, 2, 4), i + 1.0) for i, rows in enumerate((3, 1, 2))])
    assert (dtype, shape) == (0, [6, 2, 4])
    np.testing.assert_array_equal(data, expected)


def test_split_dynamic_output(tmp_path):
    printed = tensors(run_program("split.py", tmp_path))
    x = (np.arange(48, dtype=np.float32) / 4).reshape(2, 8, 3)
    assert len(printed) == 4
    for (_, _, shape, data), expected in zip(printed, np.split(x, 4, axis=1), strict=True):
        assert shape == [2, 2, 3]
        np.testing.assert_array_equal(data, expected)


def test_matmul_transpose_attribute(tmp_path):
    [(_, dtype, shape, data)] = tensors(run_program("matmul.py", tmp_path))
    a = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    b = np.array([[1, 0, 2, -1], [3, 1, 0, 2]], np.int32)
    assert (dtype, shape) == (3, [3, 4])  # DT_INT32, printed as exact integers
    np.testing.assert_array_equal(data, a.T @ b)
    assert data.dtype.kind == "i"


def test_batchnorm_optional_inputs(tmp_path):
    [(_, _, shape, data)] = tensors(run_program("batchnorm.py", tmp_path))
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 1, 2)
    mean, var = np.array([1.0, 5.0, 8.0]), np.array([0.5, 2.0, 4.0])
    scale, offset = np.array([1.0, 2.0, 0.5]), np.array([0.0, 1.0, -1.0])
    per_channel = (1, 3, 1, 1)
    expected = (x - mean.reshape(per_channel)) / np.sqrt(var.reshape(per_channel) + 1e-3)
    expected = expected * scale.reshape(per_channel) + offset.reshape(per_channel)
    assert shape == [2, 3, 1, 2]
    np.testing.assert_allclose(data, expected, atol=2e-6)


def test_sigmoid_private_attributes_and_dumps(tmp_path):
    out = run_program("sigmoid_attrs.py", tmp_path)
    assert "_stream_label=s1 node_rank=2" in out
    [(_, _, _, data)] = tensors(out)
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(data, six(2 / (1 + np.exp(-x))), atol=1.5e-6)
    [proto] = list(tmp_path.glob("ge_proto_*_sigmoid.txt"))
    assert re.fullmatch(r"ge_proto_\d{8}_sigmoid\.txt", proto.name)
    assert 'key: "_stream_label" value { s: "s0" }' in proto.read_text()
    assert list(tmp_path.glob("ge_onnx_*_graph_0_sigmoid.pbtxt"))


def test_transformer_style_router(tmp_path):
    out = run_program("transformer_style.py", tmp_path, "3")
    saved = np.load(tmp_path / "inputs.npy", allow_pickle=True).item()
    tokens, weights, bias = saved["tokens"], saved["weights"], saved["bias"]
    scores = 1 / (1 + np.exp(-(tokens.reshape(-1, 16) @ weights.T)))
    biased = scores + bias[None, :]
    group = np.sort(biased, axis=1)[:, -2:].sum(axis=1)
    keep = np.zeros_like(group)
    keep[np.argsort(-group)[:3]] = 1
    masked = np.where(keep[:, None] > 0, biased, 0)
    (_, d1, s1, chosen), (_, d2, s2, routed) = tensors(out)
    assert (d1, s1, d2, s2) == (9, [12, 2], 0, [12, 2])  # int64 indices, float weights
    # ties (the zeroed rows) leave the choice of index open: check what was chosen, not which index
    np.testing.assert_allclose(
        np.take_along_axis(masked, chosen, 1), np.sort(masked, axis=1)[:, ::-1][:, :2], rtol=1e-5
    )
    np.testing.assert_allclose(routed, np.take_along_axis(scores, chosen, 1) / 2 + 0.5, atol=2e-6)


def test_stream_run_with_default_and_registered_allocators(tmp_path):
    out = run_program("add_async.py", tmp_path)
    a = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0], np.float32)
    b = np.array([1, 2, 3, 4, 5, 6], np.int64)
    c = np.array([10, 10, 10, 20, 20, 20], np.int64)
    printed = tensors(out)
    assert len(printed) == 3
    for fmt, dtype, shape, data in printed:
        assert (fmt, dtype, shape) == (2, 0, [2, 3])
        np.testing.assert_array_equal(data, (a + b + c).reshape(2, 3))
    assert "[Info] default allocator: 1 output(s), placement 1" in out
    # the registered pool is asked for each output and gets each block back, which it then reuses
    assert out.count("[Pool] new 24 B") == 1 and out.count("[Pool] reuse 24 B") == 1
    assert out.count("[Pool] back 24 B") == 2 and "[Info] the pool served 2 request(s)" in out
