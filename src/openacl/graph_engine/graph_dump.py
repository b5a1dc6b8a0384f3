"""Graph dumps (GE ``Graph::DumpToFile``): the graph as an ONNX ModelProto in text, or as GE-style proto text.

Node types stay GE's (a dump shows the graph the user built, before lowering). Files go to the directory GE
uses: ``$DUMP_GRAPH_PATH``, else ``$NPU_COLLECT_PATH``, else the working directory, named as GE names them:
``ge_onnx_<8-digit counter>_graph_<graph id>_<suffix>.pbtxt``, ``ge_proto_<counter>_<suffix>.txt`` and
``ge_readable_<counter>_<suffix>.txt``. The counter is per process and starts at 0. A dump is complete or absent
(``atomicfile``): a disk that fills up mid-write leaves no truncated file under the dump's name.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import numpy as np

from openacl import atfork, lazy
from openacl.atomicfile import write_text
from openacl.graph_engine._ops import NET_OUTPUT
from openacl.graph_engine.graph import Graph, Node

onnx = lazy.module("onnx")
text_format = lazy.module("google.protobuf.text_format")
helper = lazy.module("onnx.helper")
numpy_helper = lazy.module("onnx.numpy_helper")

__all__ = ["dump_dir", "dump_to_file", "onnx_model", "proto_text", "readable_text", "subgraphs", "with_net_output"]

ONNX, TXT, READABLE = "onnx", "txt", "readable"
_counter = itertools.count()
_counter_lock = atfork.lock()


def dump_dir() -> Path:
    return Path(os.environ.get("DUMP_GRAPH_PATH") or os.environ.get("NPU_COLLECT_PATH") or ".")


def dump_to_file(graph: Graph, kind: str, suffix: str, graph_id: int = 0) -> Path:
    """Write one dump and return its path."""
    with _counter_lock:
        index = next(_counter)
    directory = dump_dir()
    directory.mkdir(parents=True, exist_ok=True)
    if kind == ONNX:
        path = directory / f"ge_onnx_{index:08d}_graph_{graph_id}_{suffix}.pbtxt"
        write_text(path, text_format.MessageToString(onnx_model(graph)))
    elif kind == TXT:
        path = directory / f"ge_proto_{index:08d}_{suffix}.txt"
        write_text(path, proto_text(graph))
    elif kind == READABLE:
        path = directory / f"ge_readable_{index:08d}_{suffix}.txt"
        write_text(path, readable_text(graph))
    else:
        raise ValueError(f"unknown dump kind {kind!r}")
    return path


def onnx_model(graph: Graph) -> onnx.ModelProto:
    """The graph as ONNX protos with GE's node types (not runnable: a picture of the GE graph)."""
    model = helper.make_model(_graph_proto(graph), producer_name="openacl.ge")
    return model


def _graph_proto(graph: Graph) -> onnx.GraphProto:
    nodes = []
    for node in with_net_output(graph):
        proto = helper.make_node(node.type, node.inputs, node.outputs, name=node.name)
        for key, value in sorted(node.attrs.items()):
            attr = _attribute(key, value)
            if attr is not None:
                proto.attribute.append(attr)
        nodes.append(proto)
    return helper.make_graph(nodes, graph.name, [], [])


def _attribute(key: str, value: Any) -> onnx.AttributeProto | None:
    if isinstance(value, Graph):
        return helper.make_attribute(key, _graph_proto(value))
    if isinstance(value, np.dtype):
        return helper.make_attribute(key, str(value))
    if isinstance(value, np.ndarray):
        return helper.make_attribute(key, numpy_helper.from_array(value))
    if isinstance(value, onnx.AttributeProto):
        return value
    if value is None or (isinstance(value, list | tuple) and not value):
        return None
    if isinstance(value, tuple):
        value = [v if v is not None else -1 for v in value]
    try:
        return helper.make_attribute(key, value)
    except (TypeError, ValueError):
        return helper.make_attribute(key, repr(value))


def proto_text(graph: Graph) -> str:
    """GE ``ModelDef``-style text: one ``op`` block per node with its inputs (``node:port``) and attributes."""
    lines = [f'name: "{graph.name}"', "graph {", f'  name: "{graph.name}"']
    producers = {out: (node.name, i) for node in graph.nodes for i, out in enumerate(node.outputs)}
    for node in with_net_output(graph):
        lines += ["  op {", f'    name: "{node.name}"', f'    type: "{node.type}"']
        for tensor in node.inputs:
            source, port = producers.get(tensor, (tensor, 0))
            lines.append(f'    input: "{source}:{port}"')
        for source in node.control:
            lines.append(f'    input: "{source}:-1"')
        for key, value in sorted(node.attrs.items()):
            lines.append(f"    attr {{ key: {key!r} value {{ {_attr_text(value)} }} }}".replace("'", '"'))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return f"b: {str(value).lower()}"
    if isinstance(value, int):
        return f"i: {value}"
    if isinstance(value, float):
        return f"f: {value}"
    if isinstance(value, str):
        return f"s: {value!r}"
    if isinstance(value, Graph):
        return f"g: {value.name!r}"
    if isinstance(value, np.ndarray):
        return f"t: {{ dtype: {value.dtype} shape: {list(value.shape)} }}"
    return f"s: {str(value)!r}"


def readable_text(graph: Graph) -> str:
    """One line per node: ``name: Type(inputs) -> outputs {attributes}``."""
    lines = [f"graph {graph.name}"]
    for node in with_net_output(graph):
        if node.type == NET_OUTPUT:
            lines.append(f"  {node.name}: {NET_OUTPUT}({', '.join(node.inputs)})")
            continue
        attrs = {k: v for k, v in node.attrs.items() if not isinstance(v, np.ndarray)}
        shown = ", ".join(f"{k}={v.name if isinstance(v, Graph) else v}" for k, v in sorted(attrs.items()))
        lines.append(
            f"  {node.name}: {node.type}({', '.join(node.inputs)}) -> {', '.join(node.outputs)}"
            + (f" {{{shown}}}" if shown else "")
        )
    return "\n".join(lines) + "\n"


def with_net_output(graph: Graph) -> list[Node]:
    """The nodes, ending with the ``NetOutput_<graph>`` node GE's graphs have (made here when the graph has none:
    one built in Python through openacl's own API)."""
    if graph.net_output() is not None:
        return list(graph.nodes)
    return [*graph.nodes, Node(f"{NET_OUTPUT}_{graph.name}", NET_OUTPUT, list(graph.outputs), [])]


def subgraphs(graph: Graph) -> list[Graph]:
    """Every graph nested in ``graph``'s nodes (If branches), depth first, then those added as a whole."""
    found: list[Graph] = []
    for node in graph.nodes:
        for value in node.attrs.values():
            for sub in value if isinstance(value, list) else [value]:
                if isinstance(sub, Graph):
                    found.append(sub)
                    found.extend(subgraphs(sub))
    for sub in graph.subgraphs:
        found.append(sub)
        found.extend(subgraphs(sub))
    return found
