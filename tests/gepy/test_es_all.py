"""``ge.es.all``: functions generated from the op table by GE's rules, each checked against numpy."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from ge.error import GeError
from ge.es import all as es_all
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

from openacl import dtypes
from openacl.graph_engine import _ops


@pytest.mark.parametrize(
    ("op", "signature"),
    [
        ("Relu", "(x)"),
        ("Add", "(x1, x2)"),
        ("MatMul", "(x1, x2, bias=None, *, transpose_x1=False, transpose_x2=False)"),
        ("Split", "(split_dim, x, y_num, *, num_split)"),
        ("If", "(cond, input, output_num, then_branch, else_branch)"),
        ("ConcatV2", "(x, concat_dim, *, N=1)"),
        ("Cast", "(x, *, dst_type)"),
        ("Reshape", "(x, shape, *, axis=0, num_axes=-1)"),
        ("TopKV2", "(x, k, *, sorted=True, dim=-1, largest=True, indices_dtype=3)"),
        ("Unsqueeze", "(x, *, axes=[])"),
        ("Summary", "(x, *, name=None)"),
        ("Save", "(tensors)"),
        (
            "BatchNorm",
            "(x, scale, offset, mean=None, variance=None, *, epsilon=0.0001, data_format='NHWC', is_training=True, "
            "exponential_avg_factor=1.0)",
        ),
        (
            "Conv2D",
            "(x, filter, bias=None, offset_w=None, *, strides, pads, dilations=[1, 1, 1, 1], groups=1, "
            "data_format='NHWC', offset_x=0)",
        ),
    ],
)
def test_signatures_follow_ges_generator_rules(op, signature):
    assert str(inspect.signature(getattr(es_all, op))) == signature


def test_output_classes_and_list_returns():
    b = GraphBuilder("outs")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[4])
    top = es_all.TopKV2(x, 2)
    assert type(top).__name__ == "TopKV2Output" and type(top) is es_all.TopKV2Output
    assert top.values.name == top.indices.name
    parts = es_all.Split(0, x, 2, num_split=2)
    assert isinstance(parts, list) and len(parts) == 2
    bn = es_all.BatchNorm(b.create_input(1, shape=[1, 2, 1, 1]), x, x, x, x, is_training=False)
    assert [n for n in type(bn).__slots__] == [
        "y",
        "batch_mean",
        "batch_variance",
        "reserve_space_1",
        "reserve_space_2",
        "reserve_space_3",
    ]


def test_argument_errors():
    b = GraphBuilder("errs")
    x = b.create_input(0)
    with pytest.raises(TypeError):
        es_all.Relu(1.0)  # a single-input op takes a TensorHolder only
    with pytest.raises(TypeError, match="transpose_x1"):
        es_all.MatMul(x, x, transpose_x1=1)
    with pytest.raises(TypeError):
        es_all.Cast(x)  # required attribute
    with pytest.raises(TypeError, match="must be a list"):
        es_all.ConcatV2(x, 0)
    with pytest.raises(TypeError):
        es_all.Split(0, x, "2", num_split=2)


@pytest.mark.parametrize(
    "op", ["HcomAllReduce", "HcomAllGather", "PromptFlashAttention", "MoeGatingTopKSoftmax", "TransData"]
)
def test_ops_a_cpu_cannot_run_exist_and_say_why(op):
    with pytest.raises(GeError, match=f"{op} failed; {op} cannot run in openacl: it ") as info:
        getattr(es_all, op)(None, reduction="sum")
    assert info.value.api_name == op


def test_star_import_and_table_size():
    namespace: dict = {}
    exec("from ge.es.all import *", namespace)
    expected = {t for t, r in _ops.REGISTRY.items() if not r.builder_only}
    assert expected <= set(namespace) and "TopKV2Output" in namespace
    assert len(_ops.runnable()) >= 100


# ----- every runnable op against numpy -----

RNG = np.random.default_rng(7)
F = RNG.standard_normal((2, 3)).astype(np.float32)
G = RNG.standard_normal((2, 3)).astype(np.float32)
P = (np.abs(F) + 0.5).astype(np.float32)
INTS = np.array([[3, -1, 2], [0, 5, -4]], np.int64)
IMG = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KER = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)


class Const:
    """An argument the op needs as a constant (axes, perm, ...): built with the builder, not fed."""

    def __init__(self, value):
        self.value = np.asarray(value)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def conv_nchw(x, w, stride=1, pad=0):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out


CASES = {
    "Relu": ([F], {}, lambda x: np.maximum(x, 0)),
    "Sigmoid": ([F], {}, sigmoid),
    "Tanh": ([F], {}, np.tanh),
    "Exp": ([F], {}, np.exp),
    "Log": ([P], {}, np.log),
    "Sqrt": ([P], {}, np.sqrt),
    "Rsqrt": ([P], {}, lambda x: 1 / np.sqrt(x)),
    "Square": ([F], {}, np.square),
    "Abs": ([F], {}, np.abs),
    "Neg": ([F], {}, np.negative),
    "Relu6": ([F * 5], {}, lambda x: np.clip(x, 0, 6)),
    "LeakyRelu": ([F], {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    "ZerosLike": ([INTS], {}, np.zeros_like),
    "OnesLike": ([F], {}, np.ones_like),
    "Identity": ([INTS], {}, lambda x: x),
    "Add": ([F, INTS], {}, lambda a, b: a + b.astype(np.float32)),
    "Sub": ([INTS, F], {}, lambda a, b: a.astype(np.float32) - b),
    "Mul": ([F, G], {}, np.multiply),
    "RealDiv": ([F, P], {}, np.divide),
    "Div": ([F, P], {}, np.divide),
    "Maximum": ([F, G], {}, np.maximum),
    "Minimum": ([F, G], {}, np.minimum),
    "Pow": ([P, G], {}, np.power),
    "SquaredDifference": ([F, G], {}, lambda a, b: (a - b) ** 2),
    "Greater": ([F, G], {}, np.greater),
    "Less": ([F, G], {}, np.less),
    "Equal": ([INTS, INTS], {}, np.equal),
    "NotEqual": ([INTS, np.abs(INTS)], {}, np.not_equal),
    "GreaterEqual": ([F, G], {}, np.greater_equal),
    "Select": ([F > 0, F, G], {}, np.where),
    "MaskedFill": ([F, F > 0, np.float32(9)], {}, lambda x, m, v: np.where(m, v, x)),
    "MatMul": ([F, G], {"transpose_x2": True}, lambda a, b: a @ b.T),
    "BatchMatMul": ([np.stack([F, G]), np.stack([G, F])], {"adj_x2": True}, lambda a, b: a @ np.swapaxes(b, 1, 2)),
    "Cast": ([F], {"dst_type": DataType.DT_INT32}, lambda x: x.astype(np.int32)),
    "Reshape": ([F, np.array([3, -1], np.int64)], {}, lambda x, s: x.reshape(3, -1)),
    "Transpose": ([F, Const(np.array([1, 0], np.int64))], {}, lambda x, p: x.T),
    "Unsqueeze": ([F], {"axes": [0]}, lambda x: x[None]),
    "Squeeze": ([F[None]], {"axis": [0]}, lambda x: x[0]),
    "ExpandDims": ([F, np.array(1, np.int32)], {}, lambda x, a: x[:, None]),
    "Shape": ([F], {}, lambda x: np.array(x.shape, np.int32)),
    "BroadcastTo": ([F[:1], np.array([4, 3], np.int64)], {}, lambda x, s: np.broadcast_to(x, (4, 3))),
    "Fill": ([np.array([2, 2], np.int32), np.float32(1.5)], {}, lambda d, v: np.full((2, 2), 1.5, np.float32)),
    "Tile": ([F, np.array([2, 1], np.int64)], {}, lambda x, m: np.tile(x, (2, 1))),
    "Pad": ([F, np.array([[1, 0], [0, 2]], np.int32)], {}, lambda x, p: np.pad(x, ((1, 0), (0, 2)))),
    "Slice": ([F, np.array([0, 1], np.int64), np.array([-1, 2], np.int64)], {}, lambda x, o, s: x[0:, 1:3]),
    "StridedSlice": (
        [F, Const([0, 2]), Const([2, 0]), Const([1, -1])],
        {"shrink_axis_mask": 0, "end_mask": 2},
        lambda x, b, e, s: x[0:2, 2::-1],
    ),
    "GatherElements": (
        [F, np.array([[0, 2, 1], [1, 1, 0]], np.int64)],
        {"dim": 1},
        lambda x, i: np.take_along_axis(x, i, 1),
    ),
    "GatherV2": ([F, np.array([2, 0], np.int32), Const(np.array(1, np.int32))], {}, lambda x, i, a: x[:, [2, 0]]),
    "ScatterElements": (
        [np.zeros((2, 3), np.float32), np.array([[2], [0]], np.int64), np.array([[5.0], [7.0]], np.float32)],
        {"axis": 1},
        lambda d, i, u: np.array([[0, 0, 5], [7, 0, 0]], np.float32),
    ),
    "ReduceSum": ([F, np.array([1], np.int64)], {"keep_dims": True}, lambda x, a: x.sum(1, keepdims=True)),
    "ReduceMean": ([F, Const(np.array([0, 1], np.int64))], {}, lambda x, a: x.mean()),
    "Mean": ([F, Const(np.array([0], np.int64))], {}, lambda x, a: x.mean(0)),
    "Sum": ([F, np.array([1], np.int64)], {}, lambda x, a: x.sum(1)),
    "ReduceMax": ([F, Const(np.array([1], np.int64))], {}, lambda x, a: x.max(1)),
    "SoftmaxV2": ([F], {}, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    "Softmax": ([F], {"axes": [0]}, lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    "BiasAdd": (
        [IMG, np.array([1.0, -2.0], np.float32)],
        {"data_format": "NCHW"},
        lambda x, b: x + b.reshape(1, 2, 1, 1),
    ),
    "Conv2D": (
        [IMG, KER],
        {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "data_format": "NCHW"},
        lambda x, w: conv_nchw(x, w, 2, 1),
    ),
    "ConcatV2": ([[F, G], Const(np.array(0, np.int32))], {"N": 2}, lambda xs, d: np.concatenate(xs, 0)),
    "Pack": ([[F, G]], {"axis": 1, "N": 2}, lambda xs: np.stack(xs, 1)),
    "AddN": ([[F, G, F]], {"N": 3}, lambda xs: xs[0] + xs[1] + xs[2]),
    "ArgMaxV2": ([F, Const(np.array(1, np.int32))], {}, lambda x, d: np.argmax(x, 1)),
    "Range": ([np.int32(1), np.int32(10), np.int32(3)], {}, lambda *a: np.arange(1, 10, 3, dtype=np.int32)),
    "LogicalNot": ([F > 0], {}, np.logical_not),
    "LogicalAnd": ([F > 0, G > 0], {}, np.logical_and),
    "ApplyGradientDescent": ([F, np.float32(0.5), G], {}, lambda v, a, d: v - 0.5 * d),
}


def _holder(builder, index, value):
    dtype = DataType(dtypes.ge_from_numpy(np.asarray(value).dtype))
    return builder.create_input(index, data_type=dtype, shape=list(np.shape(value)))


def _run_graph(op: str, args: list, attrs: dict):
    """``op`` over ``args`` (arrays are graph inputs, Const a constant, a list a dynamic input) in a session."""
    b = GraphBuilder(op)
    feeds, holders = [], []
    for arg in args:
        if isinstance(arg, Const):
            holders.append(
                b.create_const_int64(arg.value.astype(np.int64).reshape(-1).tolist(), shape=list(arg.value.shape))
            )
        elif isinstance(arg, list):
            holders.append([_holder(b, len(feeds) + i, a) for i, a in enumerate(arg)])
            feeds += arg
        else:
            holders.append(_holder(b, len(feeds), arg))
            feeds.append(arg)
    result = getattr(es_all, op)(*holders, **attrs)
    b.set_graph_output(result, 0)
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    session = Session()
    assert session.add_graph(1, b.build_and_reset()) == 0
    inputs = [
        Tensor(
            np.asarray(f).flatten().tolist(),
            None,
            DataType(dtypes.ge_from_numpy(np.asarray(f).dtype)),
            Format.FORMAT_ND,
            list(np.shape(f)),
        )
        for f in feeds
    ]
    [out] = session.run_graph(1, inputs)
    return np.asarray(out)


@pytest.mark.parametrize("op", sorted(CASES))
def test_op_against_numpy(op):
    args, attrs, reference = CASES[op]
    got = _run_graph(op, args, attrs)
    expected = np.asarray(reference(*[a.value if isinstance(a, Const) else a for a in args]))
    assert got.shape == expected.shape
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, expected)


def test_regression_a_conv2d_with_two_strides_says_why_not_index_error():
    """GE's Conv2D lowering indexed strides by data_format position: two strides ended the build with Python's
    "IndexError: list index out of range". The lowering it now shares with acl.op checks the four values first."""
    with pytest.raises(GeError, match="strides and dilations need 4 values") as info:
        _run_graph("Conv2D", [IMG, KER], {"strides": [1, 1], "pads": [0, 0, 0, 0], "data_format": "NCHW"})
    assert "IndexError" not in str(info.value)


def test_regression_strided_slice_shrink_takes_begin_even_under_begin_mask():
    """A shrunk axis takes the element at ``begin`` and ignores ``begin_mask`` (TensorFlow's rule, which acl.op
    kept); GE's own lowering applied the mask first and took element 0."""
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    attrs = {"shrink_axis_mask": 1, "begin_mask": 1}
    got = _run_graph("StridedSlice", [x, Const([2, 0]), Const([3, 2]), Const([1, 1])], attrs)
    np.testing.assert_array_equal(got, x[2, 0:2])


def test_cases_cover_the_issue_list():
    wanted = [
        "Relu",
        "Add",
        "MatMul",
        "ConcatV2",
        "Split",
        "BatchNorm",
        "Sigmoid",
        "If",
        "Reshape",
        "Cast",
        "Transpose",
        "Unsqueeze",
        "TopKV2",
        "ReduceSum",
        "ZerosLike",
        "ScatterElements",
        "Fill",
        "Shape",
        "Identity",
        "BroadcastTo",
        "MaskedFill",
        "LogicalNot",
        "GatherElements",
        "RealDiv",
        "Sub",
        "Mul",
        "Div",
        "Conv2D",
        "BiasAdd",
        "Softmax",
        "Mean",
        "Sum",
        "Square",
        "Sqrt",
        "Exp",
        "Log",
        "Pow",
        "Maximum",
        "Minimum",
        "Greater",
        "Less",
        "Equal",
        "Select",
        "GatherV2",
        "Slice",
        "StridedSlice",
        "Tile",
        "Pad",
        "ApplyGradientDescent",
        "Assign",
    ]
    missing = [op for op in wanted if op not in _ops.REGISTRY or _ops.REGISTRY[op].unsupported]
    assert missing == []


def test_docs_state_the_table():
    section = (Path(__file__).resolve().parents[2] / "docs" / "gepy.md").read_text()
    assert f"The GE op table ({len(_ops.REGISTRY)} types; {len(_ops.runnable())} run on a CPU)" in section
    missing = [op for op in _ops.runnable() if f"`{op}`" not in section]
    assert missing == []
