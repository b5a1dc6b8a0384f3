"""The profiled twin: onnxruntime's per-operator times for each execution, delivered when the twin is flushed;
a model it cannot be built for runs unprofiled with one warning."""

from __future__ import annotations

import os
import threading

import numpy as np
import onnx
import onnxruntime as ort

import acl
from openacl.model import model as openacl_model
from openacl.model import profiled
from openacl.runtime.prof import opdesc, session
from tests.tools.convnet import conv_bn_relu_net

AICORE_NONE = 0xFF


def _net() -> onnx.ModelProto:
    return conv_bn_relu_net(blocks=6, size=24)  # weights above the skeleton's threshold: kept outside the graph


def _input(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, 24, 24)).astype(np.float32)


class Collected:
    """What ``session.deliver`` hands out, captured by subscribing the model to a pipe read on a thread."""

    def __init__(self, model_id: int) -> None:
        self.read_fd, write_fd = os.pipe()
        config = session.create_subscribe_config(1, AICORE_NONE, write_fd)
        profiled.subscribe(model_id, config)
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read)
        self.thread.start()
        self.model_id = model_id

    def _read(self) -> None:
        while chunk := os.read(self.read_fd, 4096):
            self.data += chunk

    def finish(self) -> list[tuple[str, str]]:
        profiled.unsubscribe(self.model_id)
        self.thread.join(10)
        os.close(self.read_fd)
        data = bytes(self.data)
        ptr = acl.util.bytes_to_ptr(data)
        return [(opdesc.op_name(ptr, len(data), i), opdesc.op_type(ptr, len(data), i)) for i in range(len(data) // 80)]


def _run(model: openacl_model.Model, x: np.ndarray, step: int) -> list[np.ndarray]:
    return profiled.run(model, [x], 0, 0, step)


def test_profiled_outputs_match_the_unprofiled_ones(ctx, tmp_path):
    proto = _net()
    path = tmp_path / "net.onnx"
    onnx.save(proto, path)
    model = openacl_model.load_from_file(str(path))
    collected = Collected(model.id)
    x = _input()
    (out,) = _run(model, x, 0)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)  # onnxruntime's own, unfused run
    np.testing.assert_allclose(out, model.run([x])[0], rtol=1e-5, atol=1e-6)
    assert collected.finish() == [(n.name, n.op_type) for n in proto.graph.node]


def test_a_full_twin_is_flushed_and_a_new_one_built_without_losing_executions(ctx, monkeypatch, tmp_path):
    proto = _net()
    model = openacl_model.load_bytes(proto.SerializeToString(), "net", "memory")  # no dump: forgets its bytes...
    assert model.weights.data is None
    assert profiled._twin(model) is None  # ...so no twin can be built for it
    session.init(str(tmp_path))  # a session keeps the bytes of models loaded after it
    model = openacl_model.load_bytes(proto.SerializeToString(), "net", "memory")
    assert model.weights.data is not None
    monkeypatch.setattr(profiled, "_EVENT_BUDGET", 2 * len(proto.graph.node))  # two executions fill a twin
    collected = Collected(model.id)
    twins = set()
    for step in range(5):
        _run(model, _input(step), step)
        twins.add(id(profiled._twins.get(model.id, (None, None))[1]))
    assert len(twins) >= 3  # flushed after the 2nd and 4th
    assert collected.finish() == [(n.name, n.op_type) for n in proto.graph.node] * 5


def test_a_model_whose_twin_cannot_be_built_runs_unprofiled_with_one_warning(ctx, acl_log):
    proto = _net()
    model = openacl_model.load_bytes(proto.SerializeToString(), "net", "memory")
    collected = Collected(model.id)
    x = _input()
    first = _run(model, x, 0)
    second = _run(model, x, 1)
    np.testing.assert_array_equal(first[0], model.run([x])[0])
    np.testing.assert_array_equal(first[0], second[0])
    warnings = [r for r in acl_log.records if "runs unprofiled" in r.getMessage()]
    assert len(warnings) == 1
    assert collected.finish() == []


def test_concurrent_profiled_executions_are_serialised_on_one_twin(ctx, tmp_path):
    proto = _net()
    path = tmp_path / "net.onnx"
    onnx.save(proto, path)
    model = openacl_model.load_from_file(str(path))
    collected = Collected(model.id)
    threads = [threading.Thread(target=_run, args=(model, _input(i), i)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    names = collected.finish()
    per_run = [(n.name, n.op_type) for n in proto.graph.node]
    assert len(names) == 4 * len(per_run)
    for i in range(4):  # each execution's operators are contiguous and complete: runs never overlapped
        assert names[i * len(per_run) : (i + 1) * len(per_run)] == per_run
