"""``acl.mdl``: models, descriptions, datasets, execution and dumps, as pyACL declares them.

Models are ONNX files run by onnxruntime (see ``openacl.model``); dumps are CANN's format (``openacl.dump``).
"""

from __future__ import annotations

from openacl.acl._args import BARE, VALUE, VALUES, ArgumentTypeError, api
from openacl.dtypes import AclDataType, AclFormat
from openacl.dump import session as _dump
from openacl.model import dataset as _dataset
from openacl.model import desc as _desc
from openacl.model import dynamic as _dynamic
from openacl.model import execute as _execute
from openacl.model import model as _model
from openacl.runtime import device as _device

__all__ = [
    "add_dataset_buffer",
    "create_dataset",
    "create_desc",
    "destroy_dataset",
    "destroy_desc",
    "dump_reg_callback",
    "dump_unreg_callback",
    "execute",
    "execute_async",
    "finalize_dump",
    "get_aipp_type",
    "get_cur_output_dims",
    "get_dataset_buffer",
    "get_dataset_num_buffers",
    "get_desc",
    "get_desc_from_file",
    "get_desc_from_mem",
    "get_dynamic_batch",
    "get_dynamic_hw",
    "get_first_aipp_info",
    "get_input_data_type",
    "get_input_dims",
    "get_input_dims_range",
    "get_input_dims_v2",
    "get_input_dynamic_dims",
    "get_input_dynamic_gear_count",
    "get_input_format",
    "get_input_index_by_name",
    "get_input_name_by_index",
    "get_input_size_by_index",
    "get_num_inputs",
    "get_num_outputs",
    "get_output_data_type",
    "get_output_dims",
    "get_output_format",
    "get_output_index_by_name",
    "get_output_name_by_index",
    "get_output_size_by_index",
    "get_tensor_real_name",
    "init_dump",
    "load_from_file",
    "load_from_file_with_mem",
    "load_from_mem",
    "load_from_mem_with_mem",
    "query_size",
    "query_size_from_mem",
    "set_dump",
    "set_dynamic_batch_size",
    "set_dynamic_hw_size",
    "set_input_dynamic_dims",
    "unload",
]

_NO_DIMS: dict = {}  # pyACL's dims getters return an empty dict with a failing ret

# ----- models -----


@api("s", VALUE)
def load_from_file(model_path):
    return _model.load_from_file(model_path).id


@api("kk", VALUE)
def load_from_mem(model, model_size):
    return _model.load_from_memory(model, model_size).id


@api("skkkk", VALUE)
def load_from_file_with_mem(model_path, work_ptr, work_size, weight_ptr, weight_size):
    return _model.load_from_file_with_mem(model_path, work_ptr, work_size, weight_ptr, weight_size).id


@api("I")
def unload(model_id):
    _model.unload(model_id)


@api("s", VALUES, failure=(0, 0))
def query_size(file_name):
    return _model.query_size(file_name)


@api("kkkkkk", VALUE)
def load_from_mem_with_mem(model, model_size, work_ptr, work_size, weight_ptr, weight_size):
    return _model.load_from_mem_with_mem(model, model_size, work_ptr, work_size, weight_ptr, weight_size).id


@api("kk", VALUES, failure=(0, 0))
def query_size_from_mem(model, model_size):
    return _model.query_size_from_memory(model, model_size)


@api("Ikk")
def execute(model_id, input, output):
    _execute.execute(_model.get(model_id), input, output)


@api("Ikkk")
def execute_async(model_id, input, output, stream):
    _execute.execute_async(_model.get(model_id), input, output, _device.resolve(stream))


# ----- descriptions -----


@api("", BARE)
def create_desc():
    return _desc.create_desc()


@api("kI")
def get_desc(model_desc, model_id):
    _desc.get_desc(model_desc, model_id)


@api("ks")
def get_desc_from_file(model_desc, model_path):
    _desc.get_desc_from_file(model_desc, model_path)


@api("kkk")
def get_desc_from_mem(model_desc, model, model_size):
    _desc.get_desc_from_memory(model_desc, model, model_size)


@api("k")
def destroy_desc(model_desc):
    _desc.destroy_desc(model_desc)


@api("k", BARE)
def get_num_inputs(model_desc):
    return len(_desc.descs.get(model_desc).inputs)


@api("k", BARE)
def get_num_outputs(model_desc):
    return len(_desc.descs.get(model_desc).outputs)


def _tensor(model_desc: int, side: str, index: int):
    return _desc.descs.get(model_desc).tensor(side, index)


@api("kK", BARE)
def get_input_size_by_index(model_desc, index):
    return _tensor(model_desc, "input", index).size


@api("kK", BARE)
def get_output_size_by_index(model_desc, index):
    return _tensor(model_desc, "output", index).size


@api("kK", VALUE, failure=_NO_DIMS)
def get_input_dims(model_desc, index):
    tensor = _tensor(model_desc, "input", index)
    return _desc.dims(tensor.name, tensor.shape)


@api("kK", VALUE, failure=_NO_DIMS)
def get_input_dims_v2(model_desc, index):
    """The same dims as ``get_input_dims``: they differ only for static AIPP, which ONNX models do not have."""
    tensor = _tensor(model_desc, "input", index)
    return _desc.dims(tensor.name, tensor.shape)


@api("kK", VALUE, failure={})
def get_input_dims_range(model_desc, index):
    ranges = _desc.descs.get(model_desc).input_range(index)
    return {"rangeCount": len(ranges), "range": ranges}


@api("kK", VALUE, failure=_NO_DIMS)
def get_output_dims(model_desc, index):
    tensor = _tensor(model_desc, "output", index)
    return _desc.dims(tensor.name, tensor.shape)


@api("kK", VALUE, failure=_NO_DIMS)
def get_cur_output_dims(model_desc, index):
    return _desc.dims(*_desc.descs.get(model_desc).current_output_dims(index))


@api("kK", BARE, failure="")
def get_input_name_by_index(model_desc, index):
    return _tensor(model_desc, "input", index).name


@api("kK", BARE, failure="")
def get_output_name_by_index(model_desc, index):
    return _tensor(model_desc, "output", index).name


@api("kK", BARE, failure=int(AclDataType.ACL_DT_UNDEFINED))
def get_input_data_type(model_desc, index):
    return _tensor(model_desc, "input", index).acl_dtype


@api("kK", BARE, failure=int(AclDataType.ACL_DT_UNDEFINED))
def get_output_data_type(model_desc, index):
    return _tensor(model_desc, "output", index).acl_dtype


@api("kK", BARE, failure=int(AclFormat.ACL_FORMAT_UNDEFINED))
def get_input_format(model_desc, index):
    return _tensor(model_desc, "input", index).format


@api("kK", BARE, failure=int(AclFormat.ACL_FORMAT_UNDEFINED))
def get_output_format(model_desc, index):
    return _tensor(model_desc, "output", index).format


@api("ks", VALUE)
def get_input_index_by_name(model_desc, name):
    return _desc.descs.get(model_desc).index_by_name("input", name)


@api("ks", VALUE)
def get_output_index_by_name(model_desc, name):
    return _desc.descs.get(model_desc).index_by_name("output", name)


@api("ks", BARE, failure=None)
def get_tensor_real_name(model_desc, name):
    return _desc.tensor_real_name(model_desc, name)


# ----- dynamic batch, image size and dims (gears) -----


@api("k", VALUE, failure={})
def get_dynamic_batch(model_desc):
    return _dynamic.batch_info(_desc.descs.get(model_desc).gears)


@api("kk", VALUE, failure={})
def get_dynamic_hw(model_desc, index):
    """``index`` is unused, as in CANN (the documentation says pass -1)."""
    return _dynamic.hw_info(_desc.descs.get(model_desc).gears)


@api("kk", VALUE)
def get_input_dynamic_gear_count(model_desc, index):
    return _dynamic.gear_count(_desc.descs.get(model_desc).gears)


@api("kkk", VALUE, failure=None)
def get_input_dynamic_dims(model_desc, index, gear_count):
    """On any failure ``(None, ret)``: pyACL's own list on a C failure holds no usable items."""
    return _dynamic.dynamic_dims(_desc.descs.get(model_desc).gears, gear_count)


@api("IkkK")
def set_dynamic_batch_size(model_id, dataset, index, batch_size):
    _dynamic.set_gear(_model.get(model_id), dataset, index, _dynamic.Kind.BATCH, (batch_size,))


@api("IkkKK")
def set_dynamic_hw_size(model_id, dataset, index, height, width):
    _dynamic.set_gear(_model.get(model_id), dataset, index, _dynamic.Kind.HW, (height, width))


def _io_dims(value: object) -> list[int]:
    """An aclmdlIODims dict's ``dims``, converted as pyACL does: ``dimCount`` values of a list of ints."""
    if not isinstance(value, dict):
        raise ArgumentTypeError("argument 4 is not dict")
    count, dims = value.get("dimCount"), value.get("dims")
    if not isinstance(count, int) or count < 0:
        raise ArgumentTypeError("the dimCount of parameter 4 is not a non-negative int")
    if not isinstance(dims, list):
        raise ArgumentTypeError("The dims of parameter 4 is not a list.")
    if len(dims) < count or not all(isinstance(d, int) for d in dims[:count]):
        raise ArgumentTypeError("the dims of fourth parameter is not list of int")
    return dims[:count]


@api("IkkO")
def set_input_dynamic_dims(model_id, dataset, index, dims):
    values = _io_dims(dims)  # pyACL converts the dict before it calls C
    _dynamic.set_full_dims(_model.get(model_id), dataset, index, values)


# ----- AIPP (openacl's ONNX models have none) -----


@api("Ik", VALUES, failure=(0, 0))
def get_aipp_type(model_id, index):
    return _model.aipp_type(_model.get(model_id), index)


@api("Ik", VALUE, failure=None)
def get_first_aipp_info(model_id, index):
    return _model.first_aipp_info(_model.get(model_id), index)


# ----- datasets -----


@api("", BARE)
def create_dataset():
    return _dataset.create_dataset()


@api("kk", VALUE)
def add_dataset_buffer(dataset, data_buffer):
    _dataset.add_buffer(dataset, data_buffer)
    return dataset


@api("k", BARE)
def get_dataset_num_buffers(dataset):
    return _dataset.num_buffers(dataset)


@api("kK", BARE)
def get_dataset_buffer(dataset, index):
    return _dataset.get_buffer(dataset, index)


@api("k")
def destroy_dataset(dataset):
    _dataset.destroy_dataset(dataset)


# ----- dumps -----


@api("")
def init_dump():
    _dump.init_dump()


@api("|s")
def set_dump(dump_cfg_path=None):
    _dump.set_dump(dump_cfg_path)


@api("")
def finalize_dump():
    _dump.finalize_dump()


@api("Oi")
def dump_reg_callback(callback, flag):
    _dump.register_callback(callback, flag)


@api("", BARE, failure=None)
def dump_unreg_callback():
    _dump.unregister_callback()
