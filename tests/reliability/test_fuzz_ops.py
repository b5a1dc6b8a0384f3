"""Fuzzing ``acl.op`` per operator type: random descs, attributes, const inputs and data, through the facade.

For each type in the op table, hypothesis draws the inputs (how many, absent, const or data; dtype, dims, values
that include 0, -1 and the int boundaries), the attributes (each declared one set with its kind or another, or
left out, plus undeclared ones) and the output descs (mostly what the operator produces, so that most calls get
past the checks and run, sometimes anything). ``execute_v2`` and the ``synchronize_stream`` after it may only
answer documented codes: never ``ACL_ERROR_INTERNAL_ERROR`` (500000) or ``ACL_ERROR_RT_INTERNAL_ERROR`` (507000),
which are openacl's own bugs, and nothing may log a traceback (``BugWatch``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acl
from openacl.dtypes import acl_from_numpy
from openacl.errors import AclCode, AclError
from openacl.op import attr as A
from openacl.op import table
from openacl.op.attr import OpAttr
from openacl.op.compiled import infer
from openacl.op.tensor_desc import TensorDesc
from tests.reliability.fuzz_calls import BOUNDARY_INTS, BugWatch, call, ok, quiet_numpy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

OUR_BUGS = {int(AclCode.ACL_ERROR_INTERNAL_ERROR), int(AclCode.ACL_ERROR_RT_INTERNAL_ERROR)}
EXAMPLES = max(1, round(20 * float(os.environ.get("OPENACL_FUZZ_SCALE", "1"))))
ND = 2
H2D = 1
MAX_BUFFER = 1 << 16  # a desc that needs more gets a buffer this big (the call must refuse it, not overrun it)
DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_]
INT_DTYPES = [np.int32, np.int64]
# Inputs a lowering reads as integers, most often from a const.
INTEGER_INPUTS = {"axes", "perm", "dimension", "concat_dim", "offsets", "size", "begin", "end", "strides", "shape"}
SMALL = [-3, -2, -1, 0, 1, 2, 3, 4]
STRINGS = ["NCHW", "NHWC", "", "ND", "x"]


def rarely(draw, one_in: int) -> bool:
    """True about once in ``one_in`` draws (hypothesis favours 0 and the bounds: neither is the rare side)."""
    return draw(st.integers(0, one_in - 1)) == one_in // 2


def _values(draw, dtype: np.dtype, count: int) -> np.ndarray:
    """``count`` values of ``dtype``: small ones, zeros, the dtype's edges, NaN and inf for floats."""
    if dtype == np.bool_:
        return np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)), np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = [v for v in (*SMALL, *BOUNDARY_INTS, info.min, info.max) if info.min <= v <= info.max]
        return np.array(draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count)), dtype)
    pool = [0.0, -0.0, 1.0, -1.5, 2.5, 1e4, math.nan, math.inf, -math.inf]
    return np.array(draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count)), dtype)


@dataclass(frozen=True)
class Plan:
    """What most inputs of one example share, so that many calls fit the operator and run."""

    dtype: np.dtype
    dims: tuple[int, ...]


@st.composite
def plans(draw) -> Plan:
    rank = draw(st.integers(0, 4))
    return Plan(np.dtype(draw(st.sampled_from(DTYPES))), tuple(draw(st.integers(1, 3)) for _ in range(rank)))


def _index_values(draw, name: str, plan: Plan) -> list[int]:
    """Plausible values of an integer input or attribute: a permutation, axes, offsets and sizes, a shape."""
    rank = len(plan.dims)
    if name == "perm":
        return list(draw(st.permutations(range(rank))))
    if name in ("axes", "dimension", "concat_dim"):
        return draw(st.lists(st.integers(-rank, max(rank - 1, 0)), min_size=1, max_size=max(rank, 1), unique=True))
    if name in ("offsets", "begin"):
        return [draw(st.integers(0, max(d - 1, 0))) for d in plan.dims]
    if name in ("size", "end"):
        return [draw(st.sampled_from([-1, d, 1])) for d in plan.dims]
    if name == "strides":
        return [draw(st.sampled_from([1, 1, 2, -1])) for _ in plan.dims]
    if name == "shape":
        return draw(st.sampled_from([[math.prod(plan.dims)], [-1], list(plan.dims), [0, -1][: max(rank, 1)]]))
    return draw(st.lists(st.sampled_from(SMALL), max_size=4))


@st.composite
def operand(draw, name: str, optional: bool, plan: Plan):
    """One input: None (absent), or (dtype, dims, values, is_const)."""
    if rarely(draw, 20) or (optional and draw(st.booleans())):
        return None
    base = name.rstrip("?*")
    if base in INTEGER_INPUTS and not rarely(draw, 10):
        dtype = np.dtype(draw(st.sampled_from(INT_DTYPES)))
        if not rarely(draw, 5):
            values = np.array(_index_values(draw, base, plan), dtype)
            if base in ("dimension", "concat_dim") and draw(st.booleans()):
                values = values[:1].reshape(())
            return dtype, list(values.shape), values, not rarely(draw, 10)
    else:
        dtype = plan.dtype if not rarely(draw, 7) else np.dtype(draw(st.sampled_from(DTYPES)))
    if not rarely(draw, 4):
        dims = list(plan.dims)
        if dims and rarely(draw, 5):
            dims[draw(st.integers(0, len(dims) - 1))] = 1  # broadcasts
    else:
        dims = [draw(st.sampled_from([0, 1, 2, 3, 4])) for _ in range(draw(st.integers(0, 4)))]
    if rarely(draw, 30):
        dims[0:1] = [draw(st.sampled_from([-1, -2, 2**31, 2**32]))]
    count = math.prod(dims) if all(d >= 0 for d in dims) else 0
    if count > 256:
        dims, count = [2, 3], 6
    const = rarely(draw, 10) and count > 0 and all(d >= 0 for d in dims)
    return dtype, dims, _values(draw, dtype, count), const


@st.composite
def attr_value(draw, kind: str, name: str, plan: Plan):
    """A value set through the setter of ``kind``: ``(setter kind, value)``."""
    if kind == A.BOOL:
        return kind, draw(st.booleans())
    if kind == A.INT:
        pool = [*SMALL, 2**31, -(2**31), 2**63 - 1, -(2**63)]
        if name in ("concat_dim", "dimension", "N", "groups", "dst_type") and not rarely(draw, 4):
            pool = [0, 1, 2, -1]
        elif (name.endswith("_mask") or name in ("axis", "offset_x", "num_axes")) and not rarely(draw, 4):
            pool = [-1] if name == "num_axes" else [0]
        return kind, draw(st.sampled_from(pool))
    if kind == A.FLOAT:
        return kind, draw(st.sampled_from([0.0, 1.0, -1.0, math.nan]))
    if kind == A.STRING:
        return kind, draw(st.sampled_from(STRINGS))
    if kind == A.LIST_INT:
        if name in ("strides", "dilations", "pads") and not rarely(draw, 4):
            return kind, [draw(st.sampled_from([1, 1, 2, 0])) for _ in range(4)]
        if not rarely(draw, 4):
            return kind, _index_values(draw, name, plan)
        return kind, draw(st.lists(st.sampled_from([*SMALL, 2**31, 2**63 - 1, -(2**63)]), max_size=5))
    return A.INT, 0


def _set_attr(attr: int, name: str, kind: str, value) -> None:
    setter = getattr(acl.op, f"set_attr_{kind}")
    call(setter, attr, name, value)


@st.composite
def attributes(draw, op, plan: Plan):
    """Each declared attribute: left out, set with its kind, or set with another; sometimes an undeclared one."""
    chosen = []
    for spec in op.attrs:
        if rarely(draw, 15):
            continue
        own = A.SETTER_KINDS[spec.kind]
        kind = own if not rarely(draw, 30) else draw(st.sampled_from([A.BOOL, A.INT, A.FLOAT, A.STRING, A.LIST_INT]))
        chosen.append((spec.name, *draw(attr_value(kind, spec.name, plan))))
    if rarely(draw, 10):
        chosen.append(("unknown_attr", *draw(attr_value(A.INT, "", plan))))
    return chosen


def _input_names(op, draw) -> list[str]:
    names: list[str] = []
    for spec in op.inputs:
        name = spec.name + {"optional": "?", "dynamic": "*"}.get(spec.kind, "")
        names += [name] * (draw(st.integers(1, 3)) if name.endswith("*") else 1)
    if names and rarely(draw, 20):
        names.pop()
    elif rarely(draw, 20):
        names.append("extra")
    return names


class Case:
    """The handles and memory of one call, released by ``close``."""

    def __init__(self) -> None:
        self.descs: list[int] = []
        self.buffers: list[int] = []
        self.memory: list[int] = []
        self.hosts: list[bytes] = []  # const bytes and copy sources stay alive for the call

    def desc(self, dtype: np.dtype | int, dims: list[int]) -> int:
        code = int(acl_from_numpy(dtype)) if isinstance(dtype, np.dtype) else dtype
        handle = call(acl.create_tensor_desc, code, dims, ND)  # 0 for dims it refuses: the call gets 0 then
        if handle:
            self.descs.append(handle)
        return handle

    def buffer(self, nbytes: int, data: bytes = b"") -> int:
        size = nbytes if 0 <= nbytes <= MAX_BUFFER else MAX_BUFFER
        ptr = ok(acl.rt.malloc, max(size, 1), 0)
        self.memory.append(ptr)
        if data and len(data) <= size:
            self.hosts.append(data)
            ok(acl.rt.memcpy, ptr, size, acl.util.bytes_to_ptr(data), len(data), H2D)
        handle = ok(acl.create_data_buffer, ptr, size)
        self.buffers.append(handle)
        return handle

    def const(self, desc: int, values: np.ndarray) -> None:
        data = values.tobytes()
        self.hosts.append(data)
        call(acl.set_tensor_const, desc, acl.util.bytes_to_ptr(data), len(data))

    def close(self) -> None:
        for handle in self.buffers:
            call(acl.destroy_data_buffer, handle)
        for handle in self.descs:
            call(acl.destroy_tensor_desc, handle)
        for ptr in self.memory:
            call(acl.rt.free, ptr)


def _produced(op_type: str, inputs: list, attrs: list, count: int) -> list[tuple[np.dtype, list[int]]] | None:
    """What the operator makes of these inputs (the runtime's own inference), or None if it refuses them."""
    descs = []
    for item in inputs:
        if item is None:
            descs.append(TensorDesc(-1, (), -1))
            continue
        dtype, dims, values, const = item
        desc = TensorDesc(int(acl_from_numpy(dtype)), tuple(dims), ND)
        if const:
            desc.const = values.tobytes()
        descs.append(desc)
    attr = OpAttr()
    for name, kind, value in attrs:
        attr.set(name, kind, tuple(value) if kind == A.LIST_INT else value)
    outs = [TensorDesc(0, (-2,), ND) for _ in range(count)]
    try:
        results = infer(op_type, descs, outs, attr)
    except AclError:
        return None
    return [(r.dtype, [d if d >= 0 else 2 for d in r.shape] if r.shape != (-2,) else [2]) for r in results]


def _run_one(data, op_type: str, stream: int) -> None:
    op = table.record(op_type)
    plan = data.draw(plans())
    names = _input_names(op, data.draw)
    inputs = [data.draw(operand(name, name.endswith("?"), plan)) for name in names]
    attrs = data.draw(attributes(op, plan))
    count = len(op.outputs) if not rarely(data.draw, 20) else data.draw(st.integers(0, 2))
    produced = _produced(op_type, inputs, attrs, count) if not rarely(data.draw, 10) else None
    case = Case()
    try:
        in_descs, in_bufs = [], []
        for item in inputs:
            if item is None:
                in_descs.append(case.desc(-1, []))
                in_bufs.append(ok(acl.create_data_buffer, 0, 0))
                case.buffers.append(in_bufs[-1])
                continue
            dtype, dims, values, const = item
            desc = case.desc(dtype, dims)
            in_descs.append(desc)
            if const:
                case.const(desc, values)
                in_bufs.append(ok(acl.create_data_buffer, 0, 0))
                case.buffers.append(in_bufs[-1])
            else:
                in_bufs.append(case.buffer(values.nbytes, values.tobytes()))
        out_descs, out_bufs = [], []
        for index in range(count):
            if produced is not None and index < len(produced) and not rarely(data.draw, 20):
                dtype, dims = produced[index]
                if rarely(data.draw, 10):
                    dims = [-1] * len(dims)  # dynamic: the call writes the real dims back
            else:
                dtype = np.dtype(data.draw(st.sampled_from(DTYPES)))
                dims = data.draw(st.lists(st.sampled_from([0, 1, 2, 3, -1]), max_size=3))
            out_descs.append(case.desc(np.dtype(dtype), list(dims)))
            known = all(d >= 0 for d in dims)
            nbytes = math.prod(dims) * np.dtype(dtype).itemsize if known else MAX_BUFFER
            out_bufs.append(case.buffer(nbytes))
        attr = ok(acl.op.create_attr)
        try:
            for name, kind, value in attrs:
                _set_attr(attr, name, kind, value)
            with quiet_numpy():
                code = call(acl.op.execute_v2, op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream)
                assert code not in OUR_BUGS, (op_type, code)
                synced = call(acl.rt.synchronize_stream, stream)
                assert synced not in OUR_BUGS, (op_type, synced)
        finally:
            call(acl.op.destroy_attr, attr)
    finally:
        case.close()


@pytest.fixture
def watched(stream):
    with BugWatch() as bugs:
        yield stream
        bugs.check()


@pytest.mark.parametrize("op_type", table.op_types())
@settings(
    max_examples=EXAMPLES,
    derandomize=EXAMPLES == 20,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_each_op_type_answers_only_documented_codes(watched, op_type, data):
    _run_one(data, op_type, watched)
