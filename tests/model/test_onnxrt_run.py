"""``onnxrt.run``: model runs go through onnxruntime's C entry point, with the public ``run`` as the fallback."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from openacl import onnxrt


@pytest.fixture(scope="module")
def session():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return onnxrt.new_session(model.SerializeToString(), onnxrt.session_options())


class PublicOnly:
    """A session as an onnxruntime without a C entry point would give it: ``run`` only."""

    def __init__(self, session) -> None:
        self.calls = 0
        self._session = session

    def run(self, output_names, feeds):
        self.calls += 1
        return self._session.run(output_names, feeds)


def test_the_c_entry_and_the_public_run_give_the_same_outputs(session):
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    (through_c,) = onnxrt.run(session, ["y"], {"x": x}, False)
    public = PublicOnly(session)
    (through_public,) = onnxrt.run(public, ["y"], {"x": x}, False)
    assert public.calls == 1  # no _sess: the public run
    np.testing.assert_array_equal(through_c, np.maximum(x, 0))
    np.testing.assert_array_equal(through_public, through_c)


def test_bad_data_is_refused_through_the_c_entry_as_through_the_public_run(session):
    wrong = np.zeros((3, 3), np.float32)
    with pytest.raises(Exception, match=r"[Ii]nvalid") as raised:
        onnxrt.run(session, ["y"], {"x": wrong}, False)
    with pytest.raises(type(raised.value)):
        session.run(["y"], {"x": wrong})


def test_a_bound_run_through_the_c_entry_writes_what_the_public_run_writes(session):
    """``bound_entry``: the C entry point of a run on an IO binding; None for a session without one."""
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    outs = [np.full((2, 3), np.nan, np.float32) for _ in range(2)]
    entry = onnxrt.bound_entry(session)
    assert callable(entry)
    assert onnxrt.bound_entry(PublicOnly(session)) is None
    for run, out in ((lambda b: entry(b._iobinding, None), outs[0]), (session.run_with_iobinding, outs[1])):
        binding = session.io_binding()
        binding.bind_input("x", "cpu", 0, np.float32, [2, 3], x.ctypes.data)
        binding.bind_output("y", "cpu", 0, np.float32, [2, 3], out.ctypes.data)
        run(binding)
    np.testing.assert_array_equal(outs[0], np.maximum(x, 0))
    np.testing.assert_array_equal(outs[1], outs[0])
