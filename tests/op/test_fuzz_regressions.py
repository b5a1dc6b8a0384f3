"""Bugs the fuzz suite found in acl.op, each returning 500000 or 507000 (an internal error) before its fix."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.op import execute
from tests.op.conftest import Const

INVALID = 100000
F32 = np.float32
ROOT = Path(__file__).resolve().parents[2]


def test_regression_an_object_array_list_attribute_is_a_parse_error():
    attr = acl.op.create_attr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for setter in (acl.op.set_attr_list_int, acl.op.set_attr_list_float):
            with pytest.raises(TypeError, match="args parse failed"):
                setter(attr, "axes", np.array([object(), "x"], dtype=object))
    acl.op.destroy_attr(attr)


def test_regression_a_float_list_attribute_too_large_for_a_float_is_invalid_param(acl_log):
    attr = acl.op.create_attr()
    assert acl.op.set_attr_list_float(attr, "scales", [2**1024]) == INVALID
    assert not any("internal error" in r.getMessage() for r in acl_log.records)
    acl.op.destroy_attr(attr)


def test_regression_a_model_dir_name_too_long_is_invalid_param(acl_log):
    assert acl.op.set_model_dir("x" * 300) == INVALID
    assert not any("internal error" in r.getMessage() for r in acl_log.records)


def test_regression_a_huge_1d_integer_input_does_not_exhaust_memory():
    """ONNX's data propagation built one dimension per element of a 1-D int64 input: [2**63 - 1] took every byte
    of memory before it was switched off for such inputs (found by the facade fuzzer)."""
    from openacl.op import compiled

    huge = [2**63 - 1]
    src = acl.create_tensor_desc(9, huge, 2)  # ACL_INT64, ND
    dst = acl.create_tensor_desc(0, huge, 2)  # ACL_FLOAT
    handle, ret = acl.op.create_handle_for_cast(src, dst, 0)
    assert ret == 0 and handle
    acl.op.destroy_handle(handle)  # pyACL's destroy_handle returns None
    assert compiled._data_prop_is_safe([compiled.Feed(0, "x", np.dtype(np.int64), (4096,), 0)])
    assert not compiled._data_prop_is_safe([compiled.Feed(0, "x", np.dtype(np.int64), (4097,), 0)])
    assert not compiled._data_prop_is_safe([compiled.Feed(0, "x", np.dtype(np.float32), (10**9,), 0)])


def test_regression_a_huge_float_to_int_cast_does_not_exhaust_memory():
    """A float input cast to int64 gave data propagation an integer tensor of the input's size: the rule covers
    every input, whatever its dtype (the full fuzz run ran out of memory here)."""
    src = acl.create_tensor_desc(0, [2**62], 2)  # ACL_FLOAT
    dst = acl.create_tensor_desc(9, [2**62], 2)  # ACL_INT64
    handle, ret = acl.op.create_handle_for_cast(src, dst, 0)
    assert ret == 0 and handle
    acl.op.destroy_handle(handle)


def test_regression_a_huge_2d_integer_cast_does_not_exhaust_memory():
    """The 1-D rule missed a [2**31, 2] int32 input (the full fuzz run ran out of memory in the same inference):
    any integer input past the limit, of any rank, turns data propagation off."""
    from openacl.op import compiled

    src = acl.create_tensor_desc(3, [2**31, 2], 2)  # ACL_INT32, ND
    dst = acl.create_tensor_desc(0, [2**31, 2], 2)
    handle, ret = acl.op.create_handle_for_cast(src, dst, 0)
    assert ret == 0 and handle
    acl.op.destroy_handle(handle)
    assert not compiled._data_prop_is_safe([compiled.Feed(0, "x", np.dtype(np.int32), (2**31, 2), 0)])
    assert not compiled._data_prop_is_safe([compiled.Feed(0, "x", np.dtype(np.int64), (65, 65), 0)])


def _no_internal_error(acl_log) -> None:
    assert not [r for r in acl_log.records if r.exc_info or "internal error" in r.getMessage()]


@pytest.mark.parametrize("op_type", ["ConcatV2", "Concat"])
def test_regression_a_concat_dim_holding_two_values_is_input_not_match(runner, acl_log, op_type):
    x = np.ones((2, 3), F32)
    dim = Const(np.array([0, 1], np.int32))
    inputs = [x, x, dim] if op_type == "ConcatV2" else [dim, x, x]
    assert runner.ret(op_type, inputs, [(F32, (4, 3))]) == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "concat_dim holds 2 values, not 1" in acl_log.text
    _no_internal_error(acl_log)


def test_regression_a_transpose_of_a_scalar_is_input_not_match(runner, acl_log):
    scalar = np.array(1.5, F32)
    assert runner.ret("TransposeD", [scalar], [(F32, ())], {"perm": ("list_int", [])}) == 100021
    _no_internal_error(acl_log)


@pytest.mark.parametrize(
    "op_type, inputs, output",
    [
        ("RealDiv", [np.array([1, 2], np.int32), np.array([1, 0], np.int32)], (np.int32, (2,))),
        ("ReduceSum", [np.ones((2, 3), F32), np.array([5], np.int64)], (F32, (2, 3))),
    ],
    ids=["integer_division_by_zero", "reduce_axis_out_of_range"],
)
@pytest.mark.parametrize("where", ["calling_thread", "engine_thread"])
def test_regression_an_operator_onnxruntime_refuses_fails_the_stream_as_a_model_does(
    runner, stream, acl_log, monkeypatch, op_type, inputs, output, where
):
    """The data is refused only when the operator runs: the stream fails with the model path's 500001 and one
    line, not 507000 and a traceback; the stream goes on. Small operators run on the calling thread, others on
    an engine thread: both paths."""
    if where == "engine_thread":
        monkeypatch.setattr(execute, "INLINE_LIMIT", 0)
    assert runner.ret(op_type, inputs, [output]) == 0
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_FAILURE
    failed = [r for r in acl_log.records if f"op:{op_type} failed" in r.getMessage()]
    assert len(failed) == 1 and "\n" not in failed[0].getMessage()
    _no_internal_error(acl_log)
    assert runner.run("Add", [np.ones(2, F32), np.ones(2, F32)], [(F32, (2,))])[0].tolist() == [2, 2]


def test_regression_a_slice_end_past_int64_is_clamped(runner, acl_log):
    """SliceD's end ``offset + size`` of 2**63 - 1 + 2 overflowed numpy's int64: 500000 (found by the op fuzzer)."""
    x = np.arange(3, dtype=F32)
    attrs = {"offsets": ("list_int", [2**63 - 1]), "size": ("list_int", [2])}
    assert runner.run("SliceD", [x], [(F32, (0,))], attrs)[0].shape == (0,)
    attrs = {"offsets": ("list_int", [1]), "size": ("list_int", [2**63 - 1])}
    assert runner.run("SliceD", [x], [(F32, (2,))], attrs)[0].tolist() == [1, 2]
    _no_internal_error(acl_log)


DIVISION_SCRIPT = """
import numpy as np
import openacl
openacl.install()
import acl
from tests.op.conftest import Runner

assert acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
runner = Runner(stream)
for dtype in (np.int32, np.int64):
    low = np.iinfo(dtype).min
    x1, x2 = np.array([low, 7, -7, low], dtype), np.array([-1, -1, 2, 1], dtype)
    for op_type in ("RealDiv", "Div"):
        print(op_type, runner.run(op_type, [x1, x2], [(dtype, (4,))])[0].tolist())
"""


@pytest.mark.subprocess
def test_regression_integer_division_of_the_minimum_by_minus_one_does_not_kill_the_process():
    """int32/int64 MIN / -1 is a hardware trap in onnxruntime's integer Div: SIGFPE ended the process (found by
    the op fuzzer). The quotient by -1 is the negation, which wraps MIN to MIN. Run in a child process, so that a
    regression fails this test instead of killing the test run."""
    done = subprocess.run(
        [sys.executable, "-c", DIVISION_SCRIPT], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lows = [-(2**31), -(2**63)]
    expected = [f"{op} {[low, -7, -3, low]}" for low in lows for op in ("RealDiv", "Div")]
    assert done.stdout.split("\n")[:-1] == expected
