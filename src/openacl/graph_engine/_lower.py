"""Lowering a compiled graph to one ONNX model: the only place that writes ONNX protos.

Data become graph inputs (in index order), then every Variable becomes an input too, so the session feeds the
state it holds; Const become initializers; Assign becomes an Identity whose result is an extra output the
session stores after the run; a GE IR operator becomes the ONNX nodes its op-table record writes (through a
:class:`_Context`, which knows constant values and dtypes). ONNX forbids duplicate output names, so a tensor
wanted twice is output once, and an output that is a graph input or initializer gets an Identity in front.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import numpy as np

from openacl import dtypes, lazy
from openacl.errors import GeError, GeStatus
from openacl.graph_engine import _ops
from openacl.graph_engine.passes import CompiledGraph
from openacl.ops import ir
from openacl.ops.lowering import learn_types

onnx = lazy.module("onnx")
helper = lazy.module("onnx.helper")
numpy_helper = lazy.module("onnx.numpy_helper")

#: IR version for graphs built in Python; models read by ``Graph.from_onnx`` keep their own.
DEFAULT_IR_VERSION = 8

VarTypes = Mapping[str, tuple[np.dtype, tuple[int, ...]]]


def lower(compiled: CompiledGraph, var_types: VarTypes) -> tuple[onnx.ModelProto, list[str]]:
    """The ONNX model of ``compiled`` and its output names (each wanted tensor once, first-wanted first).

    The tensors wanted are ``compiled.outputs`` then the Assign results; the caller maps them to output
    positions with :func:`output_positions`.
    """
    inputs = [_data_input(node) for node in compiled.data]
    inputs += [_value_info(name, *var_types[name]) for name in compiled.variables if name in var_types]
    opset = dict(compiled.graph.opset)
    opset.setdefault("", 17)
    known = {node.name: node.attrs["dtype"] for node in compiled.data}
    known.update({name: np.dtype(t[0]) for name, t in var_types.items()})
    taken = {out for node in compiled.nodes for out in node.outputs} | {node.name for node in compiled.nodes}
    ctx = _Context(opset, inputs, known, taken)
    for node in compiled.nodes:
        if node.type == _ops.CONST and not node.domain:
            ctx.add_const(node.name, np.asarray(node.attrs["value"]))
        elif node.type == _ops.ASSIGN and not node.domain:
            ctx.nodes.append(helper.make_node("Identity", [node.inputs[1]], node.outputs, name=node.name))
        elif node.type == _ops.DATA and not node.domain:
            _ops.check_format(f"Data {node.name!r}", node.attrs.get("format"))
        elif node.type == _ops.VARIABLE and not node.domain:
            pass
        elif node.domain == _ops.GE_DOMAIN:
            lower_ir_node(ctx, node)
        else:
            ctx.nodes.append(_onnx_node(node))
    nodes, initializers = ctx.nodes, ctx.initializers
    sources = {vi.name for vi in inputs} | {init.name for init in initializers}
    taken = {out for node in compiled.nodes for out in node.outputs} | sources
    out_names = []
    for tensor in wanted_tensors(compiled):
        if tensor in sources:
            alias = _fresh(f"{tensor}__out", taken)
            nodes.append(helper.make_node("Identity", [tensor], [alias], name=alias))
            tensor = alias
        out_names.append(tensor)
    graph = helper.make_graph(
        nodes, compiled.name, inputs, [onnx.ValueInfoProto(name=n) for n in out_names], initializer=initializers
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opset.items()], producer_name="openacl.ge"
    )
    model.ir_version = compiled.graph.ir_version or DEFAULT_IR_VERSION
    return model, out_names


def wanted_tensors(compiled: CompiledGraph) -> list[str]:
    """Every tensor the session needs back, once each: outputs, then Assign results."""
    return list(dict.fromkeys([*compiled.outputs, *compiled.assigns.values()]))


def output_positions(compiled: CompiledGraph) -> dict[str, int]:
    """Tensor name -> position in the model's outputs (the order :func:`lower` gives them)."""
    return {name: i for i, name in enumerate(wanted_tensors(compiled))}


def _data_input(node: Any) -> onnx.ValueInfoProto:
    shape = node.attrs["shape"]
    dims = None if shape is None else [d if d is not None else f"{node.name}_dim{i}" for i, d in enumerate(shape)]
    return helper.make_tensor_value_info(node.name, dtypes.onnx_from_numpy(node.attrs["dtype"]), dims)


def lower_ir_node(ctx: _Context, node: Any) -> None:
    """One GE IR node through its record's lowering; UNSUPPORTED for what a CPU cannot run."""
    record = _ops.spec(node.type)
    if record.unsupported is not None:
        raise _ops.unsupported(node.type, record.unsupported)
    _ops.check_format(f"{node.type} {node.name!r}", node.attrs.get("_output_format"))
    if record.lower is None:
        raise GeError(GeStatus.UNSUPPORTED, f"{node.type} {node.name!r}: openacl has no lowering for it")
    groups = node.groups or tuple(1 for _ in record.inputs)
    ins: list[Any] = []
    pos = 0
    for spec, n in zip(record.inputs, groups, strict=True):
        part = node.inputs[pos : pos + n]
        pos += n
        ins.append(list(part) if spec.kind == "dynamic" else (part[0] if part else None))
    ctx.begin(node)
    record.lower(ctx, ins, node.attrs, list(node.outputs))


class _Context:
    """The :class:`openacl.ops.ir.LowerContext` of one graph (or an If branch inside it, with ``parent``).

    A graph has no descs: ``shape``, ``format`` and ``out_dtype`` know nothing, dtypes and ranks come from the
    declarations and ONNX type inference, and arithmetic operands meet at GE's promoted type."""

    def __init__(
        self,
        opset: dict[str, int],
        graph_inputs: list[onnx.ValueInfoProto],
        known: dict[str, np.dtype],
        taken: set[str],
        parent: _Context | None = None,
    ) -> None:
        self.opsets = opset
        self.graph_inputs = graph_inputs
        self.known = known
        self.ranks: dict[str, int] = {}
        self.taken = taken
        self.parent = parent
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.consts: dict[str, np.ndarray] = {}
        self.op_type = ""
        self.node_name = ""
        self.node_outputs: set[str] = set()
        self.onnx_names: set[str] = parent.onnx_names if parent is not None else set()
        for info in graph_inputs if parent is None else ():
            if info.type.tensor_type.HasField("shape"):
                self.ranks[info.name] = len(info.type.tensor_type.shape.dim)

    def begin(self, node: Any) -> None:
        self.op_type, self.node_name = node.type, node.name
        self.node_outputs = set(node.outputs)

    @property
    def opset(self) -> int:
        return self.opsets.get("", 17)

    def fail(self, detail: str, about: str = ir.INPUT) -> NoReturn:
        raise GeError(GeStatus.FAILED, f"{self.op_type} {self.node_name!r}: {detail}")

    def shape(self, tensor: str) -> None:
        return None

    def format(self, tensor: str) -> None:
        return None

    def out_dtype(self, index: int) -> None:
        return None

    def meet(self, tensors: Sequence[str]) -> list[str]:
        common = functools.reduce(ir.promote, [self.dtype(t) for t in tensors])
        return [self.cast(t, common) for t in tensors]

    def fresh(self, hint: str) -> str:
        return _fresh(f"{self.node_name}/{hint}", self.taken)

    def emit(self, onnx_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1, **attrs: Any) -> list[str]:
        outs = [self.fresh(onnx_type) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        # The node writing the GE node's outputs carries its name (what dumps and profiles show); helpers are
        # "<GE node>/<ONNX type>".
        name = self.node_name if self.node_outputs.intersection(outs) else ""
        if not name or name in self.onnx_names:
            name = self.fresh(onnx_type)
        self.onnx_names.add(name)
        tensors = {k: numpy_helper.from_array(v) for k, v in attrs.items() if isinstance(v, np.ndarray)}
        self.nodes.append(helper.make_node(onnx_type, list(inputs), outs, name=name, **(attrs | tensors)))
        if onnx_type == "Cast":
            self.known[outs[0]] = dtypes.numpy_from_onnx(attrs["to"])
        return outs

    def add_const(self, name: str, value: np.ndarray) -> None:
        self.initializers.append(numpy_helper.from_array(value, name))
        self.consts[name] = value
        self.known[name] = value.dtype
        self.ranks[name] = value.ndim

    def const(self, value: Any, dtype: Any = None) -> str:
        name = self.fresh("const")
        self.add_const(name, np.asarray(value, dtype=dtype))
        return name

    def value(self, tensor: str) -> np.ndarray | None:
        ctx: _Context | None = self
        while ctx is not None:
            if tensor in ctx.consts:
                return ctx.consts[tensor]
            ctx = ctx.parent
        return None

    def _lookup(self, table: str, tensor: str) -> Any:
        ctx: _Context | None = self
        while ctx is not None:
            found = getattr(ctx, table).get(tensor)
            if found is not None:
                return found
            ctx = ctx.parent
        return None

    def dtype(self, tensor: str) -> np.dtype:
        found = self._lookup("known", tensor)
        if found is None:
            self._infer()
            found = self._lookup("known", tensor)
        if found is None:
            self.fail(f"openacl cannot tell the dtype of {tensor!r}")
        return np.dtype(found)

    def rank(self, tensor: str) -> int | None:
        found = self._lookup("ranks", tensor)
        if found is None:
            self._infer()
            found = self._lookup("ranks", tensor)
        return found

    def cast(self, tensor: str, dtype: Any) -> str:
        dtype = np.dtype(dtype)
        if self.dtype(tensor) == dtype:
            return tensor
        return self.emit("Cast", [tensor], to=dtypes.onnx_from_numpy(dtype))[0]

    def _infer(self) -> None:
        """ONNX type inference over everything lowered so far; what it learns is kept."""
        chain = []
        ctx: _Context | None = self
        while ctx is not None:
            chain.append(ctx)
            ctx = ctx.parent
        nodes = [n for c in reversed(chain) for n in c.nodes]
        inits = [t for c in reversed(chain) for t in c.initializers]
        graph = helper.make_graph(nodes, "infer", chain[-1].graph_inputs, [], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in self.opsets.items()])
        model.ir_version = DEFAULT_IR_VERSION
        learn_types(model, self.known, self.ranks)

    def subgraph(self, graph: Any, inputs: Sequence[str], tag: str) -> onnx.GraphProto:
        """A branch graph as an ONNX subgraph: its Data ``i`` reads ``inputs[i]``, every other name is prefixed."""
        prefix = f"{self.node_name}/{tag}"
        child = _Context(self.opsets, self.graph_inputs, {}, self.taken, parent=self)
        rename: dict[str, str] = {}
        for node in graph.nodes:
            if node.type == _ops.DATA and not node.domain:
                index = node.attrs["index"]
                if index >= len(inputs):
                    self.fail(f"{tag} reads input {index}, the node has {len(inputs)}")
                rename[node.outputs[0]] = inputs[index]
            else:
                for out in node.outputs:
                    rename[out] = _fresh(f"{prefix}/{out}", self.taken)
        for node in graph.nodes:
            if node.type in (_ops.DATA, _ops.NET_OUTPUT) and not node.domain:
                continue  # Data reads the op's inputs; NetOutput's inputs are graph.outputs, made below
            copy = node.copy()
            copy.name = f"{prefix}/{node.name}"
            copy.inputs = [rename.get(i, i) for i in node.inputs]
            copy.outputs = [rename[o] for o in node.outputs]
            if node.type == _ops.CONST and not node.domain:
                child.add_const(copy.outputs[0], np.asarray(node.attrs["value"]))
            elif node.domain == _ops.GE_DOMAIN:
                lower_ir_node(child, copy)
            elif node.type in _ops.GE_TYPES:
                self.fail(f"{tag}: a {node.type} node inside a subgraph is not supported")
            else:
                child.nodes.append(_onnx_node(copy))
        outputs = []
        for i, tensor in enumerate(graph.outputs):
            source = rename.get(tensor, tensor)
            out = _fresh(f"{prefix}/output_{i}", self.taken)
            child.nodes.append(helper.make_node("Identity", [source], [out], name=out))
            dtype = child.dtype(source)
            outputs.append(helper.make_tensor_value_info(out, dtypes.onnx_from_numpy(dtype), None))
        return helper.make_graph(child.nodes, prefix, [], outputs, initializer=child.initializers)


def _value_info(name: str, dtype: np.dtype, shape: tuple[int, ...]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtypes.onnx_from_numpy(dtype), list(shape))


def _onnx_node(node: Any) -> onnx.NodeProto:
    proto = helper.make_node(node.type, node.inputs, node.outputs, name=node.name, domain=node.domain or None)
    for key, value in node.attrs.items():
        if isinstance(value, onnx.AttributeProto):
            proto.attribute.append(value)
        else:
            if isinstance(value, np.ndarray):
                value = numpy_helper.from_array(value)
            proto.attribute.append(helper.make_attribute(key, value))
    return proto


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 0
    while candidate in taken:
        n += 1
        candidate = f"{name}{n}"
    taken.add(candidate)
    return candidate
