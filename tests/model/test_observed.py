"""The observed run a dump reads: it never changes a program's outputs, holds only what the plan reads, and a
segmented run gives the same dump as a whole one."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort

import acl
from openacl.dump import reader as dump_reader
from openacl.model import model as openacl_model
from openacl.model import observed, skeleton
from openacl.tools import oneshot
from tests.model_io import ModelIO
from tests.tools.convnet import conv_bn_relu_net


def _net(tmp_path, name="net"):
    path = tmp_path / f"{name}.onnx"
    onnx.save(conv_bn_relu_net(blocks=6, size=24), path)
    return path


def _input(seed=0):
    return np.random.default_rng(seed).standard_normal((1, 3, 24, 24)).astype(np.float32)


def test_regression_turning_the_dump_on_does_not_change_the_outputs(ctx, tmp_path):
    path = _net(tmp_path)
    x = _input()
    plain = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    unoptimised = session.run(None, {"input": x})[0]
    assert not np.array_equal(plain, unoptimised)  # the fusions change the numbers: the test can fail
    assert acl.init() == 0
    undumped = ModelIO(path).run(x)[0]
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_list": [{"model_name": "net"}]}}))
    (tmp_path / "dump").mkdir()
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(config)) == 0
    dumped = ModelIO(path).run(x)[0]
    assert acl.mdl.finalize_dump() == 0
    acl.finalize()
    assert any(p.is_file() for p in (tmp_path / "dump").rglob("*"))
    np.testing.assert_array_equal(undumped, dumped)


def _dump_bytes(root):
    """Each dump file's tensors by operator, read back."""
    found = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        dumped = dump_reader.read_dump(path)
        found[dumped.op_name] = [a.tobytes() for a in (*dumped.inputs, *dumped.outputs)]
    return found


def test_a_segmented_run_dumps_the_same_tensors_as_a_whole_one(tmp_path, monkeypatch):
    path = _net(tmp_path)
    whole = oneshot.dump_model(path, tmp_path / "whole", mode="all")
    monkeypatch.setattr(observed, "SEGMENT_BYTES", 4096)
    seen = []
    original = observed.ObservedModel.prepare

    def prepare(self, plan):
        original(self, plan)
        seen.append(self.segments)

    monkeypatch.setattr(observed.ObservedModel, "prepare", prepare)
    cut = oneshot.dump_model(path, tmp_path / "cut", mode="all")
    assert seen and seen[0] > 3  # the graph really was cut
    assert whole.files == cut.files == whole.model_operators
    assert _dump_bytes(whole.directory) == _dump_bytes(cut.directory)


def test_a_layer_plan_exposes_only_that_operators_values(tmp_path):
    path = _net(tmp_path)
    model = openacl_model.load_from_file(str(path), dump_only=True)
    try:
        twin = model.observed()
        target = next(i for i, op in enumerate(twin.operators) if op.type == "Conv" and i > 0)

        class Planned:
            index, inputs, outputs = target, (0, 1), (0,)

        twin.prepare([Planned])
        assert twin.segments == 1
        ((_, inputs, _),) = [item for part in twin.run([_input()]) for item in part]
        assert inputs[1].shape == (inputs[1].shape[0], inputs[0].shape[1], 3, 3)  # the weight, read from the file
        assert not inputs[1].flags.writeable
        exposed = twin._segments[0].output_names
        operator = twin.operators[target]
        assert set(exposed) == {operator.inputs[0], operator.outputs[0], *twin.model_output_names}
    finally:
        openacl_model.unload(model.id)


def test_a_model_keeps_its_graph_without_its_weights(tmp_path):
    path = _net(tmp_path)
    model = openacl_model.load_from_file(str(path))
    try:
        assert model.proto.ByteSize() < path.stat().st_size // 4
        moved = [init for init in model.proto.graph.initializer if init.data_location == onnx.TensorProto.EXTERNAL]
        assert moved and all(init.external_data[0].value == path.name for init in moved)
    finally:
        openacl_model.unload(model.id)


def test_a_model_from_memory_forgets_its_bytes_when_no_dump_can_read_them(ctx):
    data = conv_bn_relu_net(blocks=2, size=8).SerializeToString()
    model = openacl_model.load_bytes(data, "mem", "memory")
    try:
        assert model.weights.data is None
    finally:
        openacl_model.unload(model.id)


def test_skeleton_weights_read_back_exactly_from_bytes_and_file(tmp_path):
    proto = conv_bn_relu_net(blocks=3, size=8)
    path = tmp_path / "m.onnx"
    onnx.save(proto, path)
    data = path.read_bytes()
    want = {init.name: onnx.numpy_helper.to_array(init) for init in proto.graph.initializer}
    for found, weights in (
        (skeleton.of_file(str(path)), skeleton.Weights(folder=str(tmp_path))),
        (skeleton.of_bytes(data, skeleton.IN_MEMORY), skeleton.Weights(data=data)),
    ):
        graph = onnx.load_model_from_string(found.data).graph
        assert found.moved > 0
        for init in graph.initializer:
            np.testing.assert_array_equal(weights.array(init), want[init.name])
