"""The pyACL facade: ``import acl`` resolves here under ``openacl run`` or after ``openacl.install()``.

Top level: ``init``, ``finalize``, ``finalize_reference``, the data-buffer functions, application logging
(``app_log``), the platform queries (``get_soc_name``, ``get_version``), ``get_recent_err_msg`` and the float16
conversions; submodules ``rt``, ``mdl`` and ``util``. Every function parses its arguments as pyACL does and
maps runtime errors to return codes; all state and checks live in ``openacl.runtime``.
"""

from __future__ import annotations

from openacl import dtypes as _dtypes
from openacl import log as _log
from openacl.acl import mdl, rt, util
from openacl.acl._args import BARE, VALUE, VALUES, api
from openacl.runtime import exceptions as _exceptions
from openacl.runtime import memory as _memory
from openacl.runtime import platform as _platform
from openacl.runtime import state as _state

SUBMODULES = ("rt", "mdl", "util")

__all__ = [
    "app_log",
    "create_data_buffer",
    "destroy_data_buffer",
    "finalize",
    "finalize_reference",
    "float16_to_float",
    "float_to_float16",
    "get_data_buffer_addr",
    "get_data_buffer_size",
    "get_data_buffer_size_v2",
    "get_recent_err_msg",
    "get_soc_name",
    "get_version",
    "init",
    "mdl",
    "rt",
    "update_data_buffer",
    "util",
]


@api("|s")
def init(config_path=None):
    _state.init(config_path or None)


@api("")
def finalize():
    _state.finalize()


@api("", VALUE)
def finalize_reference():
    return _state.finalize_reference()


@api("kK", BARE)
def create_data_buffer(data, size):
    return _memory.create_data_buffer(data, size)


@api("k")
def destroy_data_buffer(data_buffer):
    _memory.destroy_data_buffer(data_buffer)


@api("k", BARE)
def get_data_buffer_addr(data_buffer):
    return _memory.data_buffers.get(data_buffer).addr


@api("k", BARE)
def get_data_buffer_size(data_buffer):
    return _memory.data_buffers.get(data_buffer).size & 0xFFFFFFFF


@api("k", BARE)
def get_data_buffer_size_v2(data_buffer):
    return _memory.data_buffers.get(data_buffer).size


@api("kkK")
def update_data_buffer(data_buffer, data, size):
    _memory.update_data_buffer(data_buffer, data, size)


# ----- logging, platform, errors -----


@api("is", BARE, failure=None)
def app_log(log_level, message):
    _log.app_log(log_level, message)


@api("", BARE, failure=None)
def get_soc_name():
    return _platform.soc_name()


@api("", VALUES, failure=(0, 0, 0))
def get_version():
    return _platform.version()


@api("", BARE, failure=None)
def get_recent_err_msg():
    return _exceptions.take_recent_messages()


@api("H", BARE, failure=0.0)
def float16_to_float(value):
    return _dtypes.float16_bits_to_float(value)


@api("f", BARE)
def float_to_float16(value):
    return _dtypes.float_to_float16_bits(value)
