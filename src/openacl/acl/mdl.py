"""``acl.mdl``: models, descriptions, datasets, execution and dumps, as pyACL declares them.

Models are ONNX files run by onnxruntime (see ``openacl.model``); dumps are CANN's format (``openacl.dump``).
"""

from __future__ import annotations

from openacl.acl._args import BARE, VALUE, VALUES, api
from openacl.dtypes import AclDataType, AclFormat
from openacl.dump import manager as _dump
from openacl.model import dataset as _dataset
from openacl.model import desc as _desc
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
    "get_cur_output_dims",
    "get_dataset_buffer",
    "get_dataset_num_buffers",
    "get_desc",
    "get_input_data_type",
    "get_input_dims",
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
    "init_dump",
    "load_from_file",
    "load_from_file_with_mem",
    "load_from_mem",
    "query_size",
    "set_dump",
    "unload",
]

_NO_DIMS = {"name": "", "dimCount": 0, "dims": []}

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
