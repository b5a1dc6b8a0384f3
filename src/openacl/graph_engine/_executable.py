"""A compiled graph bound to an onnxruntime session, with every per-run index worked out once.

``run_graph`` costs one onnxruntime ``run`` plus a few list and dict operations: the feed names, the output
names and which output goes where (user, Summary, Save, Assign) are all fixed here, at build time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from openacl import dtypes, lazy, onnxrt
from openacl.graph_engine import _lower
from openacl.graph_engine.graph import Graph
from openacl.graph_engine.passes import CompiledGraph, checkpoint_handle

onnx = lazy.module("onnx")
ort = lazy.module("onnxruntime")

InputSpec = tuple[str, np.dtype, tuple[int | None, ...] | None]


def input_specs(graph: Graph) -> list[InputSpec]:
    """``(name, dtype, shape)`` of each Data node, by index (``None`` = any size)."""
    data = sorted((n for n in graph.nodes if n.type == "Data"), key=lambda n: n.attrs["index"])
    return [(n.name, n.attrs["dtype"], n.attrs["shape"]) for n in data]


def check_inputs(specs: Sequence[InputSpec], inputs: Sequence[Any]) -> tuple[list[np.ndarray], str | None]:
    """The inputs as arrays, or a one-line reason why they do not fit the Data nodes (count, dtype, shape)."""
    if len(inputs) != len(specs):
        return [], f"expects {len(specs)} input(s), got {len(inputs)}"
    arrays = []
    for i, (value, (name, dtype, shape)) in enumerate(zip(inputs, specs, strict=True)):
        if type(value) is not np.ndarray:
            try:
                value = np.asarray(value)
            except (ValueError, TypeError) as exc:
                return [], f"input {i} ({name}) is not an array: {exc}"
        if value.dtype != dtype:
            return [], f"input {i} ({name}) has dtype {value.dtype}, expected {dtype}"
        got = value.shape
        if shape is None or got == shape:  # None: a 0-dim Data before its first run takes any shape
            arrays.append(value)
            continue
        if len(got) != len(shape) or any(d is not None and d != g for d, g in zip(shape, got, strict=True)):
            want = tuple("?" if d is None else d for d in shape)
            return [], f"input {i} ({name}) has shape {got}, expected {want}"
        arrays.append(value)
    return arrays, None


def read_only_dict(results: list[np.ndarray], named: Sequence[tuple[str, int, bool]]) -> dict[str, np.ndarray]:
    """``{name: a read-only view of results[i]}`` for each ``(name, i, copy)``, of a copy where ``copy``: callbacks
    see the data without being able to change what the session holds (``setflags``: half the cost of assigning
    ``flags.writeable``; a loop spelled out: every train-mode run makes one)."""
    params = {}
    for name, i, copy in named:
        view = results[i].copy() if copy else results[i].view()
        view.setflags(write=False)
        params[name] = view
    return params


class Executable:
    """One onnxruntime session for one compiled graph, and the plan for a run's inputs and outputs."""

    def __init__(self, compiled: CompiledGraph, var_types: _lower.VarTypes) -> None:
        self.compiled = compiled
        self.model, self.output_names = _lower.lower(compiled, var_types)
        self._descs: list[tuple[np.dtype, tuple[int, ...]] | None] | None = None
        #: Set by the session when its dump options ask for dumps (:class:`openacl.graph_engine.dumping.GraphDump`).
        self.dump: Any = None
        options = ort.SessionOptions()
        options.log_severity_level = onnxrt.ORT_LOG_ERROR
        # A graph whose outputs are all unwired (GE builds it with an empty NetOutput) runs nothing.
        self.session = onnxrt.new_session(self.model.SerializeToString(), options) if self.output_names else None
        # onnxruntime's Python run() validates the feed names on every call, which check_inputs and the fixed feed
        # names already guarantee; its C entry point takes the same arguments and saves a fifth of a tiny graph's
        # run. The public method serves where that entry point is missing.
        self._run = None
        if self.session is not None:
            inner = getattr(self.session, "_sess", None)
            self._run = inner.run if callable(getattr(inner, "run", None)) else self.session.run
        pos = _lower.output_positions(compiled)
        outputs = compiled.outputs
        self.data_names = [n.name for n in compiled.data]
        # A variable the session has no value for yet, which this graph only assigns, is not an input.
        self.var_names = [name for name in compiled.variables if name in var_types]
        self._feed_names = self.data_names + self.var_names
        # Invariant: positions into the list onnxruntime returns for ``output_names``.
        self.all_outputs = [pos[t] for t in outputs]
        self.plain_outputs = [pos[t] for t in compiled.checkpoint_outputs]
        self._all_dups, self._plain_dups = _repeats(self.all_outputs), _repeats(self.plain_outputs)
        # (name, position, copy): a Summary tensor that is also one of the caller's (train-mode) outputs is copied
        # for the callback, so that writing into that output never changes what the callback keeps. A Save tensor is
        # not: a checkpoint graph's outputs are its Save variables, and a copy would double a checkpoint's cost
        # (docs/ge.md says so).
        given = set(self.plain_outputs)
        self.summary = [(name, pos[outputs[i]], pos[outputs[i]] in given) for name, i in compiled.summary_index.items()]
        self.save: list[tuple[str, int, bool]] = []
        if compiled.is_checkpoint_graph and compiled.checkpoint_outputs:
            view = Graph(compiled.name)
            view.nodes, view.outputs = compiled.nodes, compiled.checkpoint_outputs
            positions = checkpoint_handle(view, self.plain_outputs)
            self.save = [(name, i, False) for name, i in positions.items()]
        returned = set(self.all_outputs)
        self.assigns = [
            (var, pos[tensor], *var_types.get(var, (None, None)), pos[tensor] in returned)
            for var, tensor in compiled.assigns.items()
        ]

    def output_descs(self) -> list[tuple[np.dtype, tuple[int, ...]] | None]:
        """``(dtype, shape)`` of each output ``outputs(with_summary=True)`` gives, from ONNX shape inference;
        None for one whose shape is not static."""
        if self._descs is None:
            inferred = onnx.shape_inference.infer_shapes(self.model)
            infos = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]}
            descs: list[tuple[np.dtype, tuple[int, ...]] | None] = []
            for i in self.all_outputs:
                info = infos.get(self.output_names[i])
                tensor_type = info.type.tensor_type if info is not None else None
                if tensor_type is None or not tensor_type.elem_type or not tensor_type.HasField("shape"):
                    descs.append(None)
                    continue
                dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim]
                ok = all(d >= 0 for d in dims)
                descs.append((dtypes.numpy_from_onnx(tensor_type.elem_type), tuple(dims)) if ok else None)
            self._descs = descs
        return self._descs

    @property
    def is_summary_graph(self) -> bool:
        return bool(self.summary)

    def run(self, arrays: Sequence[np.ndarray], variables: Sequence[np.ndarray]) -> list[np.ndarray]:
        """onnxruntime's outputs for ``output_names``. The caller gives one array per Data node and per variable in
        ``var_names`` (checked inputs or a plan's, read variables), so the names are zipped without a count check."""
        if self._run is None:
            return []
        feeds = dict(zip(self._feed_names, [*arrays, *variables] if variables else arrays))  # noqa: B905
        return self._run(self.output_names, feeds, None)

    def new_variables(self, results: list[np.ndarray]) -> tuple[dict[str, np.ndarray], str | None]:
        """The Assign results as read-only arrays, or why one does not fit its variable."""
        updates = {}
        for var, i, dtype, shape, returned in self.assigns:
            value = results[i]
            if dtype is not None and (value.shape != shape or (value.dtype is not dtype and value.dtype != dtype)):
                return {}, f"Assign gives variable {var!r} {value.dtype}{list(value.shape)}, not {dtype}{list(shape)}"
            value = value.copy() if returned else value  # the caller gets that array and may write to it
            value.setflags(write=False)
            updates[var] = value
        return updates, None

    def outputs(self, results: list[np.ndarray], *, with_summary: bool) -> list[np.ndarray]:
        """What the caller gets: the graph outputs, with or without the Summary tensors at the end.

        A tensor wanted twice comes back once from onnxruntime; the second place gets a copy, so that
        writing to one output never changes another.
        """
        positions, dups = (self.all_outputs, self._all_dups) if with_summary else (self.plain_outputs, self._plain_dups)
        outs = [results[i] for i in positions]
        for j in dups:
            outs[j] = outs[j].copy()
        return outs

    def output_picker(self, *, with_summary: bool) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
        """``outputs(results, with_summary=...)`` as one call a plan keeps: a slice (no Python frame) in the common
        layout, where the outputs wanted are the first ones onnxruntime returns, in order."""
        positions = self.all_outputs if with_summary else self.plain_outputs
        if positions == list(range(len(positions))):
            return itemgetter(slice(len(positions)))
        return functools.partial(self.outputs, with_summary=with_summary)


def _repeats(positions: list[int]) -> list[int]:
    seen: set[int] = set()
    repeats = []
    for j, i in enumerate(positions):
        if i in seen:
            repeats.append(j)
        seen.add(i)
    return repeats
