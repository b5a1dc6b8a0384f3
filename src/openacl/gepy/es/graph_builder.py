"""``ge.es.graph_builder``: the Eager-Style ``GraphBuilder``, its scopes, and how TensorLike literals become tensors.

A builder fills an engine graph (:class:`openacl.graph_engine.graph.Graph`) node by node; ``build_and_reset``
hands it to a ``ge.graph.Graph`` and closes the builder. :func:`apply_op` is the one path every op function and operator
overload takes into the engine.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from openacl import dtypes
from openacl.errors import GeError as EngineError
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.error import from_engine
from openacl.gepy.es._scopes import attr_scope, control_dependency_scope, current_attrs, current_controls
from openacl.gepy.es.tensor_holder import TensorHolder
from openacl.gepy.graph.graph import Graph
from openacl.gepy.graph.types import DataType, Format
from openacl.graph_engine.graph import MAX_COUNT
from openacl.graph_engine.graph import Graph as EngineGraph

__all__ = [
    "GraphBuilder",
    "InputType",
    "TensorHolder",
    "apply_op",
    "attr_scope",
    "control_dependency_scope",
    "convert_to_tensor_holder",
    "flatten_and_infer_shape",
    "resolve_builder",
]

_UINT32_MAX = 2**32 - 1
_LEAF_ERROR = "Value must be int/float or nested lists of int|float"


class InputType(enum.StrEnum):
    DATA = "Data"
    REF_DATA = "RefData"
    AIPP_DATA = "AippData"
    ANY_DATA = "AnyData"


class GraphBuilder:
    """``GraphBuilder(name=None)``: builds one graph (named ``"graph"`` by default)."""

    _handle = OpaqueHandle()

    def __init__(self, name: str | None = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError("Graph name must be a string")
        self._graph = EngineGraph(name or "graph")
        self._outputs: dict[int, TensorHolder] = {}
        self._built = False

    @property
    def name(self) -> str:
        return self._graph.name

    def _check_open(self, what: str) -> None:
        if self._built:
            raise RuntimeError(
                f"Cannot {what}: GraphBuilder has already been built. Create a new GraphBuilder to build another graph"
            )

    def _scoped(self, node: str) -> None:
        """The current scopes' attributes and control edges on a node just made."""
        attrs = current_attrs()
        if attrs:
            self._graph.node(node).attrs.update(attrs)
        controls = [t.name for t in current_controls() if isinstance(t, TensorHolder) and t._builder is self]
        if controls:
            self._graph.add_control(node, controls)

    def _holder(self, tensor: Any) -> TensorHolder:
        self._scoped(tensor.name)
        return TensorHolder._wrap(self, tensor, tensor.name)

    # ----- inputs, constants, variables -----

    def create_input(
        self,
        index: int,
        *,
        name: str | None = None,
        type_str: InputType | str = InputType.DATA,
        data_type: DataType = DataType.DT_FLOAT,
        format: Format = Format.FORMAT_ND,
        shape: list[int] | None = None,
    ) -> TensorHolder:
        """A Data node; ``shape=None`` (or ``[]``) is 0-dim, whose real shape the first run's input gives."""
        self._check_open("create_input")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise TypeError("Input index must be an integer >= 0")
        if not isinstance(data_type, DataType):
            raise TypeError("Data type must be a DataType")
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format")
        if shape is not None and (not isinstance(shape, list) or not all(isinstance(d, int) for d in shape)):
            raise TypeError("Shape must be a list of integers")
        if str(getattr(type_str, "value", type_str)) != InputType.DATA.value:
            raise RuntimeError(f"Failed to create input: openacl builds only {InputType.DATA.value} inputs")
        dims = shape if shape else None
        tensor = self._graph.data(
            name or f"input_{index}", index=index, shape=dims, dtype=_numpy(data_type), format=int(format)
        )
        return self._holder(tensor)

    def create_inputs(self, num: int, start_index: int = 0) -> list[TensorHolder]:
        if not isinstance(num, int) or num <= 0:
            raise TypeError("Number of inputs must be a positive integer")
        if num > MAX_COUNT:
            raise ValueError(f"num {num} is more inputs than one call creates ({MAX_COUNT})")
        if not isinstance(start_index, int) or start_index < 0:
            raise TypeError("Start index must be a non-negative integer")
        return [self.create_input(i) for i in range(start_index, start_index + num)]

    def _const(self, array: np.ndarray) -> TensorHolder:
        self._check_open("create a const")
        return self._holder(self._graph.const(self._graph.new_name("Const"), array))

    def _const_list(
        self, value: Any, shape: list[int] | None, dtype: Any, ints: bool, scalar: bool = False
    ) -> TensorHolder:
        """A Const of ``value`` (one number, or a flat list filling ``shape``); ``scalar`` takes one number only."""
        if isinstance(value, list) and not scalar:
            items = value
            dims = list(shape) if shape is not None else [len(items)]
        else:
            items = [value]
            dims = list(shape) if shape is not None else []
        for item in items:
            if ints and (not isinstance(item, int) or isinstance(item, bool)):
                raise TypeError(
                    "Value must be an integer" if scalar else "Value must be an integer or list of integers"
                )
            if not ints and (not isinstance(item, int | float) or isinstance(item, bool)):
                raise TypeError("Value must be a float" if scalar else "Value must be a float or list of floats")
        if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
            raise TypeError("Shape must be a list of integers")
        if int(np.prod(dims)) != len(items):
            raise ValueError(f"Value count ({len(items)}) doesn't match shape {dims}")
        if ints:
            dtypes.check_ints(items, dtype)
        else:
            items = dtypes.as_floats(items)
        return self._const(np.array(items, dtype=dtype).reshape(dims))

    def create_const_int64(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        return self._const_list(value, shape, np.int64, True)

    def create_const_int32(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        return self._const_list(value, shape, np.int32, True)

    def create_const_uint64(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        return self._const_list(_unsigned(value, 2**64 - 1), shape, np.uint64, True)

    def create_const_uint32(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        return self._const_list(_unsigned(value, _UINT32_MAX), shape, np.uint32, True)

    def create_const_float(self, value: float | list[float], shape: list[int] | None = None) -> TensorHolder:
        return self._const_list(value, shape, np.float32, False)

    def create_vector_int64(self, value: list[int]) -> TensorHolder:
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise TypeError("Value must be a list of integers")
        return self._const_list(value, [len(value)], np.int64, True)

    def create_scalar_int64(self, value: int) -> TensorHolder:
        return self._const_list(value, [], np.int64, True, scalar=True)

    def create_scalar_int32(self, value: int) -> TensorHolder:
        return self._const_list(value, [], np.int32, True, scalar=True)

    def create_scalar_uint64(self, value: int) -> TensorHolder:
        return self._const_list(_unsigned(value, 2**64 - 1), [], np.uint64, True, scalar=True)

    def create_scalar_uint32(self, value: int) -> TensorHolder:
        return self._const_list(_unsigned(value, _UINT32_MAX), [], np.uint32, True, scalar=True)

    def create_scalar_float(self, value: float) -> TensorHolder:
        return self._const_list(value, [], np.float32, False, scalar=True)

    def create_variable(self, index: int, name: str) -> TensorHolder:
        """A ``Variable`` named ``name``: session state shared by name across the session's graphs. Its first
        value comes from a graph that assigns it (an init graph: ``Assign(var, value)``)."""
        self._check_open("create_variable")
        if not isinstance(index, int):
            raise TypeError("Index must be an integer")
        if not isinstance(name, str):
            raise TypeError("Name must be a string")
        tensor = self._graph.variable(name)
        self._graph.node(tensor.name).attrs["index"] = index
        return self._holder(tensor)

    # ----- outputs and attributes -----

    def set_graph_output(self, tensor: TensorHolder, output_index: int) -> None:
        self._check_open("set_graph_output")
        if not isinstance(tensor, TensorHolder):
            raise TypeError("Tensor must be a TensorHolder")
        if not isinstance(output_index, int):
            raise TypeError("Output index must be an integer")
        if tensor._builder is not self:
            raise ValueError("the tensor belongs to another GraphBuilder")
        if output_index < 0 or output_index in self._outputs:
            raise RuntimeError(f"Failed to set graph output {output_index}: negative or already set")
        tensor._engine_tensor()
        self._outputs[output_index] = tensor

    def set_graph_attr_int64(self, name: str, value: int) -> None:
        self._set_graph_attr(name, value, int)

    def set_graph_attr_string(self, name: str, value: str) -> None:
        self._set_graph_attr(name, value, str)

    def set_graph_attr_bool(self, name: str, value: bool) -> None:
        self._set_graph_attr(name, value, bool)

    def _set_graph_attr(self, name: str, value: Any, kind: type) -> None:
        self._check_open("set a graph attribute")
        _check_attr(name, value, kind)
        self._graph.attrs[name] = value

    def set_node_attr_int64(self, tensor: TensorHolder, name: str, value: int) -> None:
        self._set_node_attr(tensor, name, value, int)

    def set_node_attr_string(self, tensor: TensorHolder, name: str, value: str) -> None:
        self._set_node_attr(tensor, name, value, str)

    def set_node_attr_bool(self, tensor: TensorHolder, name: str, value: bool) -> None:
        self._set_node_attr(tensor, name, value, bool)

    def set_tensor_attr_int64(self, tensor: TensorHolder, name: str, value: int) -> None:
        self._set_tensor_attr(tensor, name, value, int)

    def set_tensor_attr_string(self, tensor: TensorHolder, name: str, value: str) -> None:
        self._set_tensor_attr(tensor, name, value, str)

    def set_tensor_attr_bool(self, tensor: TensorHolder, name: str, value: bool) -> None:
        self._set_tensor_attr(tensor, name, value, bool)

    def _set_tensor_attr(self, tensor: TensorHolder, name: str, value: Any, kind: type) -> None:
        """An attribute of the tensor itself (GE: the producer's output desc), read by ``Node.get_output_attr``."""
        self._check_open("set a tensor attribute")
        if not isinstance(tensor, TensorHolder):
            raise TypeError("Tensor must be a TensorHolder")
        _check_attr(name, value, kind)
        node = self._graph.node(tensor.name)
        port = node.outputs.index(tensor._engine_tensor().name)
        self._graph.set_port_attr(node.name, "output", port, name, value)

    def _set_node_attr(self, tensor: TensorHolder, name: str, value: Any, kind: type) -> None:
        self._check_open("set a node attribute")
        if not isinstance(tensor, TensorHolder):
            raise TypeError("Tensor must be a TensorHolder")
        _check_attr(name, value, kind)
        self._graph.node(tensor.name).attrs[name] = value

    def add_control_dependency(self, dst_tensor: TensorHolder, src_tensors: list[TensorHolder]) -> None:
        self._check_open("add_control_dependency")
        if not isinstance(dst_tensor, TensorHolder) or not isinstance(src_tensors, list):
            raise TypeError("add_control_dependency takes a TensorHolder and a list of TensorHolder")
        self._graph.add_control(dst_tensor.name, [t.name for t in src_tensors])

    def build_and_reset(self, outputs: list[TensorHolder] | None = None) -> Graph:
        """The graph, with outputs in index order (``outputs`` sets indexes 0..n-1 first); the builder closes.

        RuntimeError("Failed to build graph") when input or output indexes do not run 0, 1, 2, ...
        """
        self._check_open("build_and_reset")
        if outputs is not None:
            if not isinstance(outputs, list):
                raise TypeError("Outputs must be a list")
            if not all(isinstance(t, TensorHolder) for t in outputs):  # all checked before any is set
                raise TypeError("All outputs must be TensorHolder objects")
            for i, tensor in enumerate(outputs):
                self.set_graph_output(tensor, i)
        indexes = sorted(n.attrs["index"] for n in self._graph.nodes if n.type == "Data" and not n.domain)
        if indexes != list(range(len(indexes))) or sorted(self._outputs) != list(range(len(self._outputs))):
            raise RuntimeError("Failed to build graph: input and output indexes must run 0, 1, 2, ...")
        self._graph.set_outputs([self._outputs[i]._engine_tensor() for i in sorted(self._outputs)])
        try:
            self._graph.add_net_output()  # GE's builder ends the graph with NetOutput_<graph name>
        except ValueError as exc:  # a node of the user's already has that name
            raise RuntimeError(f"Failed to build graph: {exc}") from None
        self._built = True
        return Graph._wrap(self._graph)

    def __copy__(self) -> None:
        raise RuntimeError("GraphBuilder does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("GraphBuilder does not support deepcopy")

    # ----- operators -----

    def _binary(self, op_type: str, left: Any, right: Any) -> TensorHolder:
        for side in (left, right):
            if isinstance(side, TensorHolder) and side._builder is not self:
                raise ValueError(f"Cannot perform {op_type.lower()}: tensors from different GraphBuilders")
        return apply_op(self, op_type, [convert_to_tensor_holder(left, self), convert_to_tensor_holder(right, self)])[0]


def apply_op(
    builder: GraphBuilder,
    op_type: str,
    inputs: Sequence[Any],
    attrs: Mapping[str, Any] | None = None,
    *,
    output_counts: Sequence[int] = (),
    subgraphs: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> list[Any]:
    """One op node through the engine (``Graph.ge_op``); returns one TensorHolder (or list) per IR output, or for
    an op without outputs a single output-less TensorHolder naming the node."""
    builder._check_open(op_type)
    engine_inputs = []
    for given in inputs:
        if isinstance(given, list):
            engine_inputs.append([_engine(builder, t) for t in given])
        else:
            engine_inputs.append(None if given is None else _engine(builder, given))
    engine_subgraphs = {}
    for key, value in (subgraphs or {}).items():
        engine_subgraphs[key] = [g._graph for g in value] if isinstance(value, list) else value._graph
    graph = builder._graph
    before = len(graph.nodes)
    try:
        outputs = graph.ge_op(
            op_type,
            engine_inputs,
            dict(attrs or {}),
            name=name,
            output_counts=output_counts,
            subgraphs=engine_subgraphs,
        )
    except EngineError as exc:
        raise from_engine(exc, op_type) from None
    node = graph.nodes[-1].name if len(graph.nodes) > before else name or op_type
    builder._scoped(node)
    wrapped: list[Any] = []
    for out in outputs:
        if isinstance(out, list):
            wrapped.append([TensorHolder._wrap(builder, t, node) for t in out])
        else:
            wrapped.append(TensorHolder._wrap(builder, out, node))
    return wrapped or [TensorHolder._wrap(builder, None, node)]


def _engine(builder: GraphBuilder, value: Any) -> Any:
    if not isinstance(value, TensorHolder):
        raise TypeError(f"expected a TensorHolder, got {type(value).__name__}")
    if value._builder is not builder:
        raise ValueError("all inputs must come from the same GraphBuilder")
    return value._engine_tensor()


def convert_to_tensor_holder(value: Any, builder: GraphBuilder) -> TensorHolder | None:
    """A TensorLike as a tensor of ``builder``: int -> int64 scalar, float -> float32 scalar (bool is an int),
    nested lists -> a const (float32 if any leaf is a float, else int64; ValueError if ragged)."""
    if value is None or isinstance(value, TensorHolder):
        return value
    if isinstance(value, bool | int):
        return builder.create_scalar_int64(int(value))
    if isinstance(value, float):
        return builder.create_scalar_float(value)
    if isinstance(value, list):
        flat, shape = flatten_and_infer_shape(value)
        if any(isinstance(v, float) for v in flat):
            return builder.create_const_float(dtypes.as_floats(flat), shape=shape)
        return builder.create_const_int64([int(v) for v in flat], shape=shape)
    raise TypeError(_LEAF_ERROR)


def resolve_builder(*values: Any) -> GraphBuilder:
    """The first GraphBuilder among ``values``, else the builder of the first TensorHolder; ValueError if none."""
    for value in values:
        if isinstance(value, GraphBuilder):
            return value
    for value in values:
        if isinstance(value, TensorHolder):
            return value.get_owner_builder()
        if isinstance(value, list):
            for item in value:
                if isinstance(item, TensorHolder):
                    return item.get_owner_builder()
    raise ValueError("Please ensure at least one input tensor or an explicit owner_builder is provided when supported")


def flatten_and_infer_shape(value: list[Any]) -> tuple[list[Any], list[int]]:
    """A nested list of ints/floats -> (its leaves in row-major order, its shape); ``[]`` is shape ``[0]``.
    ValueError for a ragged list, TypeError for a leaf that is not a number or an empty inner list."""
    if not value:
        return [], [0]
    if all(isinstance(v, list) for v in value):
        if any(not v for v in value):
            raise TypeError(_LEAF_ERROR)
        parts = [flatten_and_infer_shape(v) for v in value]
        inner = parts[0][1]
        if any(p[1] != inner for p in parts):
            raise ValueError("Irregular nested list: all sub-lists must have the same shape")
        return [x for p in parts for x in p[0]], [len(value), *inner]
    if any(isinstance(v, list) for v in value):
        raise ValueError("Irregular nested list: all sub-lists must have the same shape")
    for v in value:
        if not isinstance(v, int | float):
            raise TypeError(_LEAF_ERROR)
    return list(value), [len(value)]


def _numpy(data_type: DataType) -> np.dtype:
    try:
        return dtypes.numpy_from_ge(data_type)
    except KeyError:
        raise RuntimeError(f"Failed to create input: data type {data_type.name} has no CPU equivalent") from None


def _unsigned(value: Any, limit: int) -> Any:
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, int) and not 0 <= item <= limit:
            if limit == _UINT32_MAX:
                raise ValueError(f"Value must be in range [0, {limit}], got {item}")
            raise ValueError(f"Value must be non-negative and at most {limit}, got {item}")
    return value


def _check_attr(name: Any, value: Any, kind: type) -> None:
    """A builder attribute: a str name and a value of exactly ``kind`` (True is not an int here)."""
    if not isinstance(name, str):
        raise TypeError("Attribute name must be a string")
    if type(value) is not kind:
        raise TypeError(f"Value must be {_KIND_NAMES[kind]}")
    if kind is int:
        dtypes.check_ints([value], np.int64)  # GE's int attributes are int64


_KIND_NAMES = {int: "an integer", str: "a string", bool: "a boolean"}
