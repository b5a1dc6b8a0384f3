"""Compiling an operator: its descs and attributes → a one-node ONNX model → an onnxruntime session, cached.

The cache key is the operator's whole signature: op type, every input's dtype, dims, format and const value,
every output's dtype, dims and format, and every attribute (name, kind, value). A second call with the same
signature builds nothing; ``statistics()`` counts builds and hits so tests can see it.

Compiling checks everything that can be checked before the operator runs, with CANN's matching codes:
the op type (TYPE_NOT_MATCH), input count, dtypes and shapes (INPUT_NOT_MATCH, found by ONNX's strict shape
inference), attribute kinds (ATTR_NOT_MATCH), and that each output desc has the dtype and element count the
operator produces (OUTPUT_NOT_MATCH). An ACL dtype numpy cannot hold (ACL_BF16, ACL_STRING) is
UNSUPPORTED_DATA_TYPE.

Invariant: a CompiledOp in the cache is immutable; its session is thread-safe (onnxruntime's ``run`` is), so
one compiled operator may run on several streams at once.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from openacl import atfork, lazy, onnxrt
from openacl.dtypes import numpy_from_acl, numpy_from_onnx
from openacl.errors import AclCode, AclError, ExecutionFailed
from openacl.onnxrt import session_options
from openacl.op import table
from openacl.op.attr import OpAttr
from openacl.op.lowering import Operand, SingleOpContext
from openacl.op.table import input_mismatch, output_mismatch
from openacl.op.tensor_desc import TensorDesc
from openacl.ops.ir import IrOp

helper = lazy.module("onnx.helper")
shape_inference = lazy.module("onnx.shape_inference")

OPSET = 18
IR_VERSION = 9
CACHE_CAPACITY = 1024


@dataclass(frozen=True)
class Feed:
    """A graph input the caller's buffer supplies: which input it is, and the view it needs."""

    index: int
    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    nbytes: int


@dataclass(frozen=True)
class Result:
    """What one output will be: its dtype and shape as the operator produces them (-1 where unknown)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    is_static: bool = field(init=False)
    nbytes: int = field(init=False)  # -1 unless static

    def __post_init__(self) -> None:
        static = all(dim >= 0 for dim in self.shape)
        object.__setattr__(self, "is_static", static)
        object.__setattr__(self, "nbytes", math.prod(self.shape) * self.dtype.itemsize if static else -1)


BINDINGS_PER_OP = 8  # buffer sets whose onnxruntime bindings a compiled operator keeps for reuse


class CompiledOp:
    """One operator, ready to run: its session, the inputs it reads from buffers, its outputs.

    It runs on memory the caller checked (``run_into``): onnxruntime reads the inputs and writes the
    outputs in place through an IOBinding of their addresses, with no copy. The binding of a buffer set is
    kept and reused by the next call with the same addresses (the common loop), one caller at a time: a
    binding is taken out of the pool for the run and put back after it. The pools of the ``BINDINGS_PER_OP``
    buffer sets made last are kept.
    """

    def __init__(
        self, op_type: str, model, session, feeds: tuple[Feed, ...], results: tuple[Result, ...], build_s: float
    ) -> None:
        self.op_type = op_type
        self.model = model  # the ONNX ModelProto (tests, tools)
        self.session = session
        self.feeds = feeds
        self.results = results
        self.build_seconds = build_s
        self._output_names = [f"y{i}" for i in range(len(results))]
        self.input_bytes = sum(feed.nbytes for feed in feeds)
        self._lock = atfork.lock()
        self._bindings: dict[tuple, list] = {}  # buffer set -> bindings not in use, oldest set first
        self._run_bound = onnxrt.bound_entry(session)  # (None: this onnxruntime has none)

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Run on numpy arrays (tests, tools): one array per feed."""
        return self.session.run(self._output_names, {feed.name: a for feed, a in zip(self.feeds, arrays, strict=True)})

    def _bind(self, inputs: tuple[int, ...], outputs: tuple[int | None, ...]):
        binding = self.session.io_binding()
        for feed, addr in zip(self.feeds, inputs, strict=True):
            binding.bind_input(feed.name, "cpu", 0, feed.dtype, list(feed.shape), addr)
        for name, result, addr in zip(self._output_names, self.results, outputs, strict=True):
            if addr is None:
                binding.bind_output(name, "cpu")  # onnxruntime allocates; the caller copies
            else:
                binding.bind_output(name, "cpu", 0, result.dtype, list(result.shape), addr)
        return binding

    def run_into(self, key: tuple[tuple[int, ...], tuple[int | None, ...]]) -> list[np.ndarray | None] | None:
        """Run reading each feed at its address and writing each output at its address (checked by the caller);
        ``key`` is the pair of those addresses, made once by the caller's plan.

        An output whose address is None is returned as an array for the caller to copy, the others as None; if
        every output is written in place, None is returned (no list per run). The pool of a buffer set is taken
        from and given back to without the lock (``list.pop`` and ``append`` are atomic under the GIL): the lock
        guards adding and dropping buffer sets only.
        """
        inputs, outputs = key
        pool = self._bindings.get(key)
        try:
            binding = pool.pop() if pool is not None else self._bind(inputs, outputs)
        except IndexError:  # every binding of this set is in use by another run
            binding = self._bind(inputs, outputs)
        try:
            if self._run_bound is not None:
                self._run_bound(binding._iobinding, None)
            else:
                self.session.run_with_iobinding(binding)
        except Exception as exc:  # onnxruntime refused the data (an integer division by zero, an axis out of range)
            # The model path's code, in one line; the binding is not pooled again.
            reason = " ".join(str(exc).split())
            raise ExecutionFailed(AclCode.ACL_ERROR_FAILURE, f"{self.op_type}: execution failed: {reason}") from None
        copies = None
        if None in outputs:
            values = binding.get_outputs()
            copies = [values[i].numpy().copy() if addr is None else None for i, addr in enumerate(outputs)]
        if pool is None:
            pool = self._pool(key)
        pool.append(binding)
        return copies

    def _pool(self, key: tuple) -> list:
        """The pool of a buffer set, made now; the oldest set's goes past ``BINDINGS_PER_OP`` (after the lock)."""
        dropped = []
        with self._lock:
            pool = self._bindings.setdefault(key, [])
            while len(self._bindings) > BINDINGS_PER_OP:
                dropped.append(self._bindings.pop(next(iter(self._bindings))))
        del dropped
        return pool


def _numpy_dtype(desc: TensorDesc, what: str) -> np.dtype:
    try:
        return numpy_from_acl(desc.dtype)
    except (KeyError, ValueError):
        raise AclError(
            AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE, f"{what}: ACL dtype {desc.dtype} has no CPU representation"
        ) from None


def _inputs(op: IrOp, in_descs: list[TensorDesc]) -> tuple[list, list[Operand], dict[str, int]]:
    """The descs by the record's inputs: one entry per input (a value name, None for an absent optional input, a
    list for a dynamic one, which takes what the others leave), the operands, and each dynamic input's count."""
    kinds = [spec.kind for spec in op.inputs]
    fixed = sum(1 for kind in kinds if kind != "dynamic")
    required = sum(1 for kind in kinds if kind == "required") + kinds.count("dynamic")
    dynamic = "dynamic" in kinds
    if not (required <= len(in_descs) and (dynamic or len(in_descs) <= len(kinds))):
        names = ", ".join(spec.name + {"optional": "?", "dynamic": "*"}.get(spec.kind, "") for spec in op.inputs)
        raise input_mismatch(op.type, f"takes inputs {names}; {len(in_descs)} were given")
    operands: list[Operand] = []
    descs = iter(enumerate(in_descs))

    def take(name: str, optional: bool) -> str | None:
        found = next(descs, None)
        if found is None:
            return None
        index, desc = found
        if desc.is_absent:
            if not optional:
                raise input_mismatch(op.type, f"input {index} ({name}) is required, its desc is ACL_DT_UNDEFINED")
            return None
        operands.append(_operand(op.type, index, name, desc))
        return operands[-1].name

    entries: list = []
    counts: dict[str, int] = {}
    for spec in op.inputs:
        if spec.kind == "dynamic":
            n = len(in_descs) - fixed
            counts[spec.name] = n
            entries.append([take(spec.name, False) for _ in range(n)])
        else:
            entries.append(take(spec.name, spec.kind == "optional"))
    return entries, operands, counts


def _operand(op_type: str, index: int, name: str, desc: TensorDesc) -> Operand:
    dtype = _numpy_dtype(desc, f"{op_type} input {index}")
    if not desc.is_static:
        raise input_mismatch(op_type, f"input {index} ({name}) has dims {list(desc.dims)}: need real dims")
    const = None
    if desc.const is not None:
        if len(desc.const) != desc.element_count() * dtype.itemsize:
            raise input_mismatch(
                op_type,
                f"input {index} ({name}): const of {len(desc.const)} bytes for dims {list(desc.dims)} of {dtype}",
            )
        const = np.frombuffer(desc.const, dtype).reshape(desc.dims)
    return Operand(f"x{index}", dtype, desc.dims, desc.format, const)


def _shape(value_info) -> tuple[int, ...]:
    tensor_type = value_info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return (-2,)  # unknown rank
    return tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim)


def _results(op_type: str, inferred, out_descs: list[TensorDesc]) -> tuple[Result, ...]:
    """What the operator produces, checked against the output descs."""
    results = []
    for index, (value_info, desc) in enumerate(zip(inferred.graph.output, out_descs, strict=True)):
        produced = numpy_from_onnx(value_info.type.tensor_type.elem_type)
        wanted = _numpy_dtype(desc, f"{op_type} output {index}")
        if produced != wanted:
            raise output_mismatch(op_type, f"output {index} is {produced}, its desc says {wanted}")
        result = Result(produced, _shape(value_info))
        if result.is_static and desc.is_static and math.prod(result.shape) != desc.element_count():
            detail = f"output {index} has shape {list(result.shape)}; its desc dims {list(desc.dims)} differ in size"
            raise output_mismatch(op_type, detail)
        results.append(result)
    return tuple(results)


#: ONNX's data propagation treats every 1-D integer input as a possible shape and builds one dimension per
#: element: a [2**63 - 1] int64 input would take all memory. Past this many elements it is switched off (such an
#: input is data, not a shape; ACL_MAX_DIM_CNT is 128).
DATA_PROP_MAX_ELEMENTS = 4096


def _data_prop_is_safe(feeds) -> bool:
    """ONNX's data propagation builds a value per element of an integer tensor (a shape is a short 1-D one), and a
    Cast makes an integer tensor of any input: an input past the limit, of any dtype or rank, turns it off, or
    inference of a [2**63-1] Cast eats all memory."""
    return not any(math.prod(feed.shape) > DATA_PROP_MAX_ELEMENTS for feed in feeds)


def _lower(op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: OpAttr):
    """The operator's ONNX model (outputs untyped) with its types and shapes inferred, and its feeds."""
    op = table.record(op_type)
    dynamic_out = any(out.dynamic for out in op.outputs)
    if len(out_descs) < len(op.outputs) - dynamic_out or (not dynamic_out and len(out_descs) != len(op.outputs)):
        names = ", ".join(out.name + ("*" if out.dynamic else "") for out in op.outputs)
        raise output_mismatch(op_type, f"has outputs {names}; {len(out_descs)} were given")
    entries, operands, counts = _inputs(op, in_descs)
    attrs = table.resolve_attrs(op, attr, counts)
    out_dtypes = [_numpy_dtype(d, f"{op_type} output {i}") for i, d in enumerate(out_descs)]
    ctx = SingleOpContext(op_type, OPSET, operands, out_dtypes)
    feeds = tuple(
        Feed(int(o.name[1:]), o.name, o.dtype, o.shape, math.prod(o.shape) * o.dtype.itemsize)
        for o in operands
        if o.const is None
    )
    names = [f"y{i}" for i in range(len(out_descs))]
    op.lower(ctx, entries, attrs, names)
    graph = helper.make_graph(
        ctx.nodes,
        op_type,
        ctx.graph_inputs,
        [helper.make_empty_tensor_value_info(name) for name in names],
        initializer=ctx.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="openacl.op")
    model.ir_version = IR_VERSION
    try:
        inferred = shape_inference.infer_shapes(model, strict_mode=True, data_prop=_data_prop_is_safe(feeds))
    except Exception as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise input_mismatch(op_type, f"the inputs do not fit the operator: {reason}") from None
    return inferred, feeds


def infer(op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: OpAttr) -> tuple[Result, ...]:
    """The outputs' dtypes and shapes (-1 where unknown), without loading anything."""
    inferred, _ = _lower(op_type, in_descs, out_descs, attr)
    return tuple(Result(numpy_from_onnx(vi.type.tensor_type.elem_type), _shape(vi)) for vi in inferred.graph.output)


def build(op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: OpAttr) -> CompiledOp:
    """Lower, check and load one operator (no cache)."""

    start = time.perf_counter()
    inferred, feeds = _lower(op_type, in_descs, out_descs, attr)
    results = _results(op_type, inferred, out_descs)
    try:
        session = onnxrt.new_session(inferred.SerializeToString(), session_options())
    except Exception as exc:
        raise input_mismatch(op_type, f"onnxruntime cannot run it for these inputs: {str(exc).strip()[:300]}") from None
    return CompiledOp(op_type, inferred, session, feeds, results, time.perf_counter() - start)


def signature(op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: OpAttr) -> tuple:
    return (
        op_type,
        tuple(desc.signature() for desc in in_descs),
        tuple((desc.dtype, desc.dims, desc.format) for desc in out_descs),
        attr.signature(),
    )


class OpCache:
    """Compiled operators by signature, least recently used dropped first beyond ``capacity``."""

    def __init__(self, capacity: int = CACHE_CAPACITY) -> None:
        self.capacity = capacity
        self._lock = atfork.lock()
        self._entries: OrderedDict[tuple, CompiledOp] = OrderedDict()
        self._builds = 0
        # A statistic, also counted without the lock by calls that find their operator through their plan
        # (``plan``), which never ask the cache: a race between two such threads may lose one.
        self.hits = 0

    def get(self, op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: OpAttr) -> CompiledOp:
        key = signature(op_type, in_descs, out_descs, attr)
        with self._lock:
            compiled = self._entries.get(key)
            if compiled is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return compiled
        compiled = build(op_type, in_descs, out_descs, attr)  # outside the lock: building takes milliseconds
        with self._lock:
            self._builds += 1
            compiled = self._entries.setdefault(key, compiled)  # a racing build of the same key: keep the first
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return compiled

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._builds = self.hits = 0

    def statistics(self) -> dict:
        with self._lock:
            return {"entries": len(self._entries), "builds": self._builds, "hits": self.hits}


cache = OpCache()
