"""The ops of a model (``aclmdlGetOpAttr``), read from its ONNX graph.

CANN answers one attribute, ``_datadump_original_op_names`` (``ACL_ATTR_NAME_DATA_DUMP_ORIGIN_OP_NAMES``): the
names of the framework ops ATC fused into the named op, so a dump can be matched to the original graph. An ONNX
graph run by onnxruntime fuses nothing that openacl reports, so every node's original op is itself: the answer is
the node's own name. Any other attribute, an op the graph does not have, or a description whose model is no
longer loaded (or was only described from a file) gives ``None``, as CANN's NULL does.
"""

from __future__ import annotations

from openacl.model import model as _model

ORIGIN_OP_NAMES = "_datadump_original_op_names"


def op_attr(model_id: int, op_name: str, attr: str) -> str | None:
    if attr != ORIGIN_OP_NAMES:
        return None
    model = _model.models.get(model_id) if model_id else None
    if model is None:
        return None
    if any(node.name == op_name for node in model.proto.graph.node):
        return op_name
    return None
