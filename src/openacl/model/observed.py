"""A model's own operators, run so that a dump can read the tensors it planned: the observed twin of a model.

The observed sessions run the model's graph with graph optimisations off, so the operators are the model's own
(no fusion renames or removes them) and a dump names the nodes a user sees in Netron. They never give a
program its outputs: those come from the model's optimised session whether a step is dumped or not
(``openacl.model.execute``), so turning a dump on cannot change them.

Memory (a dump must not cost several times the model): only the values the dump plan reads are exposed, so
onnxruntime frees every other intermediate as usual; weights are read by onnxruntime from the model's own bytes
(``model.skeleton``) without prepacking, so they are held once; a weight is an array here only when a planned
operator's dumped input is that weight. When the exposed values of a plan are large (a stats dump or a full
dump of every operator), the graph is cut into consecutive segments of about :data:`SEGMENT_BYTES` of exposed
values each, run one after the other: a segment's values are handed to the dump, then dropped once no later
segment reads them, so a run holds one segment's values at a time instead of all of them. A cut is made only
where every value crossing it is a tensor whose element type shape inference knows; the same kernels run in
either case, so a segmented run gives the same bytes as a whole one.

Values that are not tensors (sequences, maps, optionals) are not exposed, and the operators that read or write
one are ``skipped``: a dump file holds tensors. Strings are tensors (dumped as ``DT_STRING``). Only the
top-level graph's nodes are operators here; the bodies of ``If``/``Loop``/``Scan`` run inside their node.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from openacl import lazy, onnxrt
from openacl.dtypes import numpy_from_onnx
from openacl.dump.selection import OpInfo
from openacl.errors import AclCode, AclError, ExecutionFailed
from openacl.model.skeleton import Weights
from openacl.onnxrt import session_options

onnx = lazy.module("onnx")

#: Exposed bytes per segment. Values of unknown size count as :data:`UNKNOWN_VALUE_BYTES`.
SEGMENT_BYTES = 32 * 1024 * 1024
UNKNOWN_VALUE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Operator:
    """One node: its dump identity and the value names it reads and writes."""

    name: str
    type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def info(self) -> OpInfo:
        return OpInfo(self.name, self.type, len(self.inputs), len(self.outputs))


class PlannedOp(Protocol):
    """What the observed run needs of a dump plan's operator (``openacl.dump.record.OpRecord`` is one)."""

    index: int
    inputs: tuple[int, ...]  # the dumped input slots
    outputs: tuple[int, ...]  # the dumped output slots


#: One planned operator's tensors: the op, then its inputs and outputs by slot (None in slots not dumped).
OpTensors = tuple[PlannedOp, list[np.ndarray | None], list[np.ndarray | None]]


@dataclass
class _Segment:
    """Nodes ``[start, stop)`` as one onnxruntime session."""

    start: int
    stop: int
    session: object
    input_names: list[str]
    output_names: list[str]
    ort_values: bool
    ops: list[PlannedOp]  # the planned operators among its nodes, in plan order
    release: list[str]  # values no later segment, planned operator or model output reads


def _bodies(node) -> list:
    """The subgraphs a node runs (``If`` branches, ``Loop``/``Scan`` bodies)."""
    bodies = []
    for attribute in node.attribute:
        if attribute.HasField("g"):
            bodies.append(attribute.g)
        bodies.extend(attribute.graphs)
    return bodies


def _outer_names(graph) -> set[str]:
    """The names a subgraph reads from the scopes around it."""
    defined = {value.name for value in graph.input} | {init.name for init in graph.initializer}
    used: set[str] = set()
    for node in graph.node:
        used |= _reads(node)
        defined.update(node.output)
    return used - defined


def _reads(node) -> set[str]:
    """Every value a node reads: its inputs and what its subgraphs take from outside them."""
    names = {name for name in node.input if name}
    for body in _bodies(node):
        names |= _outer_names(body)
    return names


def _value_types(model_proto) -> dict[str, object]:
    """Every value's ``TypeProto`` that onnx shape inference finds (only the graph's own when it fails)."""
    graph = model_proto.graph
    try:
        inferred = onnx.shape_inference.infer_shapes(model_proto, strict_mode=False).graph
        typed = (*inferred.input, *inferred.value_info, *inferred.output)
    except Exception:  # no types known: nothing is skipped, no graph is cut
        typed = (*graph.input, *graph.output)
    return {value.name: value.type for value in typed if value.type.WhichOneof("value")}


def _concrete(types: dict[str, object], name: str) -> bool:
    kind = types.get(name)
    if kind is None or kind.WhichOneof("value") != "tensor_type" or not kind.tensor_type.HasField("shape"):
        return False
    return all(d.HasField("dim_value") for d in kind.tensor_type.shape.dim)


class ObservedModel:
    """Runs a model's graph and hands out, segment by segment, the tensors of a dump plan's operators."""

    def __init__(
        self,
        graph_proto,
        weights: Weights,
        label: str,
        input_names: Sequence[str],
        output_names: Sequence[str],
        segment_bytes: int | None = None,
    ) -> None:

        self._proto = graph_proto  # the model without large weights (``model.skeleton``), or a GE graph
        self._weights = weights
        self.label = label  # as the model names itself in errors
        self.input_names = list(input_names)
        self.model_output_names = list(output_names)
        self._segment_bytes = SEGMENT_BYTES if segment_bytes is None else segment_bytes
        graph = graph_proto.graph
        self.operators = tuple(
            Operator(
                node.name or f"{node.op_type}_{index}",
                node.op_type,
                tuple(name for name in node.input if name),
                tuple(name for name in node.output if name),
            )
            for index, node in enumerate(graph.node)
        )
        self.ops = [op.info for op in self.operators]
        self._initializers = {init.name: init for init in graph.initializer}
        self._node_reads = [_reads(node) for node in graph.node]
        self._types = _value_types(graph_proto)
        opaque = {name for name, kind in self._types.items() if kind.WhichOneof("value") != "tensor_type"}
        self.skipped = frozenset(
            index for index, op in enumerate(self.operators) if opaque.intersection(op.inputs + op.outputs)
        )
        self._segments: list[_Segment] | None = None
        self._constants: dict[str, np.ndarray] = {}

    # ----- building the sessions of a plan -----

    def _sized_types(self, input_shapes: Sequence[Sequence[int]] | None) -> dict[str, object]:
        """The value types to size segments by: for a model with dynamic input dims, inferred again with the dims
        of ``input_shapes`` (the first dumped step's), so a dynamic-batch model is cut by its real sizes."""
        if input_shapes is None or all(_concrete(self._types, name) for name in self.input_names):
            return self._types
        sized = onnx.ModelProto()
        sized.CopyFrom(self._proto)  # a skeleton: its large weights are external, so the copy is small
        for value in sized.graph.input:
            if value.name in self.input_names and value.type.HasField("tensor_type"):
                shape = input_shapes[self.input_names.index(value.name)]
                value.type.tensor_type.shape.ClearField("dim")
                for dim in shape:
                    value.type.tensor_type.shape.dim.add().dim_value = int(dim)
        return _value_types(sized)

    @staticmethod
    def _bytes(types: dict[str, object], name: str) -> int:
        if not _concrete(types, name):
            return UNKNOWN_VALUE_BYTES
        kind = types[name].tensor_type
        try:
            itemsize = numpy_from_onnx(kind.elem_type).itemsize
        except KeyError:
            itemsize = 8
        return math.prod(d.dim_value for d in kind.shape.dim) * itemsize

    def _crossable(self, name: str) -> bool:
        """Whether ``name`` can pass from one segment to the next: a tensor of a known element type."""
        kind = self._types.get(name)
        return name in self.input_names or (
            kind is not None and kind.WhichOneof("value") == "tensor_type" and kind.tensor_type.elem_type != 0
        )

    def prepare(self, plan: Sequence[PlannedOp], input_shapes: Sequence[Sequence[int]] | None = None) -> None:
        """Build the sessions for ``plan`` (a model's plan is fixed, so once); reads the planned weights.

        ``input_shapes`` are the shapes of the first run's inputs; a dynamic model's segments are sized for them
        (a later step with larger inputs runs the same segments, each holding proportionally more)."""
        if self._segments is not None:
            return
        self._weights.check(self.label)
        graph = self._proto.graph
        planned = {op.index: op for op in plan}
        wanted: set[str] = set()  # non-constant values the plan reads
        for op in plan:
            operator = self.operators[op.index]
            for name in [operator.inputs[i] for i in op.inputs] + [operator.outputs[i] for i in op.outputs]:
                if name in self._initializers:
                    self._constants.setdefault(name, self._weights.array(self._initializers[name]))
                elif name not in self.input_names:
                    wanted.add(name)
        producer = {name: index for index, node in enumerate(graph.node) for name in node.output if name}
        last_read: dict[str, int] = {}
        for index, reads in enumerate(self._node_reads):
            for name in reads:
                last_read[name] = index
        for op in plan:  # a dumped value lives until its operator's segment is handed out
            for name in self.operators[op.index].inputs + self.operators[op.index].outputs:
                last_read[name] = max(last_read.get(name, -1), op.index)
        keep_to_end = set(self.model_output_names)
        for name in keep_to_end & self._initializers.keys():  # a weight that is a model output
            self._constants.setdefault(name, self._weights.array(self._initializers[name]))
        cuts = self._cuts(graph, wanted, producer, last_read, self._sized_types(input_shapes))
        segments = []
        for start, stop in zip([0, *cuts], [*cuts, len(graph.node)], strict=True):
            later = set().union(*self._node_reads[stop:]) if stop < len(graph.node) else set()
            later |= {n for op in plan if op.index >= stop for n in self.operators[op.index].inputs}
            produced = [name for node in graph.node[start:stop] for name in node.output if name]
            outputs = [n for n in produced if n in wanted or n in keep_to_end or n in later]
            reads = set().union(*self._node_reads[start:stop]) if stop > start else set()
            inputs = (
                sorted(n for n in reads - set(produced) if n not in self._initializers) if cuts else self.input_names
            )
            segment_ops = [planned[i] for i in range(start, stop) if i in planned]
            release = [n for n in {*produced, *inputs} if last_read.get(n, -1) < stop and n not in keep_to_end]
            session = self._session(start, stop, inputs, outputs, len(cuts) > 0)
            segments.append(
                _Segment(start, stop, session, inputs, outputs, onnxrt.needs_ort_values(session), segment_ops, release)
            )
        self._segments = segments

    def _cuts(
        self, graph, wanted: set[str], producer: dict[str, int], last_read: dict[str, int], types: dict[str, object]
    ) -> list[int]:
        """Node indices before which the graph is cut: after each run of nodes whose exposed values pass the
        segment budget, where every value alive across the cut can cross it."""
        exposed = [0] * len(graph.node)
        for name in wanted:
            if name in producer:
                exposed[producer[name]] += self._bytes(types, name)
        if sum(exposed) <= self._segment_bytes:
            return []
        outputs = set(self.model_output_names)
        cuts, running, alive = [], 0, set()
        for index in range(1, len(graph.node)):
            running += exposed[index - 1]
            alive.update(name for name in graph.node[index - 1].output if name)
            alive = {name for name in alive if name in outputs or last_read.get(name, -1) >= index}
            if running >= self._segment_bytes and all(self._crossable(name) for name in alive):
                cuts.append(index)
                running = 0
        return cuts

    def _session(self, start: int, stop: int, inputs: list[str], outputs: list[str], cut: bool):
        """A session of nodes ``[start, stop)`` reading ``inputs`` and giving ``outputs`` (the whole graph with
        ``outputs`` added when it is not ``cut``)."""
        part = onnx.ModelProto()
        part.CopyFrom(self._proto)
        if cut:
            source = self._proto.graph
            part.ClearField("graph")
            graph = part.graph
            graph.name = source.name
            graph.node.extend(source.node[start:stop])
            reads = set().union(*self._node_reads[start:stop])
            graph.initializer.extend(init for init in source.initializer if init.name in reads)
            graph.sparse_initializer.extend(s for s in source.sparse_initializer if s.values.name in reads)
            for name in inputs:
                value = onnx.ValueInfoProto(name=name)
                value.type.tensor_type.elem_type = self._types[name].tensor_type.elem_type
                graph.input.append(value)
        graph = part.graph
        del graph.output[:]
        graph.output.extend(onnx.ValueInfoProto(name=name) for name in outputs)
        options = session_options(optimize=False, prepack=False)
        onnxrt.share_arena(options)
        self._weights.apply(options)
        try:
            return onnxrt.new_session(part.SerializeToString(), options)
        except Exception as exc:
            raise AclError(AclCode.ACL_ERROR_FAILURE, f"cannot expose {self.label}'s intermediates: {exc}") from None

    # ----- one execution -----

    def run(self, feeds: Sequence[np.ndarray]) -> Iterator[list[OpTensors]]:
        """One execution: the planned operators' tensors of each segment in turn (after :meth:`prepare`). The
        model's outputs are :attr:`outputs` once the iteration is over."""
        assert self._segments is not None, "prepare() before run()"
        self._weights.check(self.label)  # the sessions map the model file's weights: it must be the loaded one
        values: dict[str, np.ndarray] = dict(zip(self.input_names, feeds, strict=True))
        for segment in self._segments:
            try:
                results = onnxrt.run(
                    segment.session,
                    segment.output_names,
                    {name: values[name] for name in segment.input_names},
                    segment.ort_values,
                )
            except Exception as exc:
                raise ExecutionFailed(AclCode.ACL_ERROR_FAILURE, f"{self.label}: execution failed: {exc}") from None
            values.update(zip(segment.output_names, results, strict=True))
            yield [self._tensors(values, op) for op in segment.ops]
            for name in segment.release:
                values.pop(name, None)
        self.outputs = [values[name] if name in values else self._constants[name] for name in self.model_output_names]

    def _tensors(self, values: dict[str, np.ndarray], op: PlannedOp) -> OpTensors:
        operator = self.operators[op.index]

        def value(name: str) -> np.ndarray:
            return self._constants[name] if name in self._constants else values[name]

        inputs: list[np.ndarray | None] = [None] * len(operator.inputs)
        outputs: list[np.ndarray | None] = [None] * len(operator.outputs)
        for i in op.inputs:
            inputs[i] = value(operator.inputs[i])
        for i in op.outputs:
            outputs[i] = value(operator.outputs[i])
        return op, inputs, outputs

    @property
    def segments(self) -> int:
        """How many sessions the plan runs as (0 before :meth:`prepare`)."""
        return len(self._segments or ())
