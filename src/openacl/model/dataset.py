"""Datasets (``aclmdlDataset``): ordered lists of data buffers, a model's inputs or outputs."""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.runtime.buffers import DataBuffer, data_buffers
from openacl.runtime.handles import HandleTable


class Dataset:
    """Holds data-buffer handles, not the buffers: a buffer destroyed later is caught when the model runs."""

    __slots__ = ("buffers",)

    def __init__(self) -> None:
        self.buffers: list[int] = []

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
    datasets.remove(handle)


def add_buffer(handle: int, buffer: int) -> None:
    dataset = datasets.get(handle)
    data_buffers.get(buffer)  # must exist now
    dataset.buffers.append(buffer)


def num_buffers(handle: int) -> int:
    return len(datasets.get(handle).buffers)


def get_buffer(handle: int, index: int) -> int:
    buffers = datasets.get(handle).buffers
    if not 0 <= index < len(buffers):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"dataset has {len(buffers)} buffers, no index {index}")
    return buffers[index]
