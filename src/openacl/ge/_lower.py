"""Lowering a compiled graph to one ONNX model: the only place that writes ONNX protos.

Data become graph inputs (in index order), then every Variable becomes an input too, so the session feeds the
state it holds; Const become initializers; Assign becomes an Identity whose result is an extra output the
session stores after the run. ONNX forbids duplicate output names, so a tensor wanted twice is output once,
and an output that is a graph input or initializer gets an Identity in front.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from openacl import dtypes
from openacl.ge import _ops
from openacl.ge.passes import CompiledGraph

#: IR version for graphs built in Python; models read by ``Graph.from_onnx`` keep their own.
DEFAULT_IR_VERSION = 8

VarTypes = Mapping[str, tuple[np.dtype, tuple[int, ...]]]


def lower(compiled: CompiledGraph, var_types: VarTypes) -> tuple[onnx.ModelProto, list[str]]:
    """The ONNX model of ``compiled`` and its output names (each wanted tensor once, first-wanted first).

    The tensors wanted are ``compiled.outputs`` then the Assign results; the caller maps them to output
    positions with :func:`output_positions`.
    """
    inputs = [_data_input(node) for node in compiled.data]
    inputs += [_value_info(name, *var_types[name]) for name in compiled.variables]
    initializers = []
    nodes = []
    for node in compiled.nodes:
        if node.type == _ops.CONST:
            initializers.append(numpy_helper.from_array(np.asarray(node.attrs["value"]), node.name))
        elif node.type == _ops.ASSIGN:
            nodes.append(helper.make_node("Identity", [node.inputs[1]], node.outputs, name=node.name))
        elif node.type not in (_ops.DATA, _ops.VARIABLE):
            nodes.append(_onnx_node(node))
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
    opset = dict(compiled.graph.opset)
    opset.setdefault("", 17)
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
    dims = [d if d is not None else f"{node.name}_dim{i}" for i, d in enumerate(node.attrs["shape"])]
    return helper.make_tensor_value_info(node.name, dtypes.onnx_from_numpy(node.attrs["dtype"]), dims)


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
