"""The pyACL facade: ``import acl`` resolves here under ``openacl run`` or after ``openacl.install()``.

Top level: ``init``, ``finalize``, ``finalize_reference``, the data-buffer and tensor-desc functions,
application logging (``app_log``), the platform queries (``get_soc_name``, ``get_version``),
``get_recent_err_msg`` and the float16 conversions; submodules ``rt``, ``mdl``, ``op``, ``util``, ``media``,
``prof`` and ``blas``. Every function parses its arguments as pyACL does and maps runtime errors to return codes;
all state and checks live below the facade (``openacl.runtime``, ``openacl.op``, ``openacl.process``).
"""

from __future__ import annotations

from openacl import dtypes as _dtypes
from openacl import lazy as _lazy
from openacl import log as _log
from openacl import process as _process
from openacl.acl._args import BARE, VALUE, VALUES, ArgumentTypeError, ArgumentValueError, api, int_list
from openacl.dtypes import acl_dtype_size
from openacl.runtime import buffers as _buffers
from openacl.runtime import exceptions as _exceptions
from openacl.runtime import platform as _platform

# Tensor descs are the operator library's (floor 3): loaded by the first tensor-desc call, not by ``import acl``.
_format_trans = _lazy.module("openacl.op.format_trans")
_desc = _lazy.module("openacl.op.tensor_desc")

# Each submodule is imported on its first read (``acl.rt``, ``from acl import mdl``, ``import acl.media``): a
# program that only sets a device loads neither models, nor operators, nor DVPP.
SUBMODULES = ("rt", "mdl", "op", "util", "media", "prof", "blas")
__getattr__, __dir__ = _lazy.submodules(__name__, SUBMODULES)

__all__ = [
    "app_log",
    "blas",
    "create_data_buffer",
    "create_tensor_desc",
    "data_type_size",
    "destroy_data_buffer",
    "destroy_tensor_desc",
    "finalize",
    "finalize_reference",
    "float16_to_float",
    "float_to_float16",
    "get_data_buffer_addr",
    "get_data_buffer_size",
    "get_data_buffer_size_v2",
    "get_recent_err_msg",
    "get_soc_name",
    "get_tensor_desc_dim",
    "get_tensor_desc_dim_range",
    "get_tensor_desc_dim_v2",
    "get_tensor_desc_element_count",
    "get_tensor_desc_format",
    "get_tensor_desc_name",
    "get_tensor_desc_num_dims",
    "get_tensor_desc_size",
    "get_tensor_desc_type",
    "get_version",
    "init",
    "mdl",
    "media",
    "op",
    "prof",
    "rt",
    "set_tensor_const",
    "set_tensor_desc_name",
    "set_tensor_dynamic_input",
    "set_tensor_format",
    "set_tensor_origin_format",
    "set_tensor_origin_shape",
    "set_tensor_place_ment",
    "set_tensor_shape",
    "set_tensor_shape_range",
    "set_tensor_storage_format",
    "set_tensor_storage_shape",
    "set_tensor_value_range",
    "trans_tensor_desc_format",
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


# ----- tensor descs -----


@api("iOi", BARE)
def create_tensor_desc(data_type, dims, format):
    return _desc.create(data_type, int_list(dims, "acl.create_tensor_desc", "dims"), format)


@api("ki", VALUE)
def trans_tensor_desc_format(src_desc, dst_format):
    return _format_trans.trans_format(src_desc, dst_format)


@api("k", BARE, failure=None)
def destroy_tensor_desc(desc):
    _desc.destroy(desc)


@api("i", BARE)
def data_type_size(data_type):
    return acl_dtype_size(data_type)


@api("k", BARE, failure=-1)
def get_tensor_desc_type(desc):
    return _desc.get(desc).dtype


@api("k", BARE, failure=-1)
def get_tensor_desc_format(desc):
    return _desc.get(desc).format


@api("k", BARE)
def get_tensor_desc_size(desc):
    return _desc.get(desc).size()


@api("k", BARE)
def get_tensor_desc_element_count(desc):
    return _desc.get(desc).element_count()


@api("k", BARE)
def get_tensor_desc_num_dims(desc):
    return _desc.get(desc).num_dims()


@api("kk", BARE, failure=-1)
def get_tensor_desc_dim(desc, index):
    return _desc.get(desc).dim(index)


@api("kk", VALUE, failure=-1)
def get_tensor_desc_dim_v2(desc, index):
    return _desc.get(desc).dim(index)


@api("kkk", VALUE, failure=None)
def get_tensor_desc_dim_range(desc, index, dim_range_num):
    return _desc.get(desc).dim_range(index, dim_range_num)


@api("k", BARE, failure=None)
def get_tensor_desc_name(desc):
    return _desc.get(desc).name


@api("ks", BARE, failure=None)
def set_tensor_desc_name(desc, name):
    _desc.set_name(desc, name)


def _dims(value: object, qualname: str) -> list[int]:
    dims = int_list(value, qualname, "dims")
    if not dims:
        raise ArgumentValueError("list is empty")
    return dims


@api("kO")
def set_tensor_shape(desc, dims):
    _desc.set_shape(desc, _dims(dims, "acl.set_tensor_shape"))


@api("kO")
def set_tensor_origin_shape(desc, dims):
    _desc.set_origin_shape(desc, int_list(dims, "acl.set_tensor_origin_shape", "dims"))


@api("kO")
def set_tensor_storage_shape(desc, dims):
    _desc.set_storage_shape(desc, int_list(dims, "acl.set_tensor_storage_shape", "dims"))


@api("ki")
def set_tensor_format(desc, format):
    _desc.set_format(desc, format)


@api("ki")
def set_tensor_origin_format(desc, format):
    _desc.set_origin_format(desc, format)


@api("ki")
def set_tensor_storage_format(desc, format):
    _desc.set_storage_format(desc, format)


@api("ks")
def set_tensor_dynamic_input(desc, dynamic_input_name):
    _desc.set_dynamic_input(desc, dynamic_input_name)


def _ranges(value: object, qualname: str) -> list:
    if not isinstance(value, list) or not all(isinstance(item, list | tuple) for item in value):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    return value


@api("kO")
def set_tensor_shape_range(desc, dims_range):
    _desc.set_shape_range(desc, _ranges(dims_range, "acl.set_tensor_shape_range"))


@api("kO")
def set_tensor_value_range(desc, value_range):
    _desc.set_value_range(desc, _ranges(value_range, "acl.set_tensor_value_range"))


@api("kkk")
def set_tensor_const(desc, data_buffer, length):
    _desc.set_const(desc, data_buffer, length)


@api("ki")
def set_tensor_place_ment(desc, memory_type):
    _desc.set_placement(desc, memory_type)


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
