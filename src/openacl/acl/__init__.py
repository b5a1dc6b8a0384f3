"""The pyACL facade: ``import acl`` resolves here under ``openacl run`` or after ``openacl.install()``.

Top level: ``init``, ``finalize``, ``finalize_reference`` and the data-buffer functions; submodules ``rt``, ``mdl``
and ``util``. Every function parses its arguments as pyACL does and maps runtime errors to return codes; all
state and checks live in ``openacl.runtime``.
"""

from __future__ import annotations

from openacl import process as _process
from openacl.acl import mdl, rt, util
from openacl.acl._args import BARE, VALUE, api
from openacl.runtime import buffers as _buffers

SUBMODULES = ("rt", "mdl", "util")

__all__ = [
    "create_data_buffer",
    "destroy_data_buffer",
    "finalize",
    "finalize_reference",
    "get_data_buffer_addr",
    "get_data_buffer_size",
    "get_data_buffer_size_v2",
    "init",
    "mdl",
    "rt",
    "update_data_buffer",
    "util",
]


@api("|s")
def init(config_path=None):
    _process.init(config_path or None)


@api("")
def finalize():
    _process.finalize()


@api("", VALUE)
def finalize_reference():
    return _process.finalize_reference()


@api("kK", BARE)
def create_data_buffer(data, size):
    return _buffers.create_data_buffer(data, size)


@api("k")
def destroy_data_buffer(data_buffer):
    _buffers.destroy_data_buffer(data_buffer)


@api("k", BARE)
def get_data_buffer_addr(data_buffer):
    return _buffers.data_buffers.get(data_buffer).addr


@api("k", BARE)
def get_data_buffer_size(data_buffer):
    return _buffers.data_buffers.get(data_buffer).size & 0xFFFFFFFF


@api("k", BARE)
def get_data_buffer_size_v2(data_buffer):
    return _buffers.data_buffers.get(data_buffer).size


@api("kkK")
def update_data_buffer(data_buffer, data, size):
    _buffers.update_data_buffer(data_buffer, data, size)
