"""Model descriptions (``aclmdlDesc``): a snapshot of a model's inputs and outputs that outlives the model."""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.model import dynamic
from openacl.model import model as _model
from openacl.model.model import Model, TensorDesc
from openacl.runtime import memory
from openacl.runtime.handles import HandleTable


class ModelDesc:
    """What ``get_desc`` copies: inputs and outputs as pyACL reports them (a gear model's gear input last)."""

    __slots__ = ("gears", "inputs", "model_id", "outputs")

    def __init__(self) -> None:
        self.model_id = 0
        self.inputs: tuple[TensorDesc, ...] = ()
        self.outputs: tuple[TensorDesc, ...] = ()
        self.gears: dynamic.Gears | None = None

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

    def input_range(self, index: int) -> list[list[int]]:
        """``get_input_dims_range`` of input ``index`` (the gear input's own dims are fixed)."""
        desc = self.tensor("input", index)
        gears = self.gears if desc.name != dynamic.GEAR_INPUT_NAME else None
        return dynamic.input_range(desc.shape, gears, index)

    def current_output_dims(self, index: int) -> tuple[str, tuple[int, ...]]:
        """The dims of output ``index`` after the model's last execution or gear choice (for a gear model
        the largest gear before either); the described dims once the model is unloaded."""
        desc = self.tensor("output", index)
        model = _model.models.get(self.model_id) if self.model_id else None
        if model is None:
            return desc.name, desc.shape
        return desc.name, tuple(model.last_output_shapes[index])


descs: HandleTable[ModelDesc] = HandleTable("model description")


def create_desc() -> int:
    return descs.add(ModelDesc())


def destroy_desc(handle: int) -> None:
    descs.remove(handle)


def _fill(handle: int, model: Model) -> None:
    desc = descs.get(handle)
    desc.model_id, desc.inputs, desc.outputs, desc.gears = model.id, model.acl_inputs, model.acl_outputs, model.gears


def get_desc(handle: int, model_id: int) -> None:
    _fill(handle, _model.get(model_id))


def get_desc_from_file(handle: int, path: str) -> None:
    """``get_desc_from_file``: describe a model file without loading it (model id 0 in the description)."""
    descs.get(handle)
    real = _model.onnx_stand_in(path)
    _fill(handle, _model.describe_bytes(None, path, _model.check_model_file(real)))


def get_desc_from_memory(handle: int, addr: int, size: int) -> None:
    descs.get(handle)
    data = memory.read_bytes(addr, size) if size else b""
    _fill(handle, _model.describe_bytes(data, "memory"))


def tensor_real_name(handle: int, name: str) -> str | None:
    """``get_tensor_real_name``: openacl never shortens names (CANN does past 127 bytes), so a known name is
    its own real name; an unknown one gives None, as CANN's NULL does."""
    desc = descs.get(handle)
    known = {tensor.name for tensor in (*desc.inputs, *desc.outputs)}
    return name if name in known else None


def dims(name: str, shape: tuple[int, ...]) -> dict:
    """pyACL's dims dict."""
    return {"name": name, "dimCount": len(shape), "dims": list(shape)}
