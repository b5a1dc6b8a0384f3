"""``ge.session``: GE-PY's ``Session`` over the engine's :class:`openacl.graph_engine.session.Session`.

Conversions only: GE-PY's type checks (TypeError), ``Tensor`` to arrays and back, the engine's errors to
``GeError`` carrying the engine's error line (:func:`openacl.gepy.error.raising`). ``register_callback_func``
is openacl's extension (GE-PY has none): the engine's Summary/Save callbacks, with ``ge.graph.Tensor`` values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openacl.errors import GeError as EngineError
from openacl.gepy._handle import OpaqueHandle
from openacl.gepy.allocator import Allocator
from openacl.gepy.error import GeError, from_engine, raising
from openacl.gepy.graph.graph import Graph
from openacl.gepy.graph.tensor import Tensor
from openacl.graph_engine import device_tensors, errmsg
from openacl.graph_engine.session import Session as EngineSession

__all__ = ["GeError", "Session"]


class Session:
    """``Session(options=None)``: a GE session; options are GE's (``ge.graphRunMode`` "1" is train mode)."""

    __slots__ = ("__weakref__", "_session")
    _handle = OpaqueHandle()

    def __init__(self, options: dict[str, str] | None = None) -> None:
        if options is not None and not isinstance(options, dict):
            raise TypeError("option must be a dictionary")
        self._session = EngineSession(options)

    def add_graph(self, graph_id: int, graph: Graph, options: dict[str, str] | None = None) -> int:
        """``AddGraph``: 0, or GeError."""
        if not isinstance(graph_id, int):
            raise TypeError("Graph_id must be an integer")
        if not isinstance(graph, Graph):
            raise TypeError("Add_graph must be a Graph")
        if options is not None and not isinstance(options, dict):
            raise TypeError("options must be a dictionary")
        with raising("AddGraph", graph_id=graph_id):
            self._session.add_graph(graph_id, graph._graph, options)
        return 0

    def remove_graph(self, graph_id: int) -> None:
        if not isinstance(graph_id, int):
            raise TypeError("Graph_id must be an integer")
        with raising("RemoveGraph", graph_id=graph_id):
            self._session.remove_graph(graph_id)

    def run_graph(self, graph_id: int, inputs: list[Tensor]) -> list[Tensor]:
        """``RunGraph``: the outputs as host Tensors, in graph-output order."""
        if not isinstance(graph_id, int):
            raise TypeError("Graph_id must be an integer")
        arrays = _input_arrays(inputs)
        # What ``raising("RunGraph", graph_id=graph_id)`` does, spelled out: this is the call a training loop makes,
        # and the context manager (an object, its keyword dict, two calls) is about 0.4 µs of a tiny graph's run.
        errmsg.clear()
        try:
            outputs = self._session.run_graph(graph_id, arrays)
        except EngineError as exc:
            raise from_engine(exc, "RunGraph", graph_id=graph_id) from None
        wrap = Tensor._wrap
        return [wrap(array) for array in outputs]

    def run_graph_with_stream_async(self, graph_id: int, stream: int, inputs: list[Tensor]) -> list[Tensor]:
        """``RunGraphWithStreamAsync`` on an ``acl`` stream: device-placed output Tensors whose memory comes from
        the stream's registered allocator (else the device); synchronize the stream, then ``to_host()``."""
        if not isinstance(graph_id, int):
            raise TypeError("Graph_id must be an integer")
        if not isinstance(stream, int):
            raise TypeError("Stream must be an integer")
        if not isinstance(inputs, list):
            raise TypeError("inputs must be a list of Tensor")
        if not all(isinstance(t, Tensor) for t in inputs):
            raise TypeError("All elements in inputs must be the type of Tensor")
        with raising("RunGraphWithStreamAsync", graph_id=graph_id, stream=f"0x{stream:x}"):
            outputs = self._session.run_graph_with_stream_async(graph_id, stream, [t._engine_input() for t in inputs])
        return [Tensor._wrap_device(device) for device in outputs]

    def register_external_allocator(self, stream: int, allocator: Allocator) -> None:
        """Output memory of ``run_graph_with_stream_async`` on ``stream`` comes from ``allocator``."""
        if not isinstance(stream, int):
            raise TypeError("stream must be an integer")
        if not isinstance(allocator, Allocator):
            raise TypeError("allocator must be an Allocator instance")
        with raising("RegisterExternalAllocator", stream=f"0x{stream:x}"):
            self._session.register_external_allocator(stream, allocator)

    def unregister_external_allocator(self, stream: int) -> None:
        if not isinstance(stream, int):
            raise TypeError("stream must be an integer")
        with raising("UnregisterExternalAllocator", stream=f"0x{stream:x}"):
            self._session.unregister_external_allocator(stream)

    def register_callback_func(self, key: str, callback: Callable[[int, dict[str, Tensor]], Any]) -> int:
        """openacl's extension: ``callback(graph_id, params_list)`` for ``"Summary"`` or ``"Save"``.

        Fires from ``run_graph`` in train mode only, once per run and key, after the graph ran: Summary first,
        then Save. ``params_list`` maps Summary names (``Summary(x, name=...)``, else ``Summary_<n>``) or
        variable names to ``ge.graph.Tensor``; the return value is only logged when it is not 0. TypeError for a
        key that is not a str or a callback that is not callable; GeError before ``ge_initialize`` or for
        another key.
        """
        if not isinstance(key, str):
            raise TypeError("key must be a str")
        if not callable(callback):
            raise TypeError("callback must be callable")
        with raising("RegisterCallBackFunc", key=key):
            self._session.register_callback_func(key, _TensorCallback(callback))
        return 0

    def __copy__(self) -> None:
        raise RuntimeError("Session does not support copy")

    def __deepcopy__(self, memo: Any) -> None:
        raise RuntimeError("Session does not support deepcopy")


class _TensorCallback:
    """The engine calls back with arrays; the program's function gets ``ge.graph.Tensor`` values."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[int, dict[str, Tensor]], Any]) -> None:
        self.fn = fn

    def __call__(self, graph_id: int, params: dict[str, Any]) -> Any:
        return self.fn(graph_id, {name: Tensor._wrap(value) for name, value in params.items()})


def _input_arrays(inputs: Any) -> list[Any]:
    if not isinstance(inputs, list):
        raise TypeError("inputs must be a list of Tensor")
    arrays = []
    for tensor in inputs:
        if type(tensor) is not Tensor and not isinstance(tensor, Tensor):
            raise TypeError("All elements in inputs must be the type of Tensor")
        array = tensor._array  # a host tensor's data, as it is (the common case, without a call)
        if array is None:
            value = tensor._engine_input()
            array = device_tensors.read(value) if isinstance(value, device_tensors.DeviceTensor) else value
        arrays.append(array)
    return arrays
