"""A run plan: everything ``run_graph`` of one built graph works out before it executes, kept so that the next run
with inputs of the same kinds does only what cannot be cached (the input kinds, the variables, the run itself).

A plan is keyed, not re-validated. Its session keeps it under the graph id only while nothing it was made from has
changed: the session bumps its version and drops every plan whenever a graph is added or removed, a Summary/Save
callback is registered or replaced, or the session closes (GEFinalize closes every session); a plan made while the
version moved on is never stored (:meth:`openacl.graph_engine.session.Session._keep_plan`). The session options
(run mode, dumps) never change after creation. The inputs are keyed by :meth:`RunPlan.fits`: a run whose inputs are
not a list of exactly these dtypes and shapes takes the full path, which checks them and makes a new plan. A plan
never holds what changes from run to run: variable values are read at each run, under the session lock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from threading import Lock
from typing import Any

import numpy as np

from openacl.graph_engine._executable import Executable

__all__ = ["RunPlan"]

Callback = Callable[[int, dict[str, np.ndarray]], Any]
_ndarray = np.ndarray


class RunPlan:
    """One graph's run: its Executable, the callbacks it fires, the input kinds it was made for."""

    __slots__ = ("exe", "graph_id", "outputs", "run_lock", "save", "signature", "summary")

    def __init__(
        self,
        graph_id: int,
        exe: Executable,
        run_lock: Lock | None,
        arrays: Sequence[np.ndarray],
        summary: Callback | None,
        save: Callback | None,
        *,
        with_summary: bool,
    ) -> None:
        self.graph_id = graph_id
        self.exe = exe
        #: The graph's run lock (held for the whole run: GE_GRAPH_ALREADY_RUNNING while it is); None: not kept.
        self.run_lock = run_lock
        #: Invariant: each input's dtype and shape, exactly as the checked inputs of the run that made the plan.
        self.signature = tuple((a.dtype, a.shape) for a in arrays)
        self.summary = summary  # fired with the Summary tensors (train-mode run_graph only)
        self.save = save  # fired with the Save node's variables (train-mode run_graph only)
        #: What the caller gets of onnxruntime's results (``with_summary``: the Summary tensors stay at the end).
        self.outputs = exe.output_picker(with_summary=with_summary)

    def fits(self, inputs: list[Any]) -> bool:
        """Whether ``inputs`` are arrays of exactly the planned dtypes and shapes (so they need no other check)."""
        signature = self.signature
        if len(inputs) != len(signature):
            return False
        for value, (dtype, shape) in zip(inputs, signature):  # noqa: B905 (lengths compared above)
            if type(value) is not _ndarray or value.shape != shape:
                return False
            if value.dtype is not dtype and value.dtype != dtype:  # identity first: a builtin dtype is one object
                return False
        return True
