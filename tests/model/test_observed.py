"""The observed run a dump reads: it never changes a program's outputs, holds only what the plan reads, and a
segmented run gives the same dump as a whole one."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort

import acl
from openacl.dump import reader as dump_reader
from openacl.errors import AclCode
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

    def prepare(self, plan, *shapes):
        original(self, plan, *shapes)
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


def _dynamic_chain(length: int) -> onnx.ModelProto:
    """Relu after Relu on a (batch, 64, 64) float32 tensor whose batch is symbolic: no size is known until a run."""
    nodes = [
        onnx.helper.make_node("Relu", ["x" if i == 0 else f"v{i - 1}"], [f"v{i}" if i < length - 1 else "y"])
        for i in range(length)
    ]
    graph = onnx.helper.make_graph(
        nodes,
        "chain",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 64, 64])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 64, 64])],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


def test_a_dynamic_shape_model_is_cut_by_the_sizes_of_its_first_run(tmp_path):
    path = tmp_path / "chain.onnx"
    onnx.save(_dynamic_chain(8), path)
    x = np.random.default_rng(0).standard_normal((256, 64, 64)).astype(np.float32)  # 4 MiB per value

    class Planned:
        inputs, outputs = (), (0,)

        def __init__(self, index):
            self.index = index

    def cut(shapes):
        twin = openacl_model.load_from_file(str(path), dump_only=True)
        try:
            observed_model = twin.observed()
            observed_model._segment_bytes = 3 << 20
            observed_model.prepare([Planned(i) for i in range(8)], shapes)
            dumped = [outputs[0].copy() for part in observed_model.run([x]) for _, _, outputs in part]
            return observed_model.segments, dumped
        finally:
            openacl_model.unload(twin.id)

    unsized, _ = cut(None)  # every value counts as UNKNOWN_VALUE_BYTES (1 MiB)
    sized, dumped = cut([x.shape])  # a cut after every operator
    assert unsized < sized == 8
    np.testing.assert_array_equal(dumped[-1], np.maximum(x, 0))


def _dump_config(tmp_path, name: str):
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_list": [{"model_name": name}]}}))
    (tmp_path / "dump").mkdir(exist_ok=True)
    return config


def test_regression_a_model_file_rewritten_in_place_after_a_dump_is_refused_not_a_bus_error(ctx, tmp_path):
    """The observed sessions map the model file's weights: truncating it in place (``onnx.save`` to the same path)
    used to kill the process with SIGBUS on the next dumped step."""
    path = _net(tmp_path)
    x = _input()
    assert acl.init() == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(_dump_config(tmp_path, "net"))) == 0
    io = ModelIO(path)
    before = io.run(x)[0]  # dumped: the observed sessions now map the file
    onnx.save(conv_bn_relu_net(blocks=1, size=24), path)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == AclCode.ACL_ERROR_READ_MODEL_FAILURE
    assert acl.mdl.finalize_dump() == 0
    np.testing.assert_array_equal(io.run(x)[0], before)  # undumped steps run the session loaded with the model
    acl.finalize()


def test_a_model_file_removed_before_its_first_dumped_step_is_a_read_failure(ctx, tmp_path):
    path = _net(tmp_path)
    assert acl.init() == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(_dump_config(tmp_path, "net"))) == 0
    io = ModelIO(path)
    path.unlink()
    io.load_input(_input())
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == AclCode.ACL_ERROR_READ_MODEL_FAILURE
    assert acl.mdl.finalize_dump() == 0
    assert not any(p.is_file() for p in (tmp_path / "dump").rglob("*"))
    acl.finalize()


def test_regression_an_external_data_file_rewritten_in_place_is_refused_too(ctx, tmp_path):
    """Weights kept beside the model (torch's exporter) are mapped by the model's own session as well: truncating
    them in place killed the process with SIGBUS on the next execute, dumped or not."""
    path = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu_net(blocks=6, size=24), path, save_as_external_data=True, location="net.data",
              size_threshold=0)  # fmt: skip
    assert acl.init() == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(_dump_config(tmp_path, "net"))) == 0
    io = ModelIO(path)
    io.run(_input())  # dumped: the observed sessions now map net.data
    undumped = ModelIO(path)  # executed after finalize_dump below: not dumped, checked all the same
    (tmp_path / "net.data").write_bytes(b"\0" * 16)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == AclCode.ACL_ERROR_READ_MODEL_FAILURE
    assert acl.mdl.finalize_dump() == 0
    undumped.load_input(_input())
    assert acl.mdl.execute(undumped.model_id, undumped.inputs[0], undumped.outputs[0]) == (
        AclCode.ACL_ERROR_READ_MODEL_FAILURE
    )
    acl.finalize()
