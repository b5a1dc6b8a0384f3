"""``acl.mdl``: models, descriptions, datasets, execution and dumps, as pyACL declares them.

Models are ONNX files run by onnxruntime (see ``openacl.model``); dumps are CANN's format (``openacl.dump``).
"""

from __future__ import annotations

from openacl.acl._args import BARE, VALUE, VALUES, ArgumentTypeError, FailureOf, api, convert_one
from openacl.dtypes import AclDataType, AclFormat
from openacl.dump import session as _dump
from openacl.model import aipp as _aipp
from openacl.model import bundle as _bundle
from openacl.model import config as _config
from openacl.model import dataset as _dataset
from openacl.model import desc as _desc
from openacl.model import dynamic as _dynamic
from openacl.model import execute as _execute
from openacl.model import model as _model
from openacl.model import opdesc as _opdesc
from openacl.runtime import device as _device

__all__ = [
    "add_dataset_buffer",
    "bundle_get_model_id",
    "bundle_get_model_num",
    "bundle_load_from_file",
    "bundle_load_from_mem",
    "bundle_unload",
    "create_aipp",
    "create_config_handle",
    "create_dataset",
    "create_desc",
    "create_exec_config_handle",
    "destroy_aipp",
    "destroy_config_handle",
    "destroy_dataset",
    "destroy_desc",
    "destroy_exec_config_handle",
    "dump_reg_callback",
    "dump_unreg_callback",
    "execute",
    "execute_async",
    "execute_v2",
    "finalize_dump",
    "get_aipp_data_size",
    "get_aipp_type",
    "get_cur_output_dims",
    "get_dataset_buffer",
    "get_dataset_num_buffers",
    "get_dataset_tensor_desc",
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
    "get_op_attr",
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
    "load_with_config",
    "query_size",
    "query_size_from_mem",
    "set_aipp_ax_swap_switch",
    "set_aipp_by_input_index",
    "set_aipp_crop_params",
    "set_aipp_csc_params",
    "set_aipp_dtc_pixel_mean",
    "set_aipp_dtc_pixel_min",
    "set_aipp_input_format",
    "set_aipp_padding_params",
    "set_aipp_pixel_var_reci",
    "set_aipp_rbuv_swap_switch",
    "set_aipp_scf_params",
    "set_aipp_src_image_size",
    "set_config_opt",
    "set_dataset_tensor_desc",
    "set_dump",
    "set_dynamic_batch_size",
    "set_dynamic_hw_size",
    "set_exec_config_opt",
    "set_input_aipp",
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


# ----- AIPP (dynamic AIPP, see openacl.model.aipp) -----


@api("Ik", VALUES, failure=(0, 0))
def get_aipp_type(model_id, index):
    return _aipp.aipp_type(_model.get(model_id), index)


@api("Ik", VALUE, failure=None)
def get_first_aipp_info(model_id, index):
    return _aipp.first_aipp_info(_model.get(model_id), index)


@api("K", BARE)
def create_aipp(batch_size):
    return _aipp.create(batch_size)


@api("k")
def destroy_aipp(aipp_parms_set):
    _aipp.destroy(aipp_parms_set)


@api("K", VALUE)
def get_aipp_data_size(batch_size):
    return _aipp.data_size(batch_size) & 0xFFFFFFFF  # pyACL builds the size with "I"


@api("kI")
def set_aipp_input_format(aipp_parms_set, input_format):
    _aipp.set_input_format(aipp_parms_set, input_format)


@api("kbhhhhhhhhhBBBBBB")
def set_aipp_csc_params(aipp_parms_set, csc_switch, *values):
    _aipp.set_csc(aipp_parms_set, csc_switch, values[:9], values[9:12], values[12:15])


@api("kb")
def set_aipp_rbuv_swap_switch(aipp_parms_set, rbuv_swap_switch):
    _aipp.set_rbuv_swap(aipp_parms_set, rbuv_swap_switch)


@api("kb")
def set_aipp_ax_swap_switch(aipp_parms_set, ax_swap_switch):
    _aipp.set_ax_swap(aipp_parms_set, ax_swap_switch)


@api("kii")
def set_aipp_src_image_size(aipp_parms_set, src_image_size_w, src_image_size_h):
    _aipp.set_src_image_size(aipp_parms_set, src_image_size_w, src_image_size_h)


@api("kbiiiiK")
def set_aipp_scf_params(aipp_parms_set, scf_switch, in_w, in_h, out_w, out_h, batch_index):
    _aipp.set_scf(aipp_parms_set, scf_switch, in_w, in_h, out_w, out_h, batch_index)


@api("kbiiiiK")
def set_aipp_crop_params(aipp_parms_set, crop_switch, start_w, start_h, width, height, batch_index):
    _aipp.set_crop(aipp_parms_set, crop_switch, start_w, start_h, width, height, batch_index)


@api("kbiiiiK")
def set_aipp_padding_params(aipp_parms_set, padding_switch, top, bottom, left, right, batch_index):
    _aipp.set_padding(aipp_parms_set, padding_switch, top, bottom, left, right, batch_index)


@api("khhhhK")
def set_aipp_dtc_pixel_mean(aipp_parms_set, chn0, chn1, chn2, chn3, batch_index):
    _aipp.set_mean(aipp_parms_set, (chn0, chn1, chn2, chn3), batch_index)


@api("kffffK")
def set_aipp_dtc_pixel_min(aipp_parms_set, chn0, chn1, chn2, chn3, batch_index):
    _aipp.set_min(aipp_parms_set, (chn0, chn1, chn2, chn3), batch_index)


@api("kffffK")
def set_aipp_pixel_var_reci(aipp_parms_set, chn0, chn1, chn2, chn3, batch_index):
    _aipp.set_var_reci(aipp_parms_set, (chn0, chn1, chn2, chn3), batch_index)


@api("Ikkk")
def set_input_aipp(model_id, dataset, index, aipp_parms_set):
    _aipp.set_input_aipp(_model.get(model_id), dataset, index, aipp_parms_set)


@api("Ikkk")
def set_aipp_by_input_index(model_id, dataset, index, aipp_parms_set):
    _aipp.set_by_input_index(_model.get(model_id), dataset, index, aipp_parms_set)


# ----- load and execution configs -----


@api("", BARE)
def create_config_handle():
    return _config.create_config()


@api("k")
def destroy_config_handle(handle):
    _config.destroy_config(handle)


_CONFIG_VALUE_FORMATS = {
    _config.PRIORITY: "i",
    _config.PATH: "s",
    _config.MEM_ADDR: "k",
    _config.WEIGHT_ADDR: "k",
    _config.WORKSPACE_ADDR: "k",
    _config.WEIGHT_PATH: "k",
}


@api("kiO")
def set_config_opt(handle, attr, value):
    """pyACL parses ``value`` by the attribute: an int32, a str, a pointer, else a uint64."""
    parsed = convert_one(_CONFIG_VALUE_FORMATS.get(attr, "K"), value, "acl.mdl.set_config_opt")
    _config.set_config_opt(handle, attr, parsed)


@api("k", VALUE)
def load_with_config(handle):
    return _config.load_with_config(handle).id


@api("", BARE)
def create_exec_config_handle():
    return _config.create_exec_config()


@api("k")
def destroy_exec_config_handle(handle):
    _config.destroy_exec_config(handle)


@api("kkI")
def set_exec_config_opt(handle, attr, value):
    _config.set_exec_config_opt(handle, attr, value)


@api("Ikkkk")
def execute_v2(model_id, input, output, stream, handle):
    _config.execute_v2(_model.get(model_id), input, output, _device.resolve(stream), handle)


# ----- bundles (see openacl.model.bundle for what a bundle of ONNX models is) -----


@api("s", VALUE)
def bundle_load_from_file(model_path):
    return _bundle.load_from_file(model_path).id


@api("kk", VALUE)
def bundle_load_from_mem(model, model_size):
    return _bundle.load_from_memory(model, model_size).id


@api("I")
def bundle_unload(bundle_id):
    _bundle.unload(bundle_id)


@api("Ik", VALUE)
def bundle_get_model_id(bundle_id, index):
    return _bundle.model_id(bundle_id, index)


@api("I", VALUE)
def bundle_get_model_num(bundle_id):
    return _bundle.model_num(bundle_id)


# ----- ops of a model -----


@api("kss", BARE, failure=None)
def get_op_attr(model_desc, op_name, attr):
    return _opdesc.op_attr(_desc.descs.get(model_desc).model_id, op_name, attr)


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


@api("kkk", VALUE, failure=FailureOf(lambda args: args[0]))
def set_dataset_tensor_desc(dataset, tensor_desc, index):
    _dataset.set_tensor_desc(dataset, tensor_desc, index)
    return dataset


@api("kk", BARE)
def get_dataset_tensor_desc(dataset, index):
    return _dataset.get_tensor_desc(dataset, index)


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
