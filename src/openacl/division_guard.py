"""Integer division that cannot kill the process: onnxruntime's ``Div`` of int32/int64 computes ``MIN / -1`` with
the processor's divide instruction, which traps (SIGFPE) on x86, so one unlucky input would end the program.

:func:`guard` gives a model whose trapping ``Div`` nodes are calls of a model-local function with the same name,
inputs, outputs and ``op_type`` (``Div`` in the :data:`DOMAIN` domain): a divisor of -1 gives the negated
dividend (``MIN / -1`` wraps to ``MIN``, as two's complement and NumPy do), any other divisor the plain quotient,
and a zero divisor is still onnxruntime's refusal. The nodes keep their names and outputs, so dumps and
intermediate tensors are named as before.

A ``Div`` whose divisor is a constant without -1, or whose type is not int32/int64 (int8/int16 are divided in
int width, and floats do not trap), is left as it is: most models have no node to guard and are returned as None,
untouched.
"""

from __future__ import annotations

import numpy as np

from openacl import dtypes, lazy

onnx = lazy.module("onnx")
helper = lazy.module("onnx.helper")
numpy_helper = lazy.module("onnx.numpy_helper")

__all__ = ["DOMAIN", "guard"]

DOMAIN = "openacl.guard"
_TRAPPING = {dtypes.onnx_from_numpy(t): t for t in (np.int32, np.int64)}  # TensorProto.INT32, INT64


def guard(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy of ``model`` with every ``Div`` that could trap guarded, or None when none could."""
    if not any(node.op_type == "Div" and node.domain in ("", "ai.onnx") for node in _nodes(model.graph)):
        return None
    constants = _constants(model.graph)
    candidates = [node for node in _nodes(model.graph) if _may_trap_by_value(node, constants)]
    if not candidates:
        return None
    types = _elem_types(model)
    guarded = onnx.ModelProto()
    guarded.CopyFrom(model)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 9:  # Where, which the guard needs, came with opset 9
        return None
    guarded_any = False
    for node in _nodes(guarded.graph):
        if not _may_trap_by_value(node, constants):
            continue
        elem = types.get(node.input[1]) or types.get(node.input[0])
        if elem not in _TRAPPING:
            continue
        dtype = _TRAPPING[elem]
        node.domain = DOMAIN  # op_type stays "Div": dumps name the operator as the model does
        node.attribute.extend(
            [
                helper.make_attribute("minus_one", numpy_helper.from_array(np.array(-1, dtype))),
                helper.make_attribute("one", numpy_helper.from_array(np.array(1, dtype))),
            ]
        )
        guarded_any = True
    if not guarded_any:
        return None
    guarded.functions.append(_function(opset))
    guarded.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return guarded


def _function(opset: int) -> onnx.FunctionProto:
    """``y = Where(b == -1, -a, a / Where(b == -1, 1, b))``; the caller gives -1 and 1 in its own integer type
    (attributes ``minus_one`` and ``one``), so one function serves int32 and int64."""

    def const(name: str) -> onnx.NodeProto:
        node = helper.make_node("Constant", [], [name])
        node.attribute.append(onnx.AttributeProto(name="value", ref_attr_name=name, type=onnx.AttributeProto.TENSOR))
        return node

    nodes = [
        const("minus_one"),
        const("one"),
        helper.make_node("Equal", ["b", "minus_one"], ["negates"]),
        helper.make_node("Where", ["negates", "one", "b"], ["divisor"]),
        helper.make_node("Div", ["a", "divisor"], ["quotient"]),
        helper.make_node("Neg", ["a"], ["negated"]),
        helper.make_node("Where", ["negates", "negated", "quotient"], ["y"]),
    ]
    return helper.make_function(
        DOMAIN, "Div", ["a", "b"], ["y"], nodes, [helper.make_opsetid("", opset)], attributes=["minus_one", "one"]
    )


def _may_trap_by_value(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> bool:
    """A default-domain ``Div`` whose divisor is not a known constant free of -1 (its type is checked later)."""
    if node.op_type != "Div" or node.domain not in ("", "ai.onnx") or len(node.input) != 2:
        return False
    divisor = constants.get(node.input[1])
    if divisor is None:
        return True
    return divisor.dtype.kind == "i" and divisor.dtype.itemsize >= 4 and bool((divisor == -1).any())


def _nodes(graph: onnx.GraphProto):
    """Every node of ``graph`` and of its subgraphs (If/Loop/Scan bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _nodes(sub)


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Small inline constants (initializers and ``Constant`` nodes) by name; weights kept outside are skipped."""
    found: dict[str, np.ndarray] = {}
    for init in graph.initializer:
        if init.data_location != onnx.TensorProto.EXTERNAL:
            found[init.name] = numpy_helper.to_array(init)
    for node in _nodes(graph):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            value = next((a for a in node.attribute if a.name == "value" and a.type == a.TENSOR), None)
            if value is not None and value.t.data_location != onnx.TensorProto.EXTERNAL:
                found[node.output[0]] = numpy_helper.to_array(value.t)
    return found


def _elem_types(model: onnx.ModelProto) -> dict[str, int]:
    """Each value's element type, as shape inference gives it (values it cannot type are missing)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # a model inference refuses still runs: type what the graph declares
        inferred = model
    types: dict[str, int] = {}

    def walk(graph: onnx.GraphProto) -> None:
        for value in [*graph.input, *graph.output, *graph.value_info]:
            if value.type.HasField("tensor_type"):
                types[value.name] = value.type.tensor_type.elem_type
        for init in graph.initializer:
            types[init.name] = init.data_type
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for sub in attr.graphs:
                        walk(sub)

    walk(inferred.graph)
    return types
