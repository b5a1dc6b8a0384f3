"""Every operator of the op table, run through ``acl.op.execute_v2``, against a numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.op import table
from tests.op.conftest import Const, desc_for, from_device, make_attr

rng = np.random.default_rng(7)
F32 = np.float32


def rand(*shape, dtype=F32):
    return rng.standard_normal(shape).astype(dtype)


BINARY = {
    "Add": np.add,
    "AddV2": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": np.divide,
    "Div": np.divide,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
}
UNARY = {
    "Relu": lambda x: np.maximum(x, 0),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Tanh": np.tanh,
    "Exp": np.exp,
    "Abs": np.abs,
    "Neg": np.negative,
}


@pytest.mark.parametrize("op_type", sorted(BINARY))
def test_binary_broadcasts_as_numpy(runner, op_type):
    x1, x2 = rand(2, 3, 4), rand(3, 4) + 3  # away from 0 for the divisions
    (y,) = runner.run(op_type, [x1, x2], [(F32, (2, 3, 4))])
    np.testing.assert_allclose(y, BINARY[op_type](x1, x2), rtol=1e-6)


def test_int32_add_and_float16_mul(runner):
    a, b = np.arange(12, dtype=np.int32).reshape(3, 4), np.full((3, 4), -5, np.int32)
    (y,) = runner.run("Add", [a, b], [(np.int32, (3, 4))])
    np.testing.assert_array_equal(y, a + b)
    h1, h2 = rand(8, dtype=np.float16), rand(8, dtype=np.float16)
    (z,) = runner.run("Mul", [h1, h2], [(np.float16, (8,))])
    np.testing.assert_array_equal(z, h1 * h2)


@pytest.mark.parametrize("op_type", sorted(UNARY))
def test_unary(runner, op_type):
    x = rand(5, 7)
    (y,) = runner.run(op_type, [x], [(F32, (5, 7))])
    np.testing.assert_allclose(y, UNARY[op_type](x), rtol=1e-5, atol=1e-7)


def test_sqrt_log_pow(runner):
    x = np.abs(rand(6)) + 0.5
    np.testing.assert_allclose(runner.run("Sqrt", [x], [(F32, (6,))])[0], np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(runner.run("Log", [x], [(F32, (6,))])[0], np.log(x), rtol=1e-6)
    np.testing.assert_allclose(runner.run("Pow", [x, np.full(6, 2, F32)], [(F32, (6,))])[0], x**2, rtol=1e-6)


def test_cast_follows_the_output_desc_and_truncates_toward_zero(runner):
    x = np.array([1.7, -1.7, 2.5, 1000.25], F32)
    (y,) = runner.run("Cast", [x], [(np.int32, (4,))])
    np.testing.assert_array_equal(y, [1, -1, 2, 1000])
    (h,) = runner.run("Cast", [x], [(np.float16, (4,))], {"dst_type": ("int", 1)})
    np.testing.assert_array_equal(h, x.astype(np.float16))


def test_cast_dst_type_that_disagrees_with_the_output_desc(runner):
    ret = runner.ret("Cast", [rand(3)], [(np.float16, (3,))], {"dst_type": ("int", 3)})
    assert ret == AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH


@pytest.mark.parametrize("t1, t2", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes(runner, t1, t2):
    a, b = rand(3, 4), rand(4, 5)
    x1, x2 = (a.T.copy() if t1 else a), (b.T.copy() if t2 else b)
    attrs = {"transpose_x1": ("bool", t1), "transpose_x2": ("bool", t2)}
    (y,) = runner.run("MatMul", [x1, x2], [(F32, (3, 5))], attrs)
    np.testing.assert_allclose(y, a @ b, rtol=1e-5)


def test_matmul_with_bias_and_an_absent_optional_input(runner):
    a, b, bias = rand(2, 3), rand(3, 4), rand(4)
    np.testing.assert_allclose(runner.run("MatMul", [a, b, bias], [(F32, (2, 4))])[0], a @ b + bias, rtol=1e-5)
    np.testing.assert_allclose(runner.run("MatMul", [a, b, None], [(F32, (2, 4))])[0], a @ b, rtol=1e-5)


def test_batch_matmul_adj(runner):
    a, b = rand(2, 3, 4), rand(2, 5, 4)
    (y,) = runner.run("BatchMatMul", [a, b], [(F32, (2, 3, 5))], {"adj_x2": ("bool", True)})
    np.testing.assert_allclose(y, a @ b.transpose(0, 2, 1), rtol=1e-5)
    both = {"adj_x1": ("bool", True), "adj_x2": ("bool", True)}
    (z,) = runner.run("BatchMatMulV2", [a.transpose(0, 2, 1).copy(), b], [(F32, (2, 3, 5))], both)
    np.testing.assert_allclose(z, a @ b.transpose(0, 2, 1), rtol=1e-5)


def test_gemm(runner):
    a, b, c = rand(4, 3), rand(4, 5), rand(3, 5)
    alpha, beta = np.array([0.5], F32), np.array([2.0], F32)
    (y,) = runner.run("GEMM", [a, b, c, alpha, beta], [(F32, (3, 5))], {"transpose_a": ("bool", True)})
    np.testing.assert_allclose(y, 0.5 * (a.T @ b) + 2.0 * c, rtol=1e-5)


def test_slice_with_const_and_with_runtime_offsets(runner):
    x = rand(4, 6)
    offsets, size = np.array([1, 2], np.int32), np.array([2, -1], np.int32)
    (y,) = runner.run("Slice", [x, Const(offsets), Const(size)], [(F32, (2, 4))])
    np.testing.assert_array_equal(y, x[1:3, 2:])
    (z,) = runner.run("Slice", [x, offsets, size], [(F32, (2, 4))])
    np.testing.assert_array_equal(z, x[1:3, 2:])
    (d,) = runner.run("SliceD", [x], [(F32, (3, 2))], {"offsets": ("list_int", [1, 0]), "size": ("list_int", [3, 2])})
    np.testing.assert_array_equal(d, x[1:4, 0:2])


def test_strided_slice_masks(runner):
    x = rand(5, 6, 3)
    begin, end, strides = (Const(np.array(v, np.int32)) for v in ([1, 0, 2], [4, 6, 3], [2, -2, 1]))
    attrs = {"end_mask": ("int", 0b010), "begin_mask": ("int", 0b010), "shrink_axis_mask": ("int", 0b100)}
    (y,) = runner.run("StridedSlice", [x, begin, end, strides], [(F32, (2, 3))], attrs)
    np.testing.assert_array_equal(y, x[1:4:2, ::-2, 2])
    d_attrs = {"begin": ("list_int", [0, 1]), "end": ("list_int", [5, 5]), "strides": ("list_int", [2, 2])}
    (z,) = runner.run("StridedSliceD", [x], [(F32, (3, 2, 3))], d_attrs)
    np.testing.assert_array_equal(z, x[0:5:2, 1:5:2])


def test_strided_slice_needs_const_begin(runner):
    x = rand(4)
    ints = np.array([0], np.int32)
    assert runner.ret("StridedSlice", [x, ints, ints, ints], [(F32, (4,))]) == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH


def test_transpose_and_transpose_d(runner):
    x = rand(2, 3, 4)
    (y,) = runner.run("Transpose", [x, Const(np.array([2, 0, 1], np.int64))], [(F32, (4, 2, 3))])
    np.testing.assert_array_equal(y, x.transpose(2, 0, 1))
    (z,) = runner.run("TransposeD", [x], [(F32, (3, 2, 4))], {"perm": ("list_int", [1, 0, 2])})
    np.testing.assert_array_equal(z, x.transpose(1, 0, 2))


def test_reshape_with_int32_shape_input(runner):
    x = rand(2, 6)
    (y,) = runner.run("Reshape", [x, np.array([3, -1], np.int32)], [(F32, (3, 4))])
    np.testing.assert_array_equal(y, x.reshape(3, 4))


def test_argmax_v2_as_the_resnet_sample_calls_it(runner):
    """Output desc [1] for a reduced scalar, int32, dimension a const with a (0, 0) buffer."""
    x = rand(1000, dtype=np.float16)
    (y,) = runner.run("ArgMaxV2", [x, Const(np.array([0], np.int32))], [(np.int32, (1,))])
    assert y[0] == int(np.argmax(x))
    (z,) = runner.run("ArgMaxD", [rand(3, 5)], [(np.int64, (3,))], {"dimension": ("int", 1)})
    assert z.dtype == np.int64 and z.shape == (3,)


@pytest.mark.parametrize("op_type", ["SoftmaxV2", "Softmax"])
def test_softmax(runner, op_type):
    x = rand(3, 4)
    (y,) = runner.run(op_type, [x], [(F32, (3, 4))], {"axes": ("list_int", [0])})
    e = np.exp(x - x.max(axis=0))
    np.testing.assert_allclose(y, e / e.sum(axis=0), rtol=1e-5)


def test_concat_forms(runner):
    a, b, c = rand(2, 3), rand(2, 1), rand(2, 2)
    want = np.concatenate([a, b, c], axis=1)
    attrs = {"concat_dim": ("int", 1), "N": ("int", 3)}
    np.testing.assert_array_equal(runner.run("ConcatD", [a, b, c], [(F32, (2, 6))], attrs)[0], want)
    dim = Const(np.array([1], np.int32))
    np.testing.assert_array_equal(runner.run("ConcatV2", [a, b, c, dim], [(F32, (2, 6))])[0], want)
    np.testing.assert_array_equal(runner.run("Concat", [dim, a, b, c], [(F32, (2, 6))])[0], want)
    assert runner.ret("ConcatD", [a, b], [(F32, (2, 4))], attrs) == AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH


def test_reductions(runner):
    x = rand(2, 3, 4)
    axes = np.array([0, 2], np.int32)
    (y,) = runner.run("ReduceSum", [x, axes], [(F32, (3,))])
    np.testing.assert_allclose(y, x.sum(axis=(0, 2)), rtol=1e-5)
    (k,) = runner.run("ReduceSum", [x, Const(axes)], [(F32, (1, 3, 1))], {"keep_dims": ("bool", True)})
    np.testing.assert_allclose(k, x.sum(axis=(0, 2), keepdims=True), rtol=1e-5)
    (d,) = runner.run("ReduceSumD", [x], [(F32, (2, 4))], {"axes": ("list_int", [1])})
    np.testing.assert_allclose(d, x.sum(axis=1), rtol=1e-5)
    (m,) = runner.run("ReduceMeanD", [x], [(F32, (2, 3))], {"axes": ("list_int", [-1])})
    np.testing.assert_allclose(m, x.mean(axis=-1), rtol=1e-5)
    (mx,) = runner.run("ReduceMax", [x, np.array([1], np.int64)], [(F32, (2, 4))])
    np.testing.assert_array_equal(mx, x.max(axis=1))


def _conv_nchw(x, w, stride, pads):
    """Direct convolution: x NCHW, w OIHW, pads (top, bottom, left, right)."""
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y.astype(np.float32)


def test_conv2d_nchw_and_nhwc_with_hwcn_filter(runner):
    x, w, bias = rand(1, 3, 6, 6), rand(4, 3, 3, 3), rand(4)
    want = _conv_nchw(x, w, 2, (1, 1, 1, 1)) + bias.reshape(1, 4, 1, 1)
    nchw = {
        "strides": ("list_int", [1, 1, 2, 2]),
        "pads": ("list_int", [1, 1, 1, 1]),
        "data_format": ("string", "NCHW"),
    }
    (y,) = runner.run("Conv2D", [x, w, bias], [(F32, (1, 4, 3, 3))], nchw)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    # NHWC (CANN's default) with an HWCN filter: the filter desc's format says its layout.
    x_nhwc, w_hwcn = x.transpose(0, 2, 3, 1).copy(), w.transpose(2, 3, 1, 0).copy()
    in_descs, in_bufs, out_descs, out_bufs, out_ptrs = runner.prepare([x_nhwc, w_hwcn], [(F32, (1, 3, 3, 4))])
    acl.destroy_tensor_desc(in_descs[1])
    in_descs[1] = desc_for(w_hwcn, fmt=16)  # ACL_FORMAT_HWCN
    attr = make_attr({"strides": ("list_int", [1, 2, 2, 1]), "pads": ("list_int", [1, 1, 1, 1])})
    assert acl.op.execute_v2("Conv2D", in_descs, in_bufs, out_descs, out_bufs, attr, runner.stream) == 0
    assert acl.rt.synchronize_stream(runner.stream) == 0
    ptr, dtype, shape = out_ptrs[0]
    want_nhwc = _conv_nchw(x, w, 2, (1, 1, 1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(from_device(ptr, dtype, shape), want_nhwc, rtol=1e-4, atol=1e-5)


def test_conv2d_requires_strides_and_pads(runner):
    ret = runner.ret("Conv2D", [rand(1, 4, 4, 3), rand(3, 3, 3, 2)], [(F32, (1, 2, 2, 2))])
    assert ret == AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH


def test_registry_is_explicit_and_each_record_names_its_type():
    assert {"Add", "Sub", "Mul", "RealDiv", "Cast", "MatMul", "BatchMatMul", "GEMM", "Slice", "StridedSlice"} <= set(
        table.REGISTRY
    )
    assert {"Transpose", "Reshape", "ArgMaxV2", "SoftmaxV2", "Relu", "ConcatD", "ReduceSum", "Conv2D"} <= set(
        table.REGISTRY
    )
    for op_type, record in table.REGISTRY.items():
        assert record.type == op_type and (record.unsupported or record.outputs)


def test_docs_op_table_names_every_type():
    from pathlib import Path

    section = (Path(__file__).resolve().parents[2] / "docs" / "acl-op.md").read_text(encoding="utf-8")
    missing = [op_type for op_type in table.REGISTRY if f"`{op_type}`" not in section]
    assert not missing, f"docs/acl-op.md's op table lacks {missing}"
    assert f"The op table ({len(table.REGISTRY)} types;" in section
