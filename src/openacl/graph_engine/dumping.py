"""GE's dump options (``ge.exec.enableDump``, ``dumpPath``, ``dumpMode``, ``dumpStep``, ``dumpData``,
``dumpLayer``): every operator's tensors of every run, in CANN's dump format, through the same machinery as
``acl.mdl`` dumps (:mod:`openacl.dump`), so ``openacl parse`` / ``compare`` and msprobe read them.

The options translate to the ``"dump"`` section of ``acl.init``'s JSON, whose validation then applies:
``enableDump`` must be "1" or "0" and ``dumpMode`` one of input/output/all, ``dumpStep`` GE's ``0|5|10-20``,
``dumpData`` tensor or stats, ``dumpLayer`` space-separated operator names; ``dumpPath`` is required with
``enableDump`` "1" (FAILED without it, as in GE) and must be an existing directory. Anything else wrong is
PARAM_INVALID. ``enableDumpDebug`` (overflow dumps) cannot be combined with ``enableDump`` (FAILED); alone it is
accepted and does nothing, since a CPU has no overflow detector. Files go under
``<dumpPath>/<timestamp>/<device id>/<graph name>/<graph id>/<step>/``; operators are the lowered graph's ONNX
nodes, named after the GE node whose outputs they write (helper nodes ``<GE node>/<ONNX type>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from openacl import lazy
from openacl.dump import session as _dumps
from openacl.dump.config import parse_dump_section
from openacl.errors import AclError, GeError, GeStatus
from openacl.model.observed import ObservedModel
from openacl.model.skeleton import Weights

onnx = lazy.module("onnx")

__all__ = ["DUMP_OPTIONS", "GraphDump", "dump_session"]

ENABLE, PATH, MODE, STEP, DATA, LAYER = (
    "ge.exec.enableDump",
    "ge.exec.dumpPath",
    "ge.exec.dumpMode",
    "ge.exec.dumpStep",
    "ge.exec.dumpData",
    "ge.exec.dumpLayer",
)
DEBUG, DEBUG_MODE = "ge.exec.enableDumpDebug", "ge.exec.dumpDebugMode"
DUMP_OPTIONS = (ENABLE, PATH, MODE, STEP, DATA, LAYER, DEBUG, DEBUG_MODE)


def dump_session(options: Mapping[str, str]) -> _dumps.DumpSession | None:
    """The dump a session's options ask for, or None; GeError (PARAM_INVALID or FAILED) for bad options."""
    enable = options.get(ENABLE, "0")
    debug = options.get(DEBUG, "0")
    for key, value in ((ENABLE, enable), (DEBUG, debug)):
        if value not in ("0", "1"):
            raise GeError(GeStatus.PARAM_INVALID, f"{key}={value!r}: must be '1' or '0'")
    if enable == "1" and debug == "1":
        raise GeError(GeStatus.FAILED, f"{ENABLE} and {DEBUG} cannot both be '1'")
    if debug == "1" and options.get(DEBUG_MODE, "all") not in ("aicore_overflow", "atomic_overflow", "all"):
        raise GeError(GeStatus.PARAM_INVALID, f"{DEBUG_MODE}={options[DEBUG_MODE]!r}")
    if enable != "1":
        return None
    path = options.get(PATH)
    if not path:
        raise GeError(GeStatus.FAILED, f"{PATH} is required when {ENABLE} is '1'")
    section: dict[str, Any] = {"dump_path": path, "dump_list": [{}]}
    if MODE in options:
        section["dump_mode"] = options[MODE]
    if STEP in options:
        section["dump_step"] = options[STEP]
    if DATA in options:
        section["dump_data"] = options[DATA]
    layers = options.get(LAYER, "").split()
    if layers:
        section["dump_list"] = [{"layer": layers}]
    try:
        config = parse_dump_section(section)
    except AclError as exc:
        raise GeError(GeStatus.PARAM_INVALID, f"dump options: {exc.detail}") from None
    return _dumps.DumpSession(config, "ge.exec options")


class GraphDump:
    """One built graph as the dump machinery sees a model: its dump state, name, id, steps, observed twin."""

    def __init__(self, session: _dumps.DumpSession, model: onnx.ModelProto, name: str, graph_id: int) -> None:
        self.state = _dumps.ModelDump(session)
        self.name = name
        self.id = graph_id
        self.executions = 0
        inputs = [i.name for i in model.graph.input]
        outputs = [o.name for o in model.graph.output]
        # A GE graph has no file, so its weights are in the graph and no external data is beside it.
        self.observed = ObservedModel(model, Weights(), f"graph {graph_id} ({name})", inputs, outputs)

    def next_step(self) -> int:
        """Called by the run that holds the graph (runs of one graph never overlap), so no lock."""
        step, self.executions = self.executions, self.executions + 1
        return step

    def dump(self, feeds: Sequence[np.ndarray], device_id: int) -> None:
        """Dump this step when the dump selects it. The step's outputs are the plain run's either way (the
        observed run beside it only feeds the dump), so a dump never changes what the graph returns."""
        step = _dumps.step_of(self.state, self.id, self.name, self.next_step(), None)
        if step is None:
            return
        observed = self.observed
        if step.needs_plan:
            step.plan(observed.ops, observed.skipped)
        if not step.start():
            return
        try:
            observed.prepare(step.ops)
            for tensors in observed.run(list(feeds)):
                step.emit(tensors, device_id, 0, borrowed=list(feeds))
        finally:
            step.seal()
        step.wait()
