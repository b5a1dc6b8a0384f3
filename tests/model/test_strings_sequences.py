"""Strings and sequences (issue 15 item 9).

Decisions under test: string intermediates run and dump as ``DT_STRING``; intermediates that are sequences or
maps run, and the operators touching one are not dumped (one warning); model inputs and outputs that are not
tensors of fixed-size elements (strings, sequences, maps: every default sklearn classifier's ZipMap output) are
``ACL_ERROR_UNSUPPORTED_DATA_TYPE`` at load, with one line naming the value.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import acl
from openacl.dump import reader as dump_reader
from openacl.errors import AclCode
from openacl.tools.parse import parse_dumps
from tests.model_io import ModelIO

OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
X = np.array([[1.5, -2.0], [3.25, 0.5], [4.0, 8.0]], np.float32)


def _save(path: Path, nodes, inputs, outputs, name: str) -> Path:
    graph = helper.make_graph(nodes, name, inputs, outputs)
    onnx.save(helper.make_model(graph, opset_imports=OPSETS), path)
    return path


def string_model(path: Path) -> Path:
    """float → Cast to strings (intermediate ``s``) → Cast back → relu."""
    return _save(
        path,
        [
            helper.make_node("Cast", ["x"], ["s"], to=TensorProto.STRING, name="to_string"),
            helper.make_node("Cast", ["s"], ["back"], to=TensorProto.FLOAT, name="to_float"),
            helper.make_node("Relu", ["back"], ["y"], name="relu"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        "strnet",
    )


def sequence_model(path: Path, ragged: bool) -> Path:
    """x → SplitToSequence (ragged [1, 2] or equal rows) → ConcatFromSequence → relu."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu_in")]
    if ragged:
        nodes.append(helper.make_node("Constant", [], ["lengths"], name="lengths", value_ints=[1, 2]))
        nodes.append(helper.make_node("SplitToSequence", ["r", "lengths"], ["seq"], name="split", axis=0))
    else:
        nodes.append(helper.make_node("SplitToSequence", ["r"], ["seq"], name="split", axis=0, keepdims=1))
    nodes.append(helper.make_node("ConcatFromSequence", ["seq"], ["c"], name="concat", axis=0))
    nodes.append(helper.make_node("Neg", ["c"], ["y"], name="neg"))
    return _save(
        path,
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        "seqnet",
    )


def zipmap_classifier(path: Path) -> Path:
    """What skl2onnx exports for a classifier by default: a label and a ZipMap of probabilities."""
    return _save(
        path,
        [
            helper.make_node("Softmax", ["x"], ["probabilities"], name="softmax", axis=1),
            helper.make_node("ArgMax", ["probabilities"], ["label"], name="argmax", axis=1, keepdims=0),
            helper.make_node(
                "ZipMap",
                ["probabilities"],
                ["output_probability"],
                name="zipmap",
                domain="ai.onnx.ml",
                classlabels_int64s=[0, 1],
            ),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, [3]),
            helper.make_value_info(
                "output_probability",
                helper.make_sequence_type_proto(
                    helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
                ),
            ),
        ],
        "zipnet",
    )


def string_output_model(path: Path, as_input: bool) -> Path:
    if as_input:
        nodes = [helper.make_node("Identity", ["names"], ["same"], name="identity")]
        inputs = [helper.make_tensor_value_info("names", TensorProto.STRING, [2])]
        outputs = [helper.make_tensor_value_info("same", TensorProto.STRING, [2])]
    else:
        nodes = [helper.make_node("Cast", ["x"], ["names"], to=TensorProto.STRING, name="to_string")]
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])]
        outputs = [helper.make_tensor_value_info("names", TensorProto.STRING, [3, 2])]
    return _save(path, nodes, inputs, outputs, "strout")


@pytest.fixture
def inited(ctx):
    assert acl.init() == 0
    yield
    acl.finalize()


def _dump(tmp_path: Path, model_path: Path, name: str) -> tuple[list[np.ndarray], dict]:
    out = tmp_path / "dump"
    out.mkdir(exist_ok=True)
    config = tmp_path / "dump.json"
    dump = {"dump_path": str(out), "dump_list": [{"model_name": name}], "dump_mode": "all"}
    config.write_text(json.dumps({"dump": dump}))
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(config)) == 0
    io = ModelIO(model_path)
    outputs = io.run(X)
    assert acl.mdl.finalize_dump() == 0
    files = {dump_reader.read_dump(p).op_name: dump_reader.read_dump(p) for p in out.rglob("*") if p.is_file()}
    return outputs, files


def test_string_intermediate_executes(inited, tmp_path):
    (y,) = ModelIO(string_model(tmp_path / "strnet.onnx")).run(X)
    np.testing.assert_array_equal(y, np.maximum(X, 0))


def test_string_intermediate_dumps_as_dt_string(inited, tmp_path):
    """Regression: ``cannot dump an array of dtype object``, and execute answered 500000."""
    (y,), files = _dump(tmp_path, string_model(tmp_path / "strnet.onnx"), "strnet")
    np.testing.assert_array_equal(y, np.maximum(X, 0))
    assert set(files) == {"to_string", "to_float", "relu"}
    strings = files["to_string"]
    assert strings.header.output[0].data_type == 13  # DT_STRING
    assert strings.outputs[0].shape == (3, 2)
    np.testing.assert_array_equal(strings.outputs[0].astype(np.float32), X)  # onnxruntime's own text of each
    assert files["to_float"].inputs[0].tolist() == strings.outputs[0].tolist()
    parsed = parse_dumps(tmp_path / "dump", tmp_path / "npy")
    assert not parsed.failed
    npy = next(p for p in parsed.written if p.name.startswith("Cast.to_string.") and ".output.0." in p.name)
    assert np.load(npy).tolist() == strings.outputs[0].tolist()


@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "equal"])
def test_sequence_intermediate_executes_and_its_operators_are_not_dumped(inited, tmp_path, ragged, acl_log):
    """Regression: a ragged sequence failed with ``inhomogeneous shape``; equal ones were stacked silently."""
    (y,), files = _dump(tmp_path, sequence_model(tmp_path / "seqnet.onnx", ragged), "seqnet")
    np.testing.assert_array_equal(y, -np.maximum(X, 0))
    assert set(files) == {"relu_in", "neg"} | ({"lengths"} if ragged else set())
    np.testing.assert_array_equal(files["neg"].inputs[0], np.maximum(X, 0))
    warnings = [r.getMessage() for r in acl_log.records if "sequence or map" in r.getMessage()]
    assert len(warnings) == 1 and "2 operators" in warnings[0] and "split, concat" in warnings[0]


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (zipmap_classifier, "'output_probability' is a sequence, not a tensor"),
        (lambda p: string_output_model(p, as_input=False), "'names' is a tensor of strings"),
        (lambda p: string_output_model(p, as_input=True), "'names' is a tensor of strings"),
    ],
    ids=["zipmap-output", "string-output", "string-input"],
)
def test_models_with_non_tensor_inputs_or_outputs_are_unsupported_data_type(inited, tmp_path, build, name, acl_log):
    """Regression: refused as "ONNX element type 8" (or 0) under ACL_ERROR_PARSE_MODEL."""
    path = build(tmp_path / "model.onnx")
    assert acl.mdl.load_from_file(str(path)) == (0, AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE)
    messages = [r.getMessage() for r in acl_log.records if r.levelname == "ERROR"]
    assert len(messages) == 1 and name in messages[0] and "\n" not in messages[0]
