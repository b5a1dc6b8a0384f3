"""Datasets (``aclmdlDataset``): ordered lists of data buffers, a model's inputs or outputs.

A dataset also holds one tensor desc (``aclTensorDesc``) per buffer index, as CANN's does:
``set_dataset_tensor_desc`` stores the caller's desc handle (not a copy; the caller still owns and destroys
it), and an input's desc gives the real dims of a dynamic-shape input when the model runs. After each
execution, every output index holds a desc the dataset owns with the dims, dtype and format the model
produced (CANN fills them for dynamic-shape models; openacl for every model), which ``get_dataset_tensor_desc``
returns and ``destroy_dataset`` destroys. ``set_dataset_tensor_desc`` needs an index below the dataset's buffer
count (``ACL_ERROR_INVALID_PARAM`` otherwise, as CANN checks).

Invariant: a dataset changes only here (its buffers, its descs, its destruction), and each change renews its
``version`` stamp after the new contents are in (``runtime.versions``): a model's execution plan
(``model.plan``) sees the change by the stamp alone.
"""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.op import tensor_desc as _tensor_desc
from openacl.runtime import checker
from openacl.runtime.buffers import DataBuffer, data_buffers
from openacl.runtime.handles import HandleTable
from openacl.runtime.versions import renew, stamp


class Dataset:
    """Holds data-buffer handles, not the buffers: a buffer destroyed later is caught when the model runs."""

    __slots__ = ("buffers", "owned_descs", "tensor_descs", "version")

    def __init__(self) -> None:
        self.buffers: list[int] = []
        self.tensor_descs: dict[int, int] = {}  # buffer index -> tensor desc handle
        self.owned_descs: set[int] = set()  # the descs an execution created (destroyed with the dataset)
        self.version = stamp()

    def resolve(self, what: str) -> list[DataBuffer]:
        out = []
        for index, handle in enumerate(self.buffers):
            if handle not in data_buffers:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"{what} buffer {index} was destroyed")
            out.append(data_buffers.get(handle))
        return out


datasets: HandleTable[Dataset] = HandleTable("dataset")


def create_dataset() -> int:
    return datasets.add(Dataset())


def destroy_dataset(handle: int) -> None:
    dataset = datasets.remove(handle)
    renew(dataset)
    for desc in dataset.owned_descs:
        if desc in _tensor_desc.tensor_descs:
            _tensor_desc.destroy(desc)


def add_buffer(handle: int, buffer: int) -> None:
    dataset = datasets.get(handle)
    data_buffers.get(buffer)  # must exist now
    dataset.buffers.append(buffer)
    renew(dataset)


def num_buffers(handle: int) -> int:
    return len(datasets.get(handle).buffers)


def get_buffer(handle: int, index: int) -> int:
    buffers = datasets.get(handle).buffers
    if not 0 <= index < len(buffers):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"dataset has {len(buffers)} buffers, no index {index}")
    return buffers[index]


# ----- tensor descs -----


def set_tensor_desc(handle: int, desc: int, index: int) -> None:
    dataset = datasets.get(handle)
    _tensor_desc.get(desc)  # must exist now
    if not 0 <= index < len(dataset.buffers):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"dataset has {len(dataset.buffers)} buffers, no index {index}")
    previous = dataset.tensor_descs.get(index)
    if previous in dataset.owned_descs and previous != desc:
        dataset.owned_descs.discard(previous)
        if previous in _tensor_desc.tensor_descs:
            _tensor_desc.destroy(previous)
    dataset.tensor_descs[index] = desc
    renew(dataset)


def get_tensor_desc(handle: int, index: int) -> int:
    """The desc at ``index``; 0 (CANN's NULL) for an index without one or out of range."""
    desc = datasets.get(handle).tensor_descs.get(index, 0)
    return desc if desc in _tensor_desc.tensor_descs else 0


def input_dims(handle: int, index: int) -> tuple[int, ...] | None:
    """The dims the caller's desc gives input ``index``, or None without one (a destroyed desc counts as none)."""
    dataset = datasets.get(handle)
    desc = dataset.tensor_descs.get(index)
    if desc is None or desc not in _tensor_desc.tensor_descs:
        return None
    return _tensor_desc.get(desc).dims


def publish_output(handle: int, index: int, acl_dtype: int, dims: tuple[int, ...], fmt: int) -> None:
    """After an execution: output ``index`` of dataset ``handle`` gets a desc of what the model produced.

    A desc the dataset owns is updated in place; a caller's desc at that index is left as it is, and a
    dataset destroyed meanwhile is skipped (the model already wrote its buffers)."""
    dataset = datasets.get(handle) if handle in datasets else None
    if dataset is None:
        return
    current = dataset.tensor_descs.get(index)
    if current in dataset.owned_descs and current in _tensor_desc.tensor_descs:
        desc = _tensor_desc.get(current)
        dims = tuple(dims)
        if desc.dtype != acl_dtype or desc.dims != dims or desc.format != fmt:
            desc.dtype, desc.dims, desc.format = acl_dtype, dims, fmt
        # else unchanged, and its stamp with it: a model run again and again moves no version on (``versions``),
        # which would make every call plan read its stamps again
        return
    if current is not None and current in _tensor_desc.tensor_descs:
        return
    created = _tensor_desc.create(acl_dtype, list(dims), fmt)
    if checker.enabled:
        checker.disown(_tensor_desc.tensor_descs.kind, created)  # the dataset's, destroyed with it
    dataset.owned_descs.add(created)
    dataset.tensor_descs[index] = created
    renew(dataset)
