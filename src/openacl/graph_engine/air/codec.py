"""An engine :class:`Graph` as GE's ``ModelDef`` and back: what an AIR file holds.

Written as GE's ``ModelSerialize`` writes a graph: ``graph[0]`` is the graph, then every subgraph, depth first; an
op's ``input`` lists ``<node>:<port>`` per data input ("" for an unconnected one), then ``<node>:-1`` per control
edge; each input and output has a ``TensorDescriptor`` (GE data type, dims, format name as ``layout``); a Data
node keeps its ``index`` attribute and its declaration in its descs; a Const its ``value`` as a ``TensorDef``; an
op holding subgraphs names them in ``subgraph_name``, in the order of its IR's subgraphs; the graph's outputs feed
a ``NetOutput_<graph name>`` node, as in the graph GE builds. What openacl needs beyond GE's fields to read its
own file back rides in attributes whose names start with ``_openacl_`` (GE keeps such private attributes as they
are).

Reading accepts what GE writes: a type of the op table becomes that op; any other type is kept as a GE node
(a build of the graph then says the type is unknown); a NetOutput node stays a node and gives the graph's
outputs.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from openacl import dtypes
from openacl.atomicfile import replacing
from openacl.graph_engine import _ops
from openacl.graph_engine.air import schema
from openacl.graph_engine.graph import UNCONNECTED, Graph, Node, PortDesc
from openacl.graph_engine.graph_dump import subgraphs, with_net_output

__all__ = ["NET_OUTPUT", "from_model_def", "load", "save", "to_model_def"]

NET_OUTPUT = _ops.NET_OUTPUT
#: GE's dims of a tensor whose rank is unknown (a Data node whose shape the first run gives).
UNKNOWN_RANK = (-2,)
_GROUPS, _OUT_GROUPS, _DOMAIN = "_openacl_input_groups", "_openacl_output_groups", "_openacl_domain"
_LIST = schema.AttrDef.ListValue
_STRING, _INT, _FLOAT, _BOOL = _LIST.VT_LIST_STRING, _LIST.VT_LIST_INT, _LIST.VT_LIST_FLOAT, _LIST.VT_LIST_BOOL


def save(graph: Graph, path: str | os.PathLike[str]) -> None:
    """Write ``graph`` to ``path`` (its directory is made if missing), complete or absent. ``ValueError`` for a
    value GE's protobuf cannot hold, ``OSError`` for the file."""
    data = to_model_def(graph).SerializeToString(deterministic=True)  # maps sorted: same graph, same bytes
    directory = os.path.dirname(os.path.abspath(os.fspath(path)))
    os.makedirs(directory, exist_ok=True)
    with replacing(path, "wb") as out:
        out.write(data)


def load(path: str | os.PathLike[str]) -> Graph:
    """The graph of an AIR file; ``ValueError`` for bytes that are not a ``ModelDef`` of a graph, ``OSError``
    for the file."""
    with open(path, "rb") as f:
        data = f.read()
    model = schema.ModelDef()
    try:
        model.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError and friends: the file is not a ModelDef
        raise ValueError(f"{os.fspath(path)!r} is not a GE ModelDef: {exc}") from None
    return from_model_def(model)


# ----- writing -----


def to_model_def(graph: Graph) -> Any:
    model = schema.ModelDef(name=graph.name)
    for each in [graph, *subgraphs(graph)]:
        _graph_def(each, model.graph.add())
    return model


def _graph_def(graph: Graph, out: Any) -> None:
    out.name = graph.name
    data = sorted((n for n in graph.nodes if n.type == _ops.DATA), key=lambda n: n.attrs["index"])
    out.input.extend(f"{n.name}:0" for n in data)
    ports = {t: f"{n.name}:{i}" for n in graph.nodes for i, t in enumerate(n.outputs)}
    out.output.extend(ports[t] for t in graph.outputs)
    _attrs(graph.attrs, out.attr)
    for node in with_net_output(graph):
        if node.type == NET_OUTPUT:
            _net_output_def(graph, node, ports, out.op.add())
        else:
            _op_def(graph, node, ports, out.op.add())


def _net_output_def(graph: Graph, node: Node, ports: dict[str, str], out: Any) -> None:
    """The NetOutput node: one input per graph output, each described as its producer's output."""
    out.name, out.type = node.name, NET_OUTPUT
    out.input.extend(ports.get(t, "") for t in node.inputs)
    out.input.extend(f"{c}:-1" for c in node.control)
    for t in node.inputs:
        desc = PortDesc()
        if t in ports:
            producer = graph.producer(t)
            desc = graph.port_desc(producer.name, "output", producer.outputs.index(t))
        _desc(desc, out.input_desc.add())


def _op_def(graph: Graph, node: Node, ports: dict[str, str], out: Any) -> None:
    out.name, out.type = node.name, node.type
    out.input.extend(ports.get(t, "") if t != UNCONNECTED else "" for t in node.inputs)
    out.input.extend(f"{c}:-1" for c in node.control)
    attrs = dict(node.attrs)
    if node.type == _ops.DATA:
        attrs = {"index": attrs["index"]}
    subgraph_keys = [k for k, v in attrs.items() if _graphs(v)]
    for key in subgraph_keys:
        out.subgraph_name.extend(g.name for g in _graphs(attrs.pop(key)))
    if node.groups:
        attrs[_GROUPS] = list(node.groups)
    if node.output_groups:
        attrs[_OUT_GROUPS] = list(node.output_groups)
    if node.domain not in ("", _ops.GE_DOMAIN):
        attrs[_DOMAIN] = node.domain
    _attrs(attrs, out.attr)
    n_inputs = 1 if node.type == _ops.DATA else len(node.inputs)
    for side, count, descs in (("input", n_inputs, out.input_desc), ("output", len(node.outputs), out.output_desc)):
        for index in range(count):
            desc = descs.add()
            _desc(graph.port_desc(node.name, side, index), desc)
            _attrs(node.port_attrs.get((side, index), {}), desc.attr)


def _graphs(value: Any) -> list[Graph]:
    items = value if isinstance(value, list) else [value]
    return items if items and all(isinstance(g, Graph) for g in items) else []


def _desc(desc: PortDesc, out: Any) -> None:
    out.dtype = dtypes.ge_ir_from_ge(desc.dtype)
    out.shape.dim.extend(desc.shape)
    out.layout = dtypes.GE_FORMATS[desc.format] if 0 <= desc.format < len(dtypes.GE_FORMATS) else "RESERVED"


def _attrs(values: dict[str, Any], out: Any) -> None:
    for key, value in values.items():
        _attr(key, value, out[key])


def _attr(key: str, value: Any, out: Any) -> None:
    """One value as GE's ``AttrDef``: str, bool, int, float, ndarray, and lists of them (a list of int lists is
    ``list_list_int``); ``ValueError`` for anything else."""
    if isinstance(value, schema.AttrDef):  # read from a file and kept as it was
        out.CopyFrom(value)
    elif isinstance(value, str):
        out.s = value.encode()
    elif isinstance(value, bool | np.bool_):
        out.b = bool(value)
    elif isinstance(value, int | np.integer):
        out.i = int(value)
    elif isinstance(value, float | np.floating):
        out.f = float(value)
    elif isinstance(value, np.ndarray):
        _tensor(value, out.t)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, list | tuple) for v in value):
        for row in value:
            out.list_list_int.list_list_i.add().list_i.extend(int(v) for v in row)
    elif isinstance(value, list | tuple):
        out.list.SetInParent()
        if all(isinstance(v, str) for v in value):
            out.list.s.extend(v.encode() for v in value)
            out.list.val_type = _STRING
        elif all(isinstance(v, bool | np.bool_) for v in value):
            out.list.b.extend(bool(v) for v in value)
            out.list.val_type = _BOOL
        elif all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
            out.list.i.extend(int(v) for v in value)
            out.list.val_type = _INT
        elif all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in value):
            out.list.f.extend(float(v) for v in value)
            out.list.val_type = _FLOAT
        else:
            raise ValueError(f"attribute {key!r}: GE's graph protobuf has no list of {value!r}")
    else:
        raise ValueError(f"attribute {key!r}: GE's graph protobuf has no value like {type(value).__name__}")


def _tensor(array: np.ndarray, out: Any) -> None:
    code = dtypes.ge_from_numpy(array.dtype)  # KeyError for an object array: not GE's
    _desc(PortDesc(tuple(array.shape), dtypes.GE_FORMATS.index("ND"), code), out.desc)
    out.data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


# ----- reading -----


def from_model_def(model: Any) -> Graph:
    if not model.graph:
        raise ValueError("the ModelDef holds no graph")
    graphs = {g.name: g for g in model.graph}
    return _graph(model.graph[0], graphs, {})


def _graph(graph_def: Any, graph_defs: dict[str, Any], made: dict[str, Graph]) -> Graph:
    graph = Graph(graph_def.name)
    made[graph.name] = graph
    graph.attrs.update({k: _value(v) for k, v in graph_def.attr.items()})
    outputs: list[str] = []
    nodes: list[Node] = []
    for op in graph_def.op:
        if op.type == NET_OUTPUT:
            outputs = [i for i in op.input if not i.endswith(":-1")]
        nodes.append(_node(op, graph_defs, made))
    names = {f"{n.name}:{i}": t for n in nodes for i, t in enumerate(n.outputs)}
    for node in nodes:
        node.inputs = [names.get(ref, UNCONNECTED) if ref else UNCONNECTED for ref in node.inputs]
        graph._adopt(node)
    if not outputs:
        outputs = list(graph_def.output)
    graph.set_outputs([names[ref] for ref in outputs if ref in names])
    return graph


def _node(op: Any, graph_defs: dict[str, Any], made: dict[str, Graph]) -> Node:
    attrs = {k: _value(v) for k, v in op.attr.items()}
    groups = tuple(attrs.pop(_GROUPS, ()))
    output_groups = tuple(attrs.pop(_OUT_GROUPS, ()))
    domain = attrs.pop(_DOMAIN, "" if op.type in _ops.GE_TYPES or op.type == NET_OUTPUT else _ops.GE_DOMAIN)
    data_inputs = [ref for ref in op.input if not ref.endswith(":-1")]
    control = tuple(ref.rsplit(":", 1)[0] for ref in op.input if ref.endswith(":-1"))
    n_out = len(op.output_desc)
    outputs = [op.name] if n_out == 1 else [f"{op.name}:{i}" for i in range(n_out)]
    record = _ops.REGISTRY.get(op.type)
    if op.subgraph_name:
        subs = [made.get(n) or _graph(graph_defs[n], graph_defs, made) for n in op.subgraph_name]
        attrs.update(_subgraph_attrs(record, subs, op.name))
    node = Node(op.name, op.type, list(data_inputs), outputs, attrs, domain, groups, output_groups, control)
    if op.type == _ops.DATA:
        desc = op.output_desc[0] if op.output_desc else schema.TensorDescriptor(dtype=1, layout="ND")
        node.attrs.setdefault("index", 0)
        node.attrs.update(_data_declaration(desc))
        node.outputs = [op.name]
    elif record is not None and domain == _ops.GE_DOMAIN and not groups:
        node.groups = tuple(1 for _ in record.inputs) if len(record.inputs) == len(data_inputs) else ()
        node.output_groups = tuple(1 for _ in record.outputs) if len(record.outputs) == n_out else ()
    for side, descs in (("input", op.input_desc), ("output", op.output_desc)):
        for index, desc in enumerate(descs):
            if desc.attr:
                node.port_attrs[side, index] = {k: _value(v) for k, v in desc.attr.items()}
            if op.type != _ops.DATA:
                node.port_descs[side, index] = _port_desc(desc)
    return node


def _subgraph_attrs(record: Any, subs: list[Graph], name: str) -> dict[str, Any]:
    """The subgraphs of an op by its IR's subgraph names (a dynamic one takes the rest, as a list)."""
    if record is None or not record.subgraphs:
        return {f"_subgraph_{i}": g for i, g in enumerate(subs)}
    found: dict[str, Any] = {}
    rest = list(subs)
    for spec in record.subgraphs:
        if spec.dynamic:
            found[spec.name], rest = rest, []
        elif rest:
            found[spec.name] = rest.pop(0)
        else:
            raise ValueError(f"op {name!r} names fewer subgraphs than its IR has")
    return found


def _data_declaration(desc: Any) -> dict[str, Any]:
    code = dtypes.ge_from_ge_ir(desc.dtype)
    try:
        dtype = dtypes.numpy_from_ge(code)
    except KeyError:
        raise ValueError(f"a Data node of GE data type {code}, which has no CPU equivalent") from None
    dims = tuple(desc.shape.dim)
    shape = None if dims == UNKNOWN_RANK else tuple(None if d < 0 else d for d in dims)
    return {"shape": shape, "dtype": dtype, "format": _format(desc.layout)}


def _port_desc(desc: Any) -> PortDesc:
    return PortDesc(tuple(desc.shape.dim), _format(desc.layout), dtypes.ge_from_ge_ir(desc.dtype))


def _format(layout: str) -> int:
    name = layout.removeprefix("FORMAT_") or "ND"
    return dtypes.GE_FORMATS.index(name) if name in dtypes.GE_FORMATS else dtypes.GE_FORMATS.index("RESERVED")


def _value(attr: Any) -> Any:
    kind = attr.WhichOneof("value")
    if kind == "s":
        return attr.s.decode(errors="replace")
    if kind in ("i", "f", "b", "dt"):
        return getattr(attr, kind)
    if kind == "t":
        return _array(attr.t)
    if kind == "list_list_int":
        return [list(row.list_i) for row in attr.list_list_int.list_list_i]
    if kind == "list_list_float":
        return [list(row.list_f) for row in attr.list_list_float.list_list_f]
    if kind == "list":
        lv = attr.list
        by_type = {
            _STRING: lambda: [s.decode(errors="replace") for s in lv.s],
            _INT: lambda: list(lv.i),
            _FLOAT: lambda: list(lv.f),
            _BOOL: lambda: list(lv.b),
            _LIST.VT_LIST_DATA_TYPE: lambda: list(lv.dt),
            _LIST.VT_LIST_TENSOR: lambda: [_array(t) for t in lv.t],
        }
        if lv.val_type in by_type:
            return by_type[lv.val_type]()
        return list(lv.s or lv.i or lv.f or lv.b or lv.dt)
    if kind == "bt":
        return bytes(attr.bt)
    kept = schema.AttrDef()  # a GE value openacl has no use for (named attrs, descs, ...): kept as it is
    kept.CopyFrom(attr)
    return kept


def _array(tensor: Any) -> np.ndarray:
    code = dtypes.ge_from_ge_ir(tensor.desc.dtype)
    dtype = dtypes.numpy_from_ge(code).newbyteorder("<")
    dims = tuple(tensor.desc.shape.dim)
    if len(tensor.data) != math.prod(dims) * dtype.itemsize:
        raise ValueError(f"a tensor of shape {list(dims)} and GE data type {code} holding {len(tensor.data)} bytes")
    array = np.frombuffer(tensor.data, dtype=dtype).reshape(dims).astype(dtype.newbyteorder("="))
    array.flags.writeable = False
    return array
