"""Graph Engine sessions with Summary and Save callbacks, run on onnxruntime: the status-code face of the engine
(:mod:`openacl.graph_engine`), shaped like GE's C++ API.

    from openacl import ge
    ge.ge_initialize({"ge.exec.deviceId": "0"})
    sess = ge.Session({"ge.graphRunMode": "1"})          # "1" = train: the callbacks fire
    g = ge.Graph("step") ...; sess.add_graph(1, g)
    sess.register_callback_func("Summary", ge.TensorBoardSummaryWriter("runs"))
    outputs, ret = sess.run_graph(1, [x])
"""

from __future__ import annotations

from openacl import process as _process  # noqa: F401  (the exit and fork hooks: a GE-only program needs them too)
from openacl.errors import GeStatus
from openacl.ge._session import Session, ge_finalize, ge_initialize, is_initialized
from openacl.graph_engine.graph import GE_DOMAIN, Graph, Tensor
from openacl.graph_engine.sinks import SafetensorsCheckpointWriter, TensorBoardSummaryWriter

__all__ = [
    "GE_DOMAIN",
    "GeStatus",
    "Graph",
    "SafetensorsCheckpointWriter",
    "Session",
    "Tensor",
    "TensorBoardSummaryWriter",
    "ge_finalize",
    "ge_initialize",
    "is_initialized",
]
