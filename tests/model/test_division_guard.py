"""Integer division in a user's model cannot kill the process: onnxruntime's int32/int64 ``Div`` of ``MIN`` by -1
trapped (SIGFPE). Models whose divisions cannot trap are left exactly as they are."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from openacl.division_guard import DOMAIN, guard

INT_TYPES = [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)]


def div_model(elem: int, divisor: np.ndarray | None = None, opset: int = 13, n: int = 4) -> onnx.ModelProto:
    """``y = a / b`` named ``the_div``, then ``z = y / 1``; ``b`` is an input, or an initializer when given.
    onnxruntime divides fewer than 4 elements one by one, where ``MIN / -1`` traps."""
    inputs = [helper.make_tensor_value_info("a", elem, [n])]
    initializers = [helper.make_tensor("one", elem, [1], [1])]
    if divisor is None:
        inputs.append(helper.make_tensor_value_info("b", elem, [n]))
    else:
        initializers.append(helper.make_tensor("b", elem, list(divisor.shape), divisor.tolist()))
    graph = helper.make_graph(
        [helper.make_node("Div", ["a", "b"], ["y"], name="the_div"), helper.make_node("Div", ["y", "one"], ["z"])],
        "divide",
        inputs,
        [helper.make_tensor_value_info("z", elem, [n])],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(model: onnx.ModelProto, **feeds: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def truncated_quotient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's integer division (toward zero), with ``MIN / -1`` wrapping to ``MIN``: exact, in Python integers."""
    info = np.iinfo(a.dtype)

    def one(x: int, y: int) -> int:
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return q if q <= info.max else info.min

    return np.array([one(int(x), int(y)) for x, y in zip(a, b, strict=True)], a.dtype)


@pytest.mark.parametrize(("elem", "dtype"), INT_TYPES)
@pytest.mark.parametrize("opset", [9, 13, 18])
def test_a_guarded_division_gives_cs_quotient_and_wraps_min_by_minus_one(elem, dtype, opset):
    guarded = guard(div_model(elem, opset=opset))
    assert guarded is not None
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    a = np.array([low, low, 7, -7], dtype)
    b = np.array([-1, 3, -2, -1], dtype)
    np.testing.assert_array_equal(run(guarded, a=a, b=b), truncated_quotient(a, b))
    rng = np.random.default_rng(0)
    a = rng.integers(low, high, 4, dtype=dtype, endpoint=True)
    b = np.array([-1, 1, -3, 5], dtype)
    np.testing.assert_array_equal(run(guarded, a=a, b=b), truncated_quotient(a, b))


def test_the_guarded_node_keeps_its_name_outputs_and_op_type():
    guarded = guard(div_model(TensorProto.INT32))
    node = guarded.graph.node[0]
    assert (node.name, node.op_type, node.domain, list(node.output)) == ("the_div", "Div", DOMAIN, ["y"])
    assert guarded.graph.node[1].domain == ""  # dividing by the constant 1 cannot trap: left alone


def test_a_zero_divisor_is_still_onnxruntimes_refusal():
    guarded = guard(div_model(TensorProto.INT64))
    with pytest.raises(Exception, match=r"(?i)division by zero"):
        run(guarded, a=np.array([1, 2, 3, 4], np.int64), b=np.array([1, 0, 1, 1], np.int64))


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(lambda: div_model(TensorProto.FLOAT), id="float"),
        pytest.param(lambda: div_model(TensorProto.INT16), id="int16 (divided in int width)"),
        pytest.param(lambda: div_model(TensorProto.INT32, np.array([2, 3, -2, 5], np.int32)), id="constant"),
        pytest.param(lambda: div_model(TensorProto.INT32, opset=8), id="opset without Where"),
    ],
)
def test_a_model_whose_divisions_cannot_trap_is_left_as_it_is(model):
    assert guard(model()) is None


def test_a_constant_divisor_holding_minus_one_is_guarded():
    guarded = guard(div_model(TensorProto.INT32, np.array([-1, 1, 2, 3], np.int32)))
    assert guarded is not None and guarded.graph.node[0].domain == DOMAIN
    a = np.array([np.iinfo(np.int32).min, 5, 6, 7], np.int32)
    np.testing.assert_array_equal(run(guarded, a=a), [np.iinfo(np.int32).min, 5, 3, 2])


PROGRAM = """
    import json, sys
    import numpy as np
    import openacl
    openacl.install()
    import acl

    acl.init(); acl.rt.set_device(0)
    model_id, ret = acl.mdl.load_from_file(sys.argv[1])
    assert ret == 0, ret
    desc = acl.mdl.create_desc(); acl.mdl.get_desc(desc, model_id)
    dtype = np.dtype(sys.argv[2])
    feeds = [np.array([np.iinfo(dtype).min, 9], dtype), np.array([-1, 2], dtype)]
    inputs, outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    keep = []
    for array in feeds:
        ptr, _ = acl.rt.malloc(array.nbytes, 0)
        host = array.tobytes(); keep.append(host)
        acl.rt.memcpy(ptr, array.nbytes, acl.util.bytes_to_ptr(host), array.nbytes, 1)
        acl.mdl.add_dataset_buffer(inputs, acl.create_data_buffer(ptr, array.nbytes))
    size = acl.mdl.get_output_size_by_index(desc, 0)
    out, _ = acl.rt.malloc(size, 0)
    acl.mdl.add_dataset_buffer(outputs, acl.create_data_buffer(out, size))
    ret = acl.mdl.execute(model_id, inputs, outputs)
    result = np.frombuffer(acl.util.ptr_to_bytes(out, size), dtype)
    print(json.dumps({"ret": ret, "y": result.tolist()}))
"""


@pytest.mark.subprocess
@pytest.mark.parametrize(("elem", "dtype"), INT_TYPES)
def test_regression_integer_division_of_min_by_minus_one_in_a_model_killed_the_process(tmp_path, elem, dtype):
    path = tmp_path / "divide.onnx"
    onnx.save(div_model(elem, n=2), path)
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROGRAM), str(path), np.dtype(dtype).name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    answer = json.loads(child.stdout.strip().splitlines()[-1])
    assert answer["ret"] == 0
    assert answer["y"] == [np.iinfo(dtype).min, 4]
