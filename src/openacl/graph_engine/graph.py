"""The graph a user builds: Data, Const, Variable, Assign, Summary, Save and any ONNX operator.

A :class:`Graph` is a plain list of :class:`Node` records wired by tensor names, the shape GE's ``ge::Graph``
has before compilation. Nothing here runs anything: :mod:`openacl.graph_engine.passes` compiles a snapshot of it and the
session executes the result with onnxruntime. Mistakes in building a graph (a duplicate name, a tensor of
another graph, an unknown operator) raise ``ValueError``/``TypeError`` at once, where the stack trace points at
the line that made them; everything a session does later answers with a GE status code instead.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openacl import dtypes, lazy
from openacl.graph_engine import _ops
from openacl.ops import ir

onnx = lazy.module("onnx")
numpy_helper = lazy.module("onnx.numpy_helper")

__all__ = ["DEFAULT_OPSET", "DT_FLOAT", "FORMAT_ND", "GE_DOMAIN", "UNCONNECTED", "Graph", "Node", "PortDesc", "Tensor"]

#: The ONNX domain of GE's own node types in a model read by :meth:`Graph.from_onnx`.
GE_DOMAIN = _ops.GE_DOMAIN
#: The default ONNX opset of a graph built in Python (old enough for any onnxruntime we support).
DEFAULT_OPSET = 17
#: The most outputs one node may have (and inputs one call may create): a count of 2**31 would build that many
#: tensor names, for minutes and gigabytes, before anything could refuse it. GE sets no number; openacl does.
MAX_COUNT = 1 << 16


@dataclasses.dataclass(frozen=True, slots=True)
class Tensor:
    """One output of one node: what ``g.data``/``g.op``/... return and what other nodes take as input."""

    name: str
    graph: Graph = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(slots=True)
class Node:
    """A node: ``type`` is a GE type (``Data``, ``Summary``, ...) or an ONNX op type in ``domain``.

    ``inputs``/``outputs`` are tensor names; ``attrs`` holds Python values or ``onnx.AttributeProto`` (kept as
    read from a model). The GE types and the attributes they use are listed in :mod:`openacl.graph_engine._ops`.
    """

    name: str
    type: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = dataclasses.field(default_factory=dict)
    domain: str = ""
    #: For a GE IR node: how many of ``inputs`` each IR input takes (0 for an absent optional input, n for a
    #: dynamic one); ``outputs`` likewise in ``output_groups``.
    groups: tuple[int, ...] = ()
    output_groups: tuple[int, ...] = ()
    #: Names of the nodes this one runs after (control edges; onnxruntime orders by data alone).
    control: tuple[str, ...] = ()
    #: Attributes of the node's input and output tensors (GE keeps them on the tensor descs), keyed
    #: ("input" | "output", index); kept for inspection and dumps, lowering reads none.
    port_attrs: dict[tuple[str, int], dict[str, Any]] = dataclasses.field(default_factory=dict)
    #: Descs set on ports other than a Data node's (whose desc is its ``shape``/``dtype``/``format``), keyed as
    #: ``port_attrs``; kept for inspection, lowering reads none.
    port_descs: dict[tuple[str, int], PortDesc] = dataclasses.field(default_factory=dict)

    def copy(self) -> Node:
        return Node(
            self.name,
            self.type,
            list(self.inputs),
            list(self.outputs),
            dict(self.attrs),
            self.domain,
            self.groups,
            self.output_groups,
            self.control,
            {port: dict(attrs) for port, attrs in self.port_attrs.items()},
            dict(self.port_descs),
        )


TensorLike = Tensor | str

#: GE's ``FORMAT_ND`` and ``DT_FLOAT``: the desc of a tensor nothing has described yet.
FORMAT_ND, DT_FLOAT = 2, 0
#: An input whose edge was removed (``Graph.remove_edge``/``remove_node``): building such a graph fails.
UNCONNECTED = ""


@dataclasses.dataclass(frozen=True, slots=True)
class PortDesc:
    """What GE's ``TensorDesc`` of one node input or output says: dims (-1 unknown), GE format and data type
    numbers."""

    shape: tuple[int, ...] = ()
    format: int = FORMAT_ND
    dtype: int = DT_FLOAT


class Graph:
    """A GE graph under construction (``ge::Graph``).

    ``opset`` maps ONNX domains to versions for the ONNX operators used (``{"": 17}`` by default).
    """

    def __init__(self, name: str, *, opset: int | dict[str, int] = DEFAULT_OPSET) -> None:
        if not isinstance(name, str):
            raise TypeError(f"graph name must be a str, not {type(name).__name__}")
        self.name = name
        #: Graph attributes (GE ``Graph::SetAttr``); openacl keeps them for dumps and reads none.
        self.attrs: dict[str, Any] = {}
        self.opset: dict[str, int] = {"": opset} if isinstance(opset, int) else dict(opset)
        self.ir_version: int | None = None
        self.nodes: list[Node] = []
        self.outputs: list[str] = []
        self._node_names: set[str] = set()
        self._tensors: set[str] = set()
        self._variables: dict[str, Tensor] = {}
        self._auto = 0
        #: Graphs added to this one as a whole (GE ``Graph::AddSubGraph``), besides those held by its nodes.
        self.subgraphs: list[Graph] = []

    # ----- building -----

    def data(
        self, name: str, *, index: int, shape: Sequence[int | None] | None, dtype: Any, format: int | None = None
    ) -> Tensor:
        """A ``Data`` node: the graph input matched to ``inputs[index]`` of ``run_graph``.

        A dimension of ``None`` or ``-1`` accepts any size. ``shape=None`` leaves the whole shape to the first
        run: the graph is built with the shape of that run's input, and later runs must match it (GE takes a
        0-dim Data's shape from the first run's input). ``format`` is a GE ``Format`` number, kept for dumps;
        NPU storage formats (FRACTAL_NZ) make the build fail.
        """
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"Data {name!r}: index must be an int >= 0, got {index!r}")
        dims: tuple[int | None, ...] | None = None
        if shape is not None:
            try:
                dims = tuple(None if d is None or d == -1 else int(d) for d in shape)
            except OverflowError:  # an infinite dimension
                raise ValueError(f"Data {name!r}: shape {shape!r} has a dimension that is not an int") from None
        np_dtype = _checked_dtype(dtype, f"Data {name!r}")
        attrs: dict[str, Any] = {"index": index, "shape": dims, "dtype": np_dtype}
        if format is not None:
            attrs["format"] = int(format)
        return self._add(name, _ops.DATA, [], attrs)

    def const(self, name: str, value: Any) -> Tensor:
        """A ``Const`` node (an ONNX initializer)."""
        array = np.array(value, copy=True)
        _checked_dtype(array.dtype, f"Const {name!r}")
        array.flags.writeable = False
        return self._add(name, _ops.CONST, [], {"value": array})

    def variable(self, name: str, value: Any = None) -> Tensor:
        """A ``Variable``: state that lives in the session, shared by name across its graphs.

        ``value`` is the initial value, used when the session builds a graph and has no variable ``name`` yet;
        without it the graph refers to a variable another graph of the session created. Naming the same
        variable twice in one graph gives the same tensor.
        """
        if name in self._variables:
            if value is not None:
                raise ValueError(f"variable {name!r} is already in graph {self.name!r}; give its value once")
            return self._variables[name]
        attrs: dict[str, Any] = {}
        if value is not None:
            array = np.array(value, copy=True)
            _checked_dtype(array.dtype, f"variable {name!r}")
            array.flags.writeable = False
            attrs["value"] = array
        tensor = self._add(name, _ops.VARIABLE, [], attrs)
        self._variables[name] = tensor
        return tensor

    def op(
        self,
        op_type: str,
        inputs: Sequence[TensorLike],
        name: str | None = None,
        *,
        n_outputs: int = 1,
        domain: str = "",
        **attrs: Any,
    ) -> Any:
        """Any ONNX operator; ``attrs`` become its ONNX attributes. Returns a Tensor, or a tuple of them.

        The GE types (``Summary``, ``Save``, ``Assign``, ...) are built with their own methods instead.
        """
        if domain in ("", "ai.onnx"):
            if op_type in _ops.GE_TYPES:
                raise ValueError(f"{op_type} is a GE node type: use Graph.{op_type.lower()}(...)")
            if not onnx.defs.has(op_type):
                raise ValueError(f"{op_type!r} is not an ONNX operator; GE node types are {_ops.type_list()}")
        if not 1 <= n_outputs <= MAX_COUNT:
            raise ValueError(f"{op_type}: n_outputs {n_outputs} is not between 1 and {MAX_COUNT}")
        name = name or self._auto_name(op_type)
        outs = [name] if n_outputs == 1 else [f"{name}:{i}" for i in range(n_outputs)]
        self._claim(name, outs)
        self.nodes.append(Node(name, op_type, self._names(inputs), outs, dict(attrs), domain))
        tensors = tuple(Tensor(out, self) for out in outs)
        return tensors[0] if n_outputs == 1 else tensors

    def summary(self, name: str, x: TensorLike) -> None:
        """A ``Summary`` node; ``name`` is its key in the Summary callback's ``params_list``.

        MindSpore-style names (``loss[:Scalar]``, ``w[:Histogram]``, ...) tell the TensorBoard sink what to write.
        """
        self._claim(name, [])
        self.nodes.append(Node(name, _ops.SUMMARY, self._names([x]), []))

    def assign(self, ref: TensorLike, value: TensorLike, name: str | None = None) -> Tensor:
        """``Assign``: the variable ``ref`` takes ``value`` after this run; the result is the new value.

        Every read of a variable in one run sees its value from before the run.
        """
        ref_name = self._names([ref])[0]
        if ref_name not in self._variables:
            raise ValueError(f"Assign: {ref_name!r} is not a variable of graph {self.name!r}")
        return self._add(name or self._auto_name("Assign"), _ops.ASSIGN, [ref_name, self._names([value])[0]], {})

    def save(self, tensors: Sequence[TensorLike], name: str | None = None) -> None:
        """A ``Save`` node: its variable inputs become graph outputs (GE's SavePass); other inputs are dropped.

        The Save callback fires only for a *checkpoint graph*, one whose compiled form is nothing but variables
        feeding the outputs (see :func:`openacl.graph_engine.passes.is_checkpoint_graph`).
        """
        name = name or self._auto_name("Save")
        self._claim(name, [])
        self.nodes.append(Node(name, _ops.SAVE, self._names(tensors), []))

    def set_outputs(self, tensors: Sequence[TensorLike]) -> Graph:
        """The graph's outputs, in the order ``run_graph`` returns them (a NetOutput node's inputs follow)."""
        self.outputs = self._names(tensors)
        net = self.net_output()
        if net is not None:
            net.inputs = list(self.outputs)
        return self

    def add_net_output(self) -> None:
        """End the graph with GE's ``NetOutput_<graph name>`` node, whose inputs are the outputs.

        Invariant (kept by :meth:`set_outputs` and the editing methods): while the node exists, ``outputs`` is
        its inputs, an unconnected one included (a build then fails saying so)."""
        name = f"{_ops.NET_OUTPUT}_{self.name}"
        self._claim(name, [])
        self.nodes.append(Node(name, _ops.NET_OUTPUT, list(self.outputs), []))

    def net_output(self) -> Node | None:
        return next((n for n in self.nodes if n.type == _ops.NET_OUTPUT), None)

    def _sync_outputs(self) -> None:
        net = self.net_output()
        if net is not None:
            self.outputs = list(net.inputs)

    def ge_op(
        self,
        op_type: str,
        inputs: Sequence[Any],
        attrs: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        output_counts: Sequence[int] = (),
        subgraphs: Mapping[str, Graph | Sequence[Graph]] | None = None,
    ) -> list[Any]:
        """A GE IR operator from the op table (:mod:`openacl.graph_engine._ops`), lowered to ONNX when the graph is
        built.

        ``inputs`` has one entry per IR input, in IR order: a tensor, None for an absent optional input, a list
        for a dynamic input. ``output_counts`` gives the count of each dynamic output, in order. Attributes are
        checked against their GE kind (TypeError) and defaults filled in; undeclared attributes are kept
        (GE private attributes such as ``_stream_label``) and not lowered. Returns one entry per IR output: a
        Tensor, or a list of them for a dynamic output. The node is named ``<type>_<n>`` unless ``name`` is given.

        An operator a CPU cannot run raises ``GeError(UNSUPPORTED)`` naming it and the reason; Summary, Save and
        Assign go to :meth:`summary`, :meth:`save` and :meth:`assign`.
        """
        record = _ops.spec(op_type)
        if record.unsupported is not None:
            raise _ops.unsupported(op_type, record.unsupported)
        if record.builder_only:
            raise ValueError(f"{op_type} nodes are made with Graph.{op_type.lower()}(...), not ge_op")
        if len(inputs) != len(record.inputs):
            raise TypeError(f"{op_type} takes {len(record.inputs)} inputs (IR order), got {len(inputs)}")
        flat: list[str] = []
        groups: list[int] = []
        for spec, given in zip(record.inputs, inputs, strict=True):
            if spec.kind == "dynamic":
                if isinstance(given, Tensor | str) or not isinstance(given, Sequence):
                    raise TypeError(f"{op_type}: input {spec.name!r} is dynamic and takes a list of tensors")
                names = self._names(given)
            elif given is None:
                if spec.kind == "required":
                    raise ValueError(f"{op_type}: required input {spec.name!r} is missing")
                names = []
            else:
                names = self._names([given])
            flat.extend(names)
            groups.append(len(names))
        values = dict(attrs or {})
        for attr in record.attrs:
            if attr.name in values:
                values[attr.name] = ir.check_attr(op_type, attr, values[attr.name])
            elif attr.required:
                raise TypeError(f"{op_type}: required attribute {attr.name!r} ({attr.kind}) is not given")
            else:
                values[attr.name] = copy.deepcopy(attr.default)
        for sub in record.subgraphs:
            given = (subgraphs or {}).get(sub.name)
            ok = isinstance(given, Graph) if not sub.dynamic else all(isinstance(g, Graph) for g in given or [None])
            if not ok:
                raise TypeError(f"{op_type}: subgraph {sub.name!r} must be a Graph" + (" list" if sub.dynamic else ""))
            values[sub.name] = given
        dynamic = record.dynamic_outputs
        if len(output_counts) != len(dynamic):
            raise TypeError(f"{op_type} has {len(dynamic)} dynamic outputs, got {len(output_counts)} counts")
        counts = iter(output_counts)
        out_groups = [int(next(counts)) if out.dynamic else 1 for out in record.outputs]
        if not all(0 <= n <= MAX_COUNT for n in out_groups):
            raise ValueError(f"{op_type}: an output count of {out_groups} is not between 0 and {MAX_COUNT}")
        if op_type == _ops.ASSIGN:
            return [self.assign(flat[0], flat[1], name=name)]
        if op_type == _ops.SUMMARY:
            self.summary(name or self._auto_name(op_type), flat[0])
            return []
        if op_type == _ops.SAVE:
            self.save(flat, name=name)
            return []
        name = name or self._auto_name(op_type)
        total = sum(out_groups)
        outs = [name] if total == 1 else [f"{name}:{i}" for i in range(total)]
        self._claim(name, outs)
        self.nodes.append(Node(name, op_type, flat, outs, values, _ops.GE_DOMAIN, tuple(groups), tuple(out_groups)))
        result: list[Any] = []
        tensors = iter(Tensor(out, self) for out in outs)
        for out, n in zip(record.outputs, out_groups, strict=True):
            part = [next(tensors) for _ in range(n)]
            result.append(part if out.dynamic else part[0])
        return result

    def producer(self, tensor: TensorLike) -> Node:
        """The node that produces ``tensor``; ``KeyError`` if none does."""
        wanted = self._names([tensor])[0]
        for node in self.nodes:
            if wanted in node.outputs:
                return node
        raise KeyError(f"no node of graph {self.name!r} produces {wanted!r}")

    def add_control(self, target: str, sources: Sequence[str]) -> None:
        """Control edges from the nodes ``sources`` to node ``target`` (kept for dumps)."""
        node = self.node(target)
        for source in sources:
            self.node(source)
            if source not in node.control:
                node.control = (*node.control, source)

    def set_desc(
        self, tensor: TensorLike, *, dtype: Any = None, shape: Sequence[int] | None = None, format: int | None = None
    ) -> None:
        """Change what a tensor is declared as: a Data input takes the dtype and shape; any node keeps the
        format (GE ``Format`` number) under ``_output_format``, and NPU storage formats fail the build."""
        node = self.producer(tensor)
        if node.type == _ops.DATA:
            if dtype is not None:
                node.attrs["dtype"] = _checked_dtype(dtype, f"Data {node.name!r}")
            if shape is not None:
                node.attrs["shape"] = tuple(None if d == -1 else int(d) for d in shape)
            if format is not None:
                node.attrs["format"] = int(format)
        elif format is not None:
            node.attrs["_output_format"] = int(format)

    # ----- reading -----

    @classmethod
    def from_onnx(cls, model: str | Path | onnx.ModelProto, name: str | None = None) -> Graph:
        """A graph from an ONNX model: inputs become Data (index = position), initializers Const.

        Nodes of domain ``openacl.ge`` with types ``Summary``, ``Save``, ``Variable`` and ``Assign`` are GE nodes
        (a Variable's name is its node name, its optional ``value`` attribute the initial value), so other
        tools can write such graphs.
        """
        if not isinstance(model, onnx.ModelProto):
            model = onnx.load(str(model))
        src = model.graph
        opset = {o.domain: o.version for o in model.opset_import if o.domain != GE_DOMAIN}
        graph = cls(name or src.name or "graph", opset=opset)
        graph.ir_version = model.ir_version
        rename: dict[str, str] = {}

        def ref(tensor: str) -> str:
            return rename.get(tensor, tensor)

        initializers = {init.name for init in src.initializer}
        for init in src.initializer:
            graph.const(init.name, numpy_helper.to_array(init))
        index = 0
        for value_info in src.input:
            if value_info.name in initializers:
                continue
            elem, dims = _type_of(value_info)
            graph.data(value_info.name, index=index, shape=dims, dtype=dtypes.numpy_from_onnx(elem))
            index += 1
        for node in src.node:
            if node.domain == GE_DOMAIN:
                _ops.spec(node.op_type)
                graph._read_ge_node(node, ref, rename)
                continue
            attrs = {a.name: a for a in node.attribute}
            name = node.name or graph._auto_name(node.op_type)
            graph._claim(name, list(node.output))
            graph.nodes.append(
                Node(name, node.op_type, [ref(i) for i in node.input], list(node.output), attrs, node.domain)
            )
        graph.outputs = [ref(o.name) for o in src.output]
        return graph

    def _read_ge_node(self, node: onnx.NodeProto, ref: Any, rename: dict[str, str]) -> None:
        kind = node.op_type
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if kind not in _ops.GE_TYPES:
            self._read_ir_node(node, attrs, ref)
            return
        if kind == _ops.VARIABLE:
            var_name = node.name or node.output[0]
            value = attrs.get("value")
            tensor = self.variable(var_name, None if value is None else numpy_helper.to_array(value))
            for out in node.output:
                rename[out] = tensor.name
        elif kind == _ops.ASSIGN:
            self.assign(ref(node.input[0]), ref(node.input[1]), name=node.output[0] if node.output else node.name)
        elif kind == _ops.SUMMARY:
            name = node.name or self._auto_name("Summary")
            self._claim(name, [])
            self.nodes.append(Node(name, _ops.SUMMARY, [ref(i) for i in node.input], []))
        elif kind == _ops.SAVE:
            self.save([ref(i) for i in node.input], name=node.name or None)

    def _read_ir_node(self, node: onnx.NodeProto, attrs: dict[str, Any], ref: Any) -> None:
        """A GE IR operator of a model file: a dynamic input or output takes what the fixed ones leave."""
        record = _ops.spec(node.op_type)
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        inputs = [ref(i) for i in node.input]
        fixed = sum(1 for spec in record.inputs if spec.kind != "dynamic")
        groups, pos = [], 0
        for spec in record.inputs:
            n = len(inputs) - fixed if spec.kind == "dynamic" else (1 if pos < len(inputs) and inputs[pos] else 0)
            groups.append(max(n, 0))
            pos += max(n, 1) if spec.kind != "dynamic" else max(n, 0)
        fixed_out = sum(1 for o in record.outputs if not o.dynamic)
        out_groups = tuple(len(node.output) - fixed_out if o.dynamic else 1 for o in record.outputs)
        name = node.name or self._auto_name(node.op_type)
        self._claim(name, list(node.output))
        self.nodes.append(
            Node(
                name,
                node.op_type,
                [i for i in inputs if i],
                list(node.output),
                attrs,
                _ops.GE_DOMAIN,
                tuple(groups),
                out_groups,
            )
        )

    # ----- editing (GE's Graph::AddDataEdge, RemoveEdge, RemoveNode, ...) -----

    def add_data_edge(self, src: str, src_port: int, dst: str, dst_port: int) -> None:
        """Output ``src_port`` of ``src`` feeds input ``dst_port`` of ``dst``, which must exist and be free
        (``ValueError`` otherwise: GE's inputs are declared by the op, not made by edges)."""
        source, target = self.node(src), self.node(dst)
        if not 0 <= src_port < len(source.outputs) or not 0 <= dst_port < len(target.inputs):
            raise ValueError(f"no output {src_port} of {src!r} or no input {dst_port} of {dst!r}")
        if target.inputs[dst_port] != UNCONNECTED:
            raise ValueError(f"input {dst_port} of {dst!r} is already connected")
        target.inputs[dst_port] = source.outputs[src_port]
        self._sync_outputs()

    def add_control_edge(self, src: str, dst: str) -> None:
        self.add_control(dst, [src])

    def remove_edge(self, src: str, src_port: int, dst: str, dst_port: int) -> None:
        """Remove a data edge, or with both ports -1 the control edge ``src`` -> ``dst``; ``ValueError`` if there
        is no such edge."""
        source, target = self.node(src), self.node(dst)
        if src_port == -1 and dst_port == -1:
            if src not in target.control:
                raise ValueError(f"no control edge {src!r} -> {dst!r}")
            target.control = tuple(c for c in target.control if c != src)
            return
        if not 0 <= src_port < len(source.outputs) or not 0 <= dst_port < len(target.inputs):
            raise ValueError(f"no output {src_port} of {src!r} or no input {dst_port} of {dst!r}")
        if target.inputs[dst_port] != source.outputs[src_port]:
            raise ValueError(f"no data edge {src!r}:{src_port} -> {dst!r}:{dst_port}")
        target.inputs[dst_port] = UNCONNECTED
        self._sync_outputs()

    def remove_node(self, name: str) -> None:
        """Remove a node with its edges: inputs it fed become unconnected, graph outputs it made are dropped."""
        node = self.node(name)
        gone = set(node.outputs)
        self.nodes.remove(node)
        self._node_names.discard(name)
        self._tensors.difference_update(gone)
        for other in self.nodes:
            other.inputs = [UNCONNECTED if t in gone else t for t in other.inputs]
            other.control = tuple(c for c in other.control if c != name)
        self.outputs = [] if node.type == _ops.NET_OUTPUT else [t for t in self.outputs if t not in gone]
        self._variables = {k: v for k, v in self._variables.items() if v.name not in gone}
        self._sync_outputs()

    def add_subgraph(self, subgraph: Graph) -> None:
        """``ValueError`` if a graph of that name is already nested here."""
        from_nodes = [g.name for g in self.subgraphs] + [g.name for node in self.nodes for g in _graphs_of(node)]
        if subgraph.name in from_nodes or subgraph is self:
            raise ValueError(f"graph {self.name!r} already has a subgraph named {subgraph.name!r}")
        self.subgraphs.append(subgraph)

    def remove_subgraph(self, name: str) -> None:
        """Remove a graph added by :meth:`add_subgraph`; ``KeyError`` if none has that name."""
        for sub in self.subgraphs:
            if sub.name == name:
                self.subgraphs.remove(sub)
                return
        raise KeyError(f"graph {self.name!r} has no added subgraph {name!r}")

    def port_desc(self, name: str, side: str, index: int) -> PortDesc:
        """The desc of input/output ``index`` (``side`` "input" or "output") of node ``name``: a Data node's from
        its attributes, a Const's from its value, a connected input's from its producer, else one set by
        :meth:`set_port_desc`, else GE's empty desc. ``IndexError`` for a port the node lacks."""
        node = self.node(name)
        ports = node.inputs if side == "input" else node.outputs
        if not 0 <= index < max(len(ports), 1 if node.type == _ops.DATA else 0):
            raise IndexError(f"node {name!r} has no {side} {index}")
        if (side, index) in node.port_descs:
            return node.port_descs[side, index]
        if node.type == _ops.DATA:
            attrs = node.attrs
            shape = tuple(-1 if d is None else d for d in attrs["shape"] or ())
            return PortDesc(shape, attrs.get("format", FORMAT_ND), dtypes.ge_from_numpy(attrs["dtype"]))
        if node.type == _ops.CONST and side == "output" and "value" in node.attrs:
            value = node.attrs["value"]
            return PortDesc(tuple(value.shape), FORMAT_ND, dtypes.ge_from_numpy(value.dtype))
        if side == "input" and ports[index] != UNCONNECTED:
            producer = self.producer(ports[index])
            return self.port_desc(producer.name, "output", producer.outputs.index(ports[index]))
        return PortDesc()

    def set_port_desc(self, name: str, side: str, index: int, desc: PortDesc) -> None:
        """Set a port's desc; on a Data node it is the input's declared shape, dtype and format (``ValueError`` for
        a data type numpy cannot hold)."""
        self.port_desc(name, side, index)  # IndexError for a missing port
        node = self.node(name)
        if node.type == _ops.DATA:
            try:
                dtype = dtypes.numpy_from_ge(desc.dtype)
            except KeyError:
                raise ValueError(f"Data {name!r}: GE data type {desc.dtype} has no CPU equivalent") from None
            self.set_desc(node.outputs[0], dtype=dtype, shape=list(desc.shape), format=desc.format)
            return
        node.port_descs[side, index] = desc

    def set_port_attr(self, name: str, side: str, index: int, key: str, value: Any) -> None:
        self.port_desc(name, side, index)  # IndexError for a missing port
        self.node(name).port_attrs.setdefault((side, index), {})[key] = value

    def port_attr(self, name: str, side: str, index: int, key: str) -> Any:
        """An attribute of a port; ``KeyError`` if it has none of that name, ``IndexError`` for a missing port."""
        self.port_desc(name, side, index)
        return self.node(name).port_attrs.get((side, index), {})[key]

    # ----- helpers -----

    def node(self, name: str) -> Node:
        """The node called ``name``; ``KeyError`` lists the names that exist."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node {name!r} in graph {self.name!r}; nodes: {[n.name for n in self.nodes]}")

    def copy(self) -> Graph:
        """A snapshot: later changes to either graph do not reach the other (AddGraph copies the graph)."""
        other = Graph(self.name, opset=self.opset)
        other.ir_version = self.ir_version
        other.attrs = dict(self.attrs)
        other.nodes = [n.copy() for n in self.nodes]
        other.outputs = list(self.outputs)
        other._node_names = set(self._node_names)
        other._tensors = set(self._tensors)
        other._variables = {k: Tensor(v.name, other) for k, v in self._variables.items()}
        other._auto = self._auto
        other.subgraphs = list(self.subgraphs)
        return other

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {len(self.nodes)} nodes, outputs={self.outputs})"

    def _adopt(self, node: Node) -> None:
        """Append a node made elsewhere (a graph read from a file), keeping this graph's name rules."""
        self._claim(node.name, node.outputs)
        self.nodes.append(node)
        if node.type == _ops.VARIABLE:
            self._variables[node.name] = Tensor(node.outputs[0], self)

    def _add(self, name: str, kind: str, inputs: list[str], attrs: dict[str, Any]) -> Tensor:
        self._claim(name, [name])
        self.nodes.append(Node(name, kind, inputs, [name], attrs))
        return Tensor(name, self)

    def _claim(self, name: str, outputs: Iterable[str]) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"graph {self.name!r}: a node needs a non-empty str name, got {name!r}")
        if name in self._node_names:
            raise ValueError(f"graph {self.name!r} already has a node named {name!r}")
        outputs = list(outputs)
        for out in outputs:
            if out in self._tensors:
                raise ValueError(f"graph {self.name!r} already has a tensor named {out!r}")
        self._node_names.add(name)
        self._tensors.update(outputs)

    def _names(self, tensors: Iterable[TensorLike]) -> list[str]:
        if isinstance(tensors, Tensor | str):
            raise TypeError("expected a list of tensors")
        names = []
        for tensor in tensors:
            if isinstance(tensor, Tensor):
                if tensor.graph is not self:
                    raise ValueError(
                        f"tensor {tensor.name!r} belongs to graph {tensor.graph.name!r}, not {self.name!r}"
                    )
                names.append(tensor.name)
            elif isinstance(tensor, str):
                names.append(tensor)
            else:
                raise TypeError(f"expected a Tensor or a tensor name, got {type(tensor).__name__}")
        return names

    def new_name(self, kind: str) -> str:
        """A fresh node name ``<kind>_<n>``, n from 0; one counter per graph (GE's ES builder names nodes so)."""
        return self._auto_name(kind)

    def _auto_name(self, kind: str) -> str:
        while True:
            name = f"{kind}_{self._auto}"
            self._auto += 1
            if name not in self._node_names and name not in self._tensors:
                return name


def _graphs_of(node: Node) -> list[Graph]:
    """The graphs a node holds as attributes (If/While branches)."""
    found = []
    for value in node.attrs.values():
        found += [g for g in (value if isinstance(value, list) else [value]) if isinstance(g, Graph)]
    return found


def _checked_dtype(dtype: Any, what: str) -> np.dtype:
    np_dtype = np.dtype(dtype)
    try:
        dtypes.onnx_from_numpy(np_dtype)
    except KeyError:
        raise ValueError(f"{what}: dtype {np_dtype} has no ONNX equivalent") from None
    return np_dtype


def _type_of(value_info: onnx.ValueInfoProto) -> tuple[int, list[int | None]]:
    tensor_type = value_info.type.tensor_type
    dims: list[int | None] = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
    return tensor_type.elem_type, dims
