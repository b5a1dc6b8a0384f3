"""Model descriptions (``aclmdlDesc``): a snapshot of a model's inputs and outputs that outlives the model."""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.model import model as _model
from openacl.model.model import TensorDesc
from openacl.runtime.handles import HandleTable


class ModelDesc:
    __slots__ = ("inputs", "model_id", "outputs")

    def __init__(self) -> None:
        self.model_id = 0
        self.inputs: tuple[TensorDesc, ...] = ()
        self.outputs: tuple[TensorDesc, ...] = ()

    def tensor(self, side: str, index: int) -> TensorDesc:
        tensors = self.inputs if side == "input" else self.outputs
        if not 0 <= index < len(tensors):
            raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"the model has {len(tensors)} {side}s, no index {index}")
        return tensors[index]

    def index_by_name(self, side: str, name: str) -> int:
        tensors = self.inputs if side == "input" else self.outputs
        for index, desc in enumerate(tensors):
            if desc.name == name:
                return index
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"the model has no {side} named {name!r}")

    def current_output_dims(self, index: int) -> tuple[str, tuple[int, ...]]:
        """The dims of output ``index`` after the model's last execution (its static dims before one)."""
        desc = self.tensor("output", index)
        model = _model.models.get(self.model_id)
        if model is None:
            return desc.name, desc.shape
        return desc.name, tuple(model.last_output_shapes[index])


descs: HandleTable[ModelDesc] = HandleTable("model description")


def create_desc() -> int:
    return descs.add(ModelDesc())


def destroy_desc(handle: int) -> None:
    descs.remove(handle)


def get_desc(handle: int, model_id: int) -> None:
    desc = descs.get(handle)
    model = _model.get(model_id)
    desc.model_id, desc.inputs, desc.outputs = model.id, model.inputs, model.outputs


def dims(name: str, shape: tuple[int, ...]) -> dict:
    """pyACL's dims dict."""
    return {"name": name, "dimCount": len(shape), "dims": list(shape)}
