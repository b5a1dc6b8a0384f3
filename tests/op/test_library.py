"""Every operator type ``acl.op`` runs, from the one operator library GE reads too, through ``execute_v2``
against a numpy reference: the types that came from GE run as single operators, and each example is small and
valid so that a failing type names a lowering that broke."""

from __future__ import annotations

import math

import numpy as np
import pytest

from openacl.errors import AclCode
from openacl.op import table
from openacl.ops.registry import REGISTRY
from tests.op.conftest import Const

rng = np.random.default_rng(22)
F32 = np.float32
F = rng.standard_normal((2, 3)).astype(F32)
G = rng.standard_normal((2, 3)).astype(F32)
P = (np.abs(rng.standard_normal((2, 3))) + 0.5).astype(F32)
INTS = np.array([[1, -2, 3], [-4, 5, 6]], np.int32)
MASK = F > 0
X4 = rng.standard_normal((2, 4)).astype(F32)
IMG = rng.standard_normal((1, 2, 5, 5)).astype(F32)
KER = rng.standard_normal((3, 2, 3, 3)).astype(F32)
_erf = np.vectorize(math.erf, otypes=[F32])


def i32(*values):
    return Const(np.array(values if len(values) != 1 else values[0], np.int32))


def i64(*values):
    return Const(np.array(values, np.int64))


def conv_nchw(x, w, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    y = np.zeros((n, o, oh, ow), F32)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _unary(fn):
    return [F], {}, fn


def _positive(fn):
    return [P], {}, fn


def _binary(fn):
    return [F, G], {}, fn


_MEAN, _VAR = np.array([0.5, -0.5], F32), np.array([1.0, 2.0], F32)
_BN = (IMG - _MEAN.reshape(1, 2, 1, 1)) / np.sqrt(_VAR.reshape(1, 2, 1, 1) + 1e-4)

#: type -> (inputs, attributes as (setter kind, value), reference of the plain input values -> output(s)).
EXAMPLES: dict[str, tuple[list, dict, object]] = {
    "Relu": _unary(lambda x: np.maximum(x, 0)),
    "Sigmoid": _unary(lambda x: 1 / (1 + np.exp(-x))),
    "Tanh": _unary(np.tanh),
    "Exp": _unary(np.exp),
    "Log": _positive(np.log),
    "Sqrt": _positive(np.sqrt),
    "Abs": _unary(np.abs),
    "Neg": _unary(np.negative),
    "Reciprocal": _positive(np.reciprocal),
    "Floor": _unary(np.floor),
    "Ceil": _unary(np.ceil),
    "Round": _unary(np.round),
    "Sign": _unary(np.sign),
    "Erf": _unary(_erf),
    "Sin": _unary(np.sin),
    "Cos": _unary(np.cos),
    "Softplus": _unary(lambda x: np.log1p(np.exp(x))),
    "Identity": ([INTS], {}, lambda x: x),
    "Square": _unary(np.square),
    "Rsqrt": _positive(lambda x: 1 / np.sqrt(x)),
    "Relu6": ([F * 5], {}, lambda x: np.clip(x, 0, 6)),
    "Gelu": _unary(lambda x: x * 0.5 * (1 + _erf(x / np.sqrt(2)))),
    "LeakyRelu": ([F], {"negative_slope": ("float", 0.25)}, lambda x: np.where(x > 0, x, 0.25 * x)),
    "Elu": ([F], {"alpha": ("float", 0.5)}, lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "ZerosLike": ([INTS], {}, np.zeros_like),
    "OnesLike": _unary(np.ones_like),
    "LogicalNot": ([MASK], {}, np.logical_not),
    "Add": _binary(np.add),
    "AddV2": ([INTS, INTS], {}, np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Maximum": _binary(np.maximum),
    "Minimum": _binary(np.minimum),
    "Pow": ([P, G], {}, np.power),
    "Greater": _binary(np.greater),
    "GreaterEqual": _binary(np.greater_equal),
    "Less": _binary(np.less),
    "LessEqual": _binary(np.less_equal),
    "Equal": ([INTS, np.abs(INTS)], {}, np.equal),
    "NotEqual": ([INTS, np.abs(INTS)], {}, np.not_equal),
    "Div": ([F, P], {}, np.divide),
    "RealDiv": ([F, P], {}, np.divide),
    "SquaredDifference": _binary(lambda a, b: (a - b) ** 2),
    "LogicalAnd": ([MASK, G > 0], {}, np.logical_and),
    "LogicalOr": ([MASK, G > 0], {}, np.logical_or),
    "AddN": ([F, G, P], {}, lambda a, b, c: a + b + c),
    "Select": ([MASK, F, G], {}, np.where),
    "MaskedFill": ([F, MASK, np.array(9, F32)], {}, lambda x, m, v: np.where(m, v, x)),
    "Cast": ([F * 3], {}, lambda x: x.astype(np.int32)),
    "MatMul": ([F, G], {"transpose_x2": ("bool", True)}, lambda a, b: a @ b.T),
    "MatMulV2": ([F.T.copy(), G.T.copy()], {"transpose_x1": ("bool", True)}, lambda a, b: a.T @ b),
    "BatchMatMul": (
        [np.stack([F, G]), np.stack([G, F])],
        {"adj_x2": ("bool", True)},
        lambda a, b: a @ b.swapaxes(1, 2),
    ),
    "BatchMatMulV2": ([np.stack([F, G]), np.stack([G.T, F.T])], {}, lambda a, b: a @ b),
    "GEMM": (
        [F, G, P.T @ P, np.array([0.5], F32), np.array([2.0], F32)],
        {"transpose_a": ("bool", True)},
        lambda a, b, c, alpha, beta: alpha * (a.T @ b) + beta * c,
    ),
    "Reshape": ([F, i64(3, -1)], {}, lambda x, s: x.reshape(3, -1)),
    "Transpose": ([F, i64(1, 0)], {}, lambda x, p: x.T),
    "TransposeD": ([F], {"perm": ("list_int", [1, 0])}, lambda x: x.T),
    "Unsqueeze": ([F], {"axes": ("list_int", [0])}, lambda x: x[None]),
    "Squeeze": ([F[None]], {"axis": ("list_int", [0])}, lambda x: x[0]),
    "ExpandDims": ([F, i32(1)], {}, lambda x, a: x[:, None]),
    "ConcatV2": ([F, G, i32(0)], {}, lambda a, b, d: np.concatenate([a, b], 0)),
    "Concat": ([i32(1), F, G], {}, lambda d, a, b: np.concatenate([a, b], 1)),
    "ConcatD": ([F, G, P], {"concat_dim": ("int", 1)}, lambda *xs: np.concatenate(xs, 1)),
    "ConcatV2D": ([F, G], {"concat_dim": ("int", 0)}, lambda *xs: np.concatenate(xs, 0)),
    "Pack": ([F, G], {"axis": ("int", 1)}, lambda a, b: np.stack([a, b], 1)),
    "Split": ([i32(1), X4], {"num_split": ("int", 2)}, lambda d, x: tuple(np.split(x, 2, 1))),
    "SplitV": ([X4, i64(1, 3), i32(1)], {"num_split": ("int", 2)}, lambda x, s, d: (x[:, :1], x[:, 1:])),
    "Shape": ([F], {}, lambda x: np.array(x.shape, np.int32)),
    "BroadcastTo": ([F[:1], i64(4, 3)], {}, lambda x, s: np.broadcast_to(x, (4, 3))),
    "Fill": ([i32(2, 2), np.array(1.5, F32)], {}, lambda d, v: np.full((2, 2), 1.5, F32)),
    "Tile": ([F, i64(2, 1)], {}, lambda x, m: np.tile(x, (2, 1))),
    "Pad": ([F, Const(np.array([[1, 0], [0, 2]], np.int32))], {}, lambda x, p: np.pad(x, ((1, 0), (0, 2)))),
    "Slice": ([F, i64(0, 1), i64(-1, 2)], {}, lambda x, o, s: x[0:, 1:3]),
    "SliceD": ([F], {"offsets": ("list_int", [1, 0]), "size": ("list_int", [1, 2])}, lambda x: x[1:2, 0:2]),
    "StridedSlice": (
        [F, i32(0, 2), i32(2, 0), i32(1, -1)],
        {"end_mask": ("int", 2)},
        lambda x, b, e, s: x[0:2, 2::-1],
    ),
    "StridedSliceD": (
        [F],
        {"begin": ("list_int", [0, 1]), "end": ("list_int", [2, 3]), "strides": ("list_int", [1, 2])},
        lambda x: x[0:2, 1:3:2],
    ),
    "Range": ([i32(1), i32(10), i32(3)], {}, lambda *a: np.arange(1, 10, 3, dtype=np.int32)),
    "GatherElements": (
        [F, np.array([[0, 2, 1], [1, 1, 0]], np.int64)],
        {"dim": ("int", 1)},
        lambda x, i: np.take_along_axis(x, i, 1),
    ),
    "GatherV2": ([F, np.array([2, 0], np.int32), i32(1)], {}, lambda x, i, a: x[:, [2, 0]]),
    "Gather": ([F, np.array([1, 1, 0], np.int32)], {}, lambda x, i: x[[1, 1, 0]]),
    "ScatterElements": (
        [np.zeros((2, 3), F32), np.array([[2], [0]], np.int64), np.array([[5.0], [7.0]], F32)],
        {"axis": ("int", 1)},
        lambda d, i, u: np.array([[0, 0, 5], [7, 0, 0]], F32),
    ),
    "TopKV2": ([F, i32(2)], {}, lambda x, k: (-np.sort(-x, 1)[:, :2], np.argsort(-x, 1)[:, :2].astype(np.int32))),
    "TopK": ([F, i32(2)], {}, lambda x, k: (-np.sort(-x, 1)[:, :2], np.argsort(-x, 1)[:, :2].astype(np.int32))),
    "ReduceSum": ([F, i64(1)], {"keep_dims": ("bool", True)}, lambda x, a: x.sum(1, keepdims=True)),
    "ReduceSumD": ([F], {"axes": ("list_int", [0])}, lambda x: x.sum(0)),
    "Sum": ([F, np.array([1], np.int64)], {}, lambda x, a: x.sum(1)),
    "ReduceMean": ([F, i64(0, 1)], {}, lambda x, a: x.mean()),
    "ReduceMeanD": ([F], {"axes": ("list_int", [1])}, lambda x: x.mean(1)),
    "Mean": ([F, np.array([0], np.int64)], {}, lambda x, a: x.mean(0)),
    "ReduceMax": ([F, np.array([1], np.int64)], {}, lambda x, a: x.max(1)),
    "ReduceMaxD": ([F], {"axes": ("list_int", [0])}, lambda x: x.max(0)),
    "ReduceMin": ([F, i64(1)], {}, lambda x, a: x.min(1)),
    "ReduceProd": ([F, i64(0)], {}, lambda x, a: x.prod(0)),
    "ArgMaxV2": ([F, i32(1)], {}, lambda x, d: np.argmax(x, 1).astype(np.int32)),
    "ArgMaxD": ([F], {"dimension": ("int", 0)}, lambda x: np.argmax(x, 0)),
    "SoftmaxV2": _unary(lambda x: _softmax(x, -1)),
    "Softmax": ([F], {"axes": ("list_int", [0])}, lambda x: _softmax(x, 0)),
    "LogSoftmaxV2": _unary(lambda x: np.log(_softmax(x, -1))),
    "BiasAdd": (
        [IMG, np.array([1.0, -2.0], F32)],
        {"data_format": ("string", "NCHW")},
        lambda x, b: x + b.reshape(1, 2, 1, 1),
    ),
    "BatchNorm": (
        [IMG, np.ones(2, F32), np.zeros(2, F32), _MEAN, _VAR],
        {"data_format": ("string", "NCHW"), "is_training": ("bool", False)},
        lambda *a: (_BN, _MEAN, _VAR, _MEAN, _VAR, _VAR),
    ),
    "Conv2D": (
        [IMG, KER],
        {
            "strides": ("list_int", [1, 1, 2, 2]),
            "pads": ("list_int", [1, 1, 1, 1]),
            "data_format": ("string", "NCHW"),
        },
        lambda x, w: conv_nchw(x, w, 2, 1),
    ),
    "ApplyGradientDescent": ([F, np.array(0.5, F32), G], {}, lambda v, a, d: v - 0.5 * d),
}


def _plain(item):
    return item.value if isinstance(item, Const) else item


@pytest.mark.parametrize("op_type", table.op_types())
def test_every_library_type_runs_as_a_single_operator(runner, op_type):
    inputs, attrs, reference = EXAMPLES[op_type]
    expected = reference(*[_plain(item) for item in inputs])
    expected = [np.asarray(e) for e in (expected if isinstance(expected, tuple) else (expected,))]
    got = runner.run(op_type, inputs, [(e.dtype, e.shape) for e in expected], attrs)
    for g, e in zip(got, expected, strict=True):
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, e)


def test_acl_op_runs_every_runnable_type_of_the_library():
    """The issue's promise: acl.op runs what GE runs (a graph-only type takes subgraphs)."""
    graph_only = {t for t, r in REGISTRY.items() if r.subgraphs}
    runnable = {t for t, r in REGISTRY.items() if r.unsupported is None}
    assert set(table.op_types()) == runnable - graph_only
    assert len(table.op_types()) > 100
    assert set(EXAMPLES) == set(table.op_types()), "each type acl.op runs has an example here"


@pytest.mark.parametrize("op_type", ["HcomAllReduce", "TransData", "If"])
def test_a_type_acl_op_cannot_run_is_type_not_match_with_the_reason(runner, acl_log, op_type):
    assert runner.ret(op_type, [F], [(F32, (2, 3))]) == AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH
    assert f"{op_type} cannot run in openacl" in acl_log.text


def test_a_count_attribute_is_filled_in_and_checked_against_the_dynamic_input(runner, acl_log):
    """GE's prototypes give ConcatD's N a default of 1 (GE-PY programs leave it); acl.op counts the descs."""
    (y,) = runner.run("ConcatD", [F, G, P], [(F32, (2, 9))], {"concat_dim": ("int", 1)})
    np.testing.assert_array_equal(y, np.concatenate([F, G, P], 1))
    attrs = {"concat_dim": ("int", 1), "N": ("int", 2)}
    assert runner.ret("ConcatD", [F, G, P], [(F32, (2, 9))], attrs) == AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert "N is 2 but 3 tensors were given" in acl_log.text


@pytest.mark.parametrize(("ab", "c"), [(np.float16, np.float32), (np.int8, np.int32), (np.int8, np.float32)])
def test_regression_gemm_of_cann_mixed_dtypes_did_not_compile(runner, ab, c):
    """GEMM multiplied a and b in their own dtype, so fp16 x fp16 -> fp32 and int8 x int8 -> int32, which CANN's
    GEMM takes, failed ONNX's type check (OP_INPUT_NOT_MATCH): they now multiply in c's dtype."""
    a, b = (INTS[:, :2].astype(ab), INTS.astype(ab))
    cc = np.ones((2, 3), c)
    alpha, beta = np.array([2], c), np.array([3], c)
    (y,) = runner.run("GEMM", [a, b, cc, alpha, beta], [(c, (2, 3))])
    expected = 2 * (a.astype(np.int64) @ b.astype(np.int64)) + 3
    np.testing.assert_array_equal(y, expected.astype(c))
