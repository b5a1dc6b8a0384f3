"""Graph Engine sessions with Summary and Save callbacks, run on onnxruntime.

    from openacl import ge
    ge.ge_initialize({"ge.exec.deviceId": "0"})
    sess = ge.Session({"ge.graphRunMode": "1"})          # "1" = train: the callbacks fire
    g = ge.Graph("step") ...; sess.add_graph(1, g)
    sess.register_callback_func("Summary", ge.TensorBoardSummaryWriter("runs"))
    outputs, ret = sess.run_graph(1, [x])

The engine is :mod:`openacl.graph_engine`; this package is its status-code face.
"""

from __future__ import annotations

from openacl.errors import GeStatus
from openacl.graph_engine.graph import GE_DOMAIN, Graph, Tensor
from openacl.graph_engine.session import GEFinalize, GEInitialize, Session, ge_finalize, ge_initialize, is_initialized
from openacl.graph_engine.sinks import SafetensorsCheckpointWriter, TensorBoardSummaryWriter

__all__ = [
    "GE_DOMAIN",
    "GEFinalize",
    "GEInitialize",
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
