"""``openacl.ge``'s sessions: the engine's :class:`~openacl.graph_engine.session.Session` with GE status codes.

Guarantees:
- Every method returns a GE status (``GeStatus.SUCCESS`` is 0) or ``(value, status)``; bad input (unknown
  graph id, wrong inputs, an unbuildable graph) is a status and one log line, never an exception. Only arguments
  of the wrong Python type raise ``TypeError``. The engine raises ``GeError`` with the status and the line;
  :func:`openacl.ge._status.returns_status` turns it into both. Which status each failure gets, and when the
  callbacks fire, is the engine's (see each method there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from openacl import lazy
from openacl.errors import GeError, GeStatus
from openacl.ge._status import failed, returns_status
from openacl.graph_engine import device_tensors, state
from openacl.graph_engine import session as engine
from openacl.graph_engine.graph import Graph

onnx = lazy.module("onnx")

__all__ = ["Session", "ge_finalize", "ge_initialize", "is_initialized"]

is_initialized = state.is_initialized
_SUCCESS = GeStatus.SUCCESS  # run_graph is hot: an enum member read from its class is slow on 3.11


@returns_status()
def ge_initialize(options: Mapping[Any, Any] | None = None) -> None:
    """``GEInitialize``: SUCCESS, also when already initialised (new options are only warned about); FAILED for an
    empty option key."""
    state.ge_initialize(options)


@returns_status()
def ge_finalize() -> None:
    """``GEFinalize``: SUCCESS, also when not initialised; closes every session (queued async runs get FAILED)."""
    state.ge_finalize()


class Session:
    """``ge::Session`` (:class:`openacl.graph_engine.session.Session`), each method returning GE's status."""

    __slots__ = ("__weakref__", "_engine")

    def __init__(self, options: Mapping[Any, Any] | None = None) -> None:
        self._engine = engine.Session(options)

    @property
    def session_id(self) -> int:
        return self._engine.session_id

    @property
    def train(self) -> bool:
        """Train mode (``ge.graphRunMode`` >= 1): Summary and Save callbacks fire from ``run_graph``."""
        return self._engine.train

    @returns_status()
    def add_graph(self, graph_id: int, graph: Graph, options: Mapping[Any, Any] | None = None) -> None:
        """``AddGraph``: SUCCESS (also when the id exists: the first graph is kept), or FAILED; graph options are
        refused (FAILED), since every graph compiles the same way here."""
        self._engine.add_graph(graph_id, graph, options)

    @returns_status()
    def remove_graph(self, graph_id: int) -> None:
        """``RemoveGraph``: SUCCESS, or FAILED (also for an unknown id, as GE)."""
        self._engine.remove_graph(graph_id)

    @returns_status()
    def build_graph(self, graph_id: int, inputs: Sequence[Any] = ()) -> None:
        """``BuildGraph``: compile now; GE_GRAPH_GRAPH_NOT_EXIST, PARAM_INVALID or FAILED."""
        self._engine.build_graph(graph_id, inputs)

    def run_graph(self, graph_id: int, inputs: Sequence[Any]) -> tuple[list[np.ndarray], int]:
        """``RunGraph``: ``(outputs, status)``; in train mode the Summary and Save callbacks fire before it returns."""
        # ``@returns_status(value=list)`` spelled out: a training loop's call, where the wrapper's frame shows on a
        # tiny graph's run.
        try:
            return self._engine.run_graph(graph_id, inputs), _SUCCESS
        except GeError as exc:
            return [], failed(exc)

    @returns_status()
    def run_graph_async(
        self, graph_id: int, inputs: Sequence[Any], done: Callable[[int, list[np.ndarray]], Any]
    ) -> None:
        """``RunGraphAsync``: queue a run; ``done(status, outputs)`` runs on the session's worker thread."""
        self._engine.run_graph_async(graph_id, inputs, done)

    @returns_status()
    def register_external_allocator(self, stream: int, allocator: Any) -> None:
        """``RegisterExternalAllocator``: ``run_graph_with_stream_async`` outputs on ``stream`` come from it."""
        self._engine.register_external_allocator(stream, allocator)

    @returns_status()
    def unregister_external_allocator(self, stream: int) -> None:
        """``UnregisterExternalAllocator``: SUCCESS also when none was registered."""
        self._engine.unregister_external_allocator(stream)

    @returns_status(value=list)
    def run_graph_with_stream_async(
        self, graph_id: int, stream: int, inputs: Sequence[Any]
    ) -> list[device_tensors.DeviceTensor]:
        """``RunGraphWithStreamAsync``: ``(device outputs, status)`` at once; synchronize the stream to read them."""
        return self._engine.run_graph_with_stream_async(graph_id, stream, inputs)

    @returns_status(value=list)
    def get_variables(self, names: Sequence[str | bytes]) -> list[np.ndarray]:
        """``GetVariables``: ``(copies of the named variables, status)``; never fires the Save callback."""
        return self._engine.get_variables(names)

    @returns_status()
    def register_callback_func(self, key: str | bytes, callback: Callable[[int, dict[str, np.ndarray]], Any]) -> None:
        """``RegisterCallBackFunc``: ``callback(graph_id, params_list)`` for "Summary" or "Save"; as the CANN doc
        says, GE_SESSION_MANAGER_NOT_INIT before ``ge_initialize`` and PARAM_INVALID for another key."""
        self._engine.register_callback_func(key, callback)

    def compiled_model(self, graph_id: int) -> onnx.ModelProto | None:
        """A copy of the ONNX model a built graph runs as (for inspection and benchmarks); None if unbuilt."""
        return self._engine.compiled_model(graph_id)

    def close(self) -> None:
        """Release the graphs, variables and the async worker; safe to call twice. GEFinalize calls it."""
        self._engine.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._engine)
