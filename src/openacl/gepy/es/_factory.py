"""One op function per op-table record, by GE's generator rules (``gen_esb``; reference notes §12.2).

Signature: inputs in IR order (a dynamic input is a list; an optional input defaults to None only when no required
input follows it and the op has no dynamic output), then ``owner_graph_builder`` for an op without inputs or
``owner_builder`` when all inputs are optional, then one ``<output>_num`` per dynamic output, then the subgraphs,
then ``*`` and the attributes (required ones first, then optional ones with their IR defaults). An op with more
than one input, or only optional ones, takes TensorLike literals. The return is a TensorHolder for one output
(or none), a list for a lone dynamic output, else an ``<Op>Output`` object with one attribute per output.
Names that are Python keywords get ``in_``/``attr_``/``subgraph_``; an attribute named like an input gets
``attr_``, an output named like an input ``ref_``.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable
from typing import Any

from openacl.gepy.error import from_engine
from openacl.gepy.es.graph_builder import GraphBuilder, apply_op, convert_to_tensor_holder, resolve_builder
from openacl.gepy.es.tensor_holder import TensorHolder
from openacl.gepy.graph.graph import Graph
from openacl.graph_engine import _ops
from openacl.graph_engine._ops import SUMMARY
from openacl.ops.ir import IrOp

__all__ = ["make_function", "output_class"]

_P = inspect.Parameter


def _py_name(name: str, prefix: str, taken: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    if keyword.iskeyword(name) or name in taken:
        return prefix + name
    return name


class OpOutput:
    """Base of the ``<Op>Output`` classes: one attribute per IR output, iterable in IR order."""

    __slots__ = ()

    def __iter__(self) -> Any:
        return iter(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.__slots__)})"


def output_class(record: IrOp) -> type[OpOutput] | None:
    """``<Op>Output`` for an op with several outputs (or a dynamic one among others); None otherwise."""
    if len(record.outputs) < 2:
        return None
    inputs = {i.name for i in record.inputs}
    names = tuple(
        _py_name(o.name, "ref_", inputs) if o.name in inputs else _py_name(o.name, "out_") for o in record.outputs
    )

    def __init__(self: Any, *values: Any) -> None:
        for attr, value in zip(names, values, strict=True):
            setattr(self, attr, value)

    return type(f"{record.type}Output", (OpOutput,), {"__slots__": names, "__init__": __init__})


def make_function(record: IrOp, result_class: type[OpOutput] | None) -> Callable[..., Any]:
    """The ``ge.es.all`` function of ``record``."""
    if record.unsupported is not None:
        return _unsupported(record)
    inputs = record.inputs
    input_names = {i.name for i in inputs}
    has_dynamic_out = bool(record.dynamic_outputs)
    all_optional = bool(inputs) and all(i.kind == "optional" for i in inputs)
    tensor_like = len(inputs) > 1 or all_optional
    params: list[_P] = []
    in_params: list[tuple[str, Any]] = []
    for pos, spec in enumerate(inputs):
        default = _P.empty
        if spec.kind == "optional":
            required_after = any(j.kind != "optional" for j in inputs[pos + 1 :])
            if not required_after and not has_dynamic_out:
                default = None
        pname = _py_name(spec.name, "in_")
        params.append(_P(pname, _P.POSITIONAL_OR_KEYWORD, default=default))
        in_params.append((pname, spec))
    owner = None
    if not inputs:
        owner = "owner_graph_builder"
        params.append(_P(owner, _P.POSITIONAL_OR_KEYWORD))
    elif all_optional:
        owner = "owner_builder"
        params.append(_P(owner, _P.POSITIONAL_OR_KEYWORD, default=None if params[-1].default is None else _P.empty))
    counts = [f"{o.name}_num" for o in record.dynamic_outputs]
    params += [_P(c, _P.POSITIONAL_OR_KEYWORD) for c in counts]
    subgraph_params = [(_py_name(s.name, "subgraph_"), s) for s in record.subgraphs]
    params += [_P(p, _P.POSITIONAL_OR_KEYWORD) for p, _ in subgraph_params]
    attr_params = []
    for attr in [a for a in record.attrs if a.required] + [a for a in record.attrs if not a.required]:
        pname = _py_name(attr.name, "attr_", input_names)
        params.append(_P(pname, _P.KEYWORD_ONLY, default=_P.empty if attr.required else attr.default))
        attr_params.append((pname, attr))
    if record.type == SUMMARY:  # openacl's extra: the key the Summary callback gets (GE: Summary_<n>)
        params.append(_P("name", _P.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(params)

    def op_function(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        given = [values[pname] for pname, _ in in_params]
        for (pname, spec), value in zip(in_params, given, strict=True):
            if spec.kind == "dynamic" and not isinstance(value, list):
                raise TypeError(f"{record.type}: {pname} must be a list")
        builder = _builder_of(record, given, values.get(owner) if owner else None, tensor_like)
        if tensor_like:
            given = [
                [convert_to_tensor_holder(v, builder) for v in value]
                if isinstance(value, list) and spec.kind == "dynamic"
                else convert_to_tensor_holder(value, builder)
                for (_, spec), value in zip(in_params, given, strict=True)
            ]
        output_counts = []
        for count in counts:
            if not isinstance(values[count], int) or values[count] < 0:
                raise TypeError(f"{record.type}: {count} must be an int >= 0")
            output_counts.append(values[count])
        subgraphs = {}
        for pname, spec in subgraph_params:
            value = values[pname]
            ok = (
                all(isinstance(g, Graph) for g in value)
                if spec.dynamic and isinstance(value, list)
                else isinstance(value, Graph)
            )
            if not ok:
                raise TypeError(f"{record.type}: {pname} must be a Graph" + (" list" if spec.dynamic else ""))
            subgraphs[spec.name] = value
        attrs = {attr.name: values[pname] for pname, attr in attr_params}
        outputs = apply_op(
            builder,
            record.type,
            given,
            attrs,
            output_counts=output_counts,
            subgraphs=subgraphs,
            name=values.get("name") if record.type == SUMMARY else None,
        )
        if result_class is not None:
            return result_class(*outputs)
        return outputs[0]

    op_function.__name__ = op_function.__qualname__ = record.type
    op_function.__signature__ = signature  # type: ignore[attr-defined]
    op_function.__doc__ = _doc(record)
    op_function.__module__ = "ge.es.all"
    return op_function


def _builder_of(record: IrOp, given: list[Any], owner: Any, tensor_like: bool) -> GraphBuilder:
    if owner is not None:
        if not isinstance(owner, GraphBuilder):
            raise TypeError(f"{record.type}: the owner builder must be a GraphBuilder")
        return owner
    if not record.inputs:
        raise TypeError(f"{record.type}: owner_graph_builder must be a GraphBuilder")
    if tensor_like:
        return resolve_builder(*given)
    first = given[0]
    if isinstance(first, list):
        if not first or not isinstance(first[0], TensorHolder):
            raise TypeError(f"{record.type}: {record.inputs[0].name} must be a non-empty list of TensorHolder")
        return first[0].get_owner_builder()
    if not isinstance(first, TensorHolder):
        raise TypeError(f"{record.type}: {record.inputs[0].name} must be a TensorHolder, got {type(first).__name__}")
    return first.get_owner_builder()


def _unsupported(record: IrOp) -> Callable[..., Any]:
    def op_function(*args: Any, **kwargs: Any) -> Any:
        raise from_engine(_ops.unsupported(record.type, record.unsupported or ""), record.type)

    op_function.__name__ = op_function.__qualname__ = record.type
    op_function.__doc__ = f"{record.type}: not available in openacl ({record.unsupported})."
    op_function.__module__ = "ge.es.all"
    return op_function


def _doc(record: IrOp) -> str:
    ins = ", ".join(
        f"{i.name}{'?' if i.kind == 'optional' else '*' if i.kind == 'dynamic' else ''}" for i in record.inputs
    )
    outs = ", ".join(f"{o.name}{'*' if o.dynamic else ''}" for o in record.outputs) or "none"
    attrs = ", ".join(f"{a.name}: {a.kind}" + ("" if a.required else f" = {a.default!r}") for a in record.attrs)
    lowered = f" Lowered to ONNX {record.onnx}." if record.onnx else ""
    return f"GE IR {record.type}({ins}) -> {outs}" + (f"; attributes {attrs}" if attrs else "") + "." + lowered
