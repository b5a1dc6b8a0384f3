"""Compile passes: Save -> variable outputs, Summary -> extra outputs, and checkpoint-graph detection.

They follow GE (reference notes ``ge_session.md`` §2.2):

- :func:`save_pass` is GE's ``SavePass``: each Save node's Variable inputs are appended to the graph outputs and
  tagged ``_var_is_save``; other inputs are dropped; the node goes.
- :func:`handle_summary_op` is ``GraphOptimize::HandleSummaryOp``: each Summary node's input 0 is appended to
  the outputs, its position recorded under the node's name, and the node goes. It runs after SavePass (GE
  prepares the graph before it optimises the original graph), so the outputs are
  ``user outputs + Save's variables + Summary inputs``.
- :func:`is_checkpoint_graph` is ``GraphManager::IsCheckpointGraph`` on the compiled graph.
- :func:`summary_handle` and :func:`checkpoint_handle` build the callbacks' ``params_list`` from a run's outputs.

Failures raise :class:`~openacl.errors.GeError` with GE's inner code; the session reports them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from openacl.errors import GeError, GeStatus
from openacl.graph_engine import _ops
from openacl.graph_engine.graph import Graph, Node

__all__ = [
    "CHECKPOINT_GRAPH",
    "FOR_GET_VAR",
    "VAR_IS_SAVE",
    "CompiledGraph",
    "checkpoint_handle",
    "compile_graph",
    "gen_checkpoint_graph",
    "handle_summary_op",
    "is_checkpoint_graph",
    "save_pass",
    "summary_handle",
]

#: Attribute GE's SavePass sets on a saved variable (``VAR_ATTR_VAR_IS_SAVE``), and its value.
VAR_IS_SAVE, SAVE_CHECKPOINT = "_var_is_save", "save_checkpoint"
#: Attribute on the variables of the graph GetVariables builds; it keeps that graph from firing "Save".
FOR_GET_VAR = "CheckPointGraphForGetVar"
#: Name of the graph GetVariables builds (GE ``kCheckPointGraph``).
CHECKPOINT_GRAPH = "checkpoint_graph"


@dataclasses.dataclass
class CompiledGraph:
    """A graph after the passes, with what the session needs to run it and to call the callbacks.

    Invariant: ``outputs`` is ``user outputs + save_variables + summary inputs``; ``summary_index`` maps each
    removed Summary node's name to its position in ``outputs``.
    """

    name: str
    graph: Graph
    user_outputs: int
    save_variables: list[str]
    summary_index: dict[str, int]
    assigns: dict[str, str]
    data: list[Node]
    variables: dict[str, Node]
    is_checkpoint_graph: bool

    @property
    def nodes(self) -> list[Node]:
        return self.graph.nodes

    @property
    def outputs(self) -> list[str]:
        return self.graph.outputs

    @property
    def is_summary_graph(self) -> bool:
        return bool(self.summary_index)

    @property
    def checkpoint_outputs(self) -> list[str]:
        """The outputs left after the Summary ones are taken out: what ``checkpoint_handle`` walks."""
        summary = set(self.summary_index.values())
        return [name for i, name in enumerate(self.outputs) if i not in summary]


def compile_graph(graph: Graph) -> CompiledGraph:
    """Check a snapshot of ``graph`` and run the passes on it; the user's graph is left as it is."""
    g = graph.copy()
    data = _check(g)
    g.nodes = [n for n in g.nodes if n.type != _ops.NET_OUTPUT]  # its inputs are g.outputs already
    user_outputs = len(g.outputs)
    ref_pass(g)
    save_variables = save_pass(g)
    summary_index = handle_summary_op(g)
    assigns = {n.inputs[0]: n.outputs[0] for n in g.nodes if n.type == _ops.ASSIGN}
    variables = {n.name: n for n in g.nodes if n.type == _ops.VARIABLE}
    return CompiledGraph(
        g.name, g, user_outputs, save_variables, summary_index, assigns, data, variables, is_checkpoint_graph(g)
    )


def ref_pass(graph: Graph) -> None:
    """GE ref outputs (ApplyGradientDescent's ``var``) write back to their input: when that input is a
    Variable, the graph gains an Assign of the output to it, so the session updates the variable."""
    producers = _producers(graph)
    for node in [n for n in graph.nodes if n.domain == _ops.GE_DOMAIN]:
        record = _ops.spec(node.type)
        for out_name, in_name in record.refs:
            in_pos = [spec.name for spec in record.inputs].index(in_name)
            flat_in = sum((node.groups or (1,) * len(record.inputs))[:in_pos])
            out_pos = [out.name for out in record.outputs].index(out_name)
            producer = producers.get(node.inputs[flat_in])
            if producer is not None and producer.type == _ops.VARIABLE:
                graph.assign(node.inputs[flat_in], node.outputs[out_pos], name=f"{node.name}/ref_{out_name}")


def with_data_shapes(graph: Graph, shapes: Sequence[tuple[int, ...]]) -> Graph:
    """A copy of ``graph`` whose Data declared without a shape take ``shapes[index]`` (the first run's)."""
    g = graph.copy()
    for node in g.nodes:
        if node.type == _ops.DATA and node.attrs.get("shape", ()) is None and node.attrs["index"] < len(shapes):
            node.attrs = {**node.attrs, "shape": tuple(shapes[node.attrs["index"]])}
    return g


def only_assigned(compiled: CompiledGraph, variable: str) -> bool:
    """True when every reader of ``variable`` in the graph is an Assign to it (an init graph)."""
    if variable not in compiled.assigns:
        return False
    users = [n for n in compiled.nodes if variable in n.inputs]
    return all(n.type == _ops.ASSIGN and n.inputs[0] == variable and n.inputs[1] != variable for n in users)


def save_pass(graph: Graph) -> list[str]:
    """GE's SavePass: Save nodes go, their Variable inputs become outputs. Returns those variables' names."""
    producers = _producers(graph)
    saved: list[str] = []
    for node in [n for n in graph.nodes if n.type == _ops.SAVE]:
        for tensor in node.inputs:
            producer = producers.get(tensor)
            if producer is not None and producer.type == _ops.VARIABLE:
                producer.attrs[VAR_IS_SAVE] = SAVE_CHECKPOINT
                graph.outputs.append(tensor)
                saved.append(producer.name)
        graph.nodes.remove(node)
    return saved


def handle_summary_op(graph: Graph | None) -> dict[str, int]:
    """GE's HandleSummaryOp: Summary nodes go, their input 0 becomes an output. Returns ``{name: position}``.

    Raises PARAM_INVALID for no graph and GE_GRAPH_PARAM_NULLPTR for a Summary without a connected input.
    """
    if graph is None:
        raise GeError(GeStatus.PARAM_INVALID, "HandleSummaryOp: graph is null")
    producers = _producers(graph)
    index: dict[str, int] = {}
    for node in [n for n in graph.nodes if n.type == _ops.SUMMARY]:
        if not node.inputs or not node.inputs[0]:
            raise GeError(GeStatus.GE_GRAPH_PARAM_NULLPTR, f"Summary {node.name!r} has no input 0")
        if node.inputs[0] not in producers:
            raise GeError(
                GeStatus.GE_GRAPH_PARAM_NULLPTR,
                f"Summary {node.name!r}: input {node.inputs[0]!r} is produced by no node",
            )
        index[node.name] = len(graph.outputs)
        graph.outputs.append(node.inputs[0])
        graph.nodes.remove(node)
    return index


def is_checkpoint_graph(graph: Graph | None) -> bool:
    """GE's IsCheckpointGraph: only variables (through TransOps) feed the outputs, and nothing else runs.

    Allowed: Variable (not tagged for GetVariables) whose consumers are TransOps or the outputs; TransOps fed
    by Variable/TransOp/Recv whose consumers are TransOps, Send or the outputs; Const with no consumers; Send,
    Recv. Every output must come from a Variable or a TransOp. ONNX puts some TransOp parameters (Reshape's
    shape, Unsqueeze's axes) in inputs after the data input: those may be Consts.
    """
    if graph is None:
        return False
    producers = _producers(graph)
    consumers = _consumers(graph)
    outputs = set(graph.outputs)
    for tensor in graph.outputs:
        producer = producers.get(tensor)
        if producer is None or not (producer.type == _ops.VARIABLE or producer.type in _ops.TRANS_OPS):
            return False
    for node in graph.nodes:
        users = [c for out in node.outputs for c in consumers.get(out, [])]
        if node.type == _ops.VARIABLE:
            if FOR_GET_VAR in node.attrs:
                return False
            if any(c.type not in _ops.TRANS_OPS for c in users):
                return False
        elif node.type in _ops.TRANS_OPS:
            if any(c.type not in _ops.TRANS_OPS and c.type != _ops.SEND for c in users):
                return False
            for i, tensor in enumerate(node.inputs):
                producer = producers.get(tensor)
                allowed = (_ops.VARIABLE, _ops.RECV) if i == 0 else (_ops.VARIABLE, _ops.RECV, _ops.CONST)
                if producer is None or not (producer.type in allowed or producer.type in _ops.TRANS_OPS):
                    return False
        elif node.type == _ops.CONST:
            if any(not (c.type in _ops.TRANS_OPS and c.inputs[0] != node.outputs[0]) for c in users):
                return False
            if node.outputs[0] in outputs:
                return False
        elif node.type not in (_ops.SEND, _ops.RECV):
            return False
    return True


def summary_handle(compiled: CompiledGraph, outputs: list[Any]) -> dict[str, Any]:
    """GE's SummaryHandle: take the Summary tensors out of ``outputs`` (in place) into ``{name: tensor}``."""
    if not compiled.is_summary_graph:
        raise GeError(GeStatus.FAILED, f"graph {compiled.name!r} has no summary output indexes")
    params = {name: outputs[i] for name, i in compiled.summary_index.items()}
    for i in sorted(compiled.summary_index.values(), reverse=True):
        del outputs[i]
    return params


def checkpoint_handle(graph: Graph, outputs: Sequence[Any]) -> dict[str, Any]:
    """GE's CheckpointHandle: ``{variable name: outputs[i]}``, walking each output back to its Variable.

    FAILED for a graph without outputs (GE: no NetOutput) or a node with several data inputs on the way;
    PARAM_INVALID when an output has no value or the walk meets no Variable.
    """
    if not graph.outputs:
        raise GeError(GeStatus.FAILED, f"no netoutput node in graph {graph.name!r}")
    producers = _producers(graph)
    params: dict[str, Any] = {}
    for i, tensor in enumerate(graph.outputs):
        node = producers.get(tensor)
        while node is not None and node.type != _ops.VARIABLE:
            data_inputs = node.inputs[:1] if node.type in _ops.TRANS_OPS else node.inputs
            if len(data_inputs) > 1:
                raise GeError(GeStatus.FAILED, f"more than one prior node of {node.name!r}")
            node = producers.get(data_inputs[0]) if data_inputs else None
        if node is None:
            raise GeError(GeStatus.PARAM_INVALID, f"output {i} ({tensor!r}) does not come from a variable")
        if i >= len(outputs):
            raise GeError(GeStatus.PARAM_INVALID, f"output index {i} out of range ({len(outputs)} outputs)")
        params[node.name] = outputs[i]
    return params


def gen_checkpoint_graph(names: Sequence[str]) -> Graph:
    """GE's GenCheckPointGraph: ``checkpoint_graph`` with one tagged Variable per name and one Save node.

    The ``CheckPointGraphForGetVar`` tag makes :func:`is_checkpoint_graph` false, so GetVariables never fires
    the Save callback (GE ST ``test_generate_and_run_checkpoint_graph``).
    """
    graph = Graph(CHECKPOINT_GRAPH)
    tensors = []
    for name in names:
        tensor = graph.variable(name)
        graph.nodes[-1].attrs[FOR_GET_VAR] = True
        tensors.append(tensor)
    graph.save(tensors, name=f"{CHECKPOINT_GRAPH}_Save")
    return graph


# ----- helpers -----


def _check(graph: Graph) -> list[Node]:
    """Structural checks onnxruntime would report less clearly; returns the Data nodes by index."""
    producers = _producers(graph)
    data = sorted((n for n in graph.nodes if n.type == _ops.DATA), key=lambda n: n.attrs["index"])
    indices = [n.attrs["index"] for n in data]
    if indices != list(range(len(data))):
        raise GeError(GeStatus.PARAM_INVALID, f"Data indices must be 0..{len(data) - 1} once each, got {indices}")
    assigned: set[str] = set()
    for node in graph.nodes:
        if node.type == _ops.SUMMARY:
            continue  # HandleSummaryOp reports a Summary's missing input with its own code
        for tensor in node.inputs:
            if tensor and tensor not in producers:
                raise GeError(GeStatus.PARAM_INVALID, f"node {node.name!r} reads {tensor!r}, which no node produces")
        if node.type == _ops.ASSIGN:
            ref = producers[node.inputs[0]]
            if ref.type != _ops.VARIABLE:
                raise GeError(GeStatus.PARAM_INVALID, f"Assign {node.name!r}: {ref.name!r} is not a Variable")
            if ref.name in assigned:
                raise GeError(GeStatus.PARAM_INVALID, f"variable {ref.name!r} is assigned more than once")
            assigned.add(ref.name)
    for index, tensor in enumerate(graph.outputs):
        if not tensor:
            raise GeError(GeStatus.PARAM_INVALID, f"graph output {index} is not connected")
        if tensor not in producers:
            raise GeError(GeStatus.PARAM_INVALID, f"graph output {tensor!r} is produced by no node")
    return data


def _producers(graph: Graph) -> dict[str, Node]:
    return {out: node for node in graph.nodes for out in node.outputs}


def _consumers(graph: Graph) -> dict[str, list[Node]]:
    users: dict[str, list[Node]] = {}
    for node in graph.nodes:
        for tensor in node.inputs:
            users.setdefault(tensor, []).append(node)
    return users
