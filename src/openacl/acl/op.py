"""``acl.op``: single-operator execution, as pyACL declares it.

An operator is looked up in openacl's op table by its CANN type, compiled to a one-node ONNX model for its
descs and attributes (cached), and run by onnxruntime on the stream (see ``openacl.op``). ``.om`` files are
not needed and are ignored. Left out: the kernel-registration functions (``register_compile_func``,
``create_kernel``, ``set_kernel_args``, ...), which load Ascend binaries, and ``start/stop_dump_args``.
"""

from __future__ import annotations

import numpy as np

from openacl.acl._args import BARE, VALUE, ArgumentTypeError, api, handle_list, warn
from openacl.op import attr as _attr
from openacl.op import execute as _execute
from openacl.op import model_dir as _model_dir

__all__ = [
    "cast",
    "create_attr",
    "create_handle",
    "create_handle_for_cast",
    "destroy_attr",
    "destroy_handle",
    "execute",
    "execute_v2",
    "execute_with_handle",
    "infer_shape",
    "load",
    "set_attr_bool",
    "set_attr_data_type",
    "set_attr_float",
    "set_attr_int",
    "set_attr_list_bool",
    "set_attr_list_data_type",
    "set_attr_list_float",
    "set_attr_list_int",
    "set_attr_list_list_int",
    "set_attr_list_string",
    "set_attr_string",
    "set_max_op_queue_num",
    "set_model_dir",
    "update_params",
]

# ----- attributes -----


@api("", BARE)
def create_attr():
    return _attr.create()


@api("k", BARE, failure=None)
def destroy_attr(attr):
    _attr.destroy(attr)


@api("ksB")
def set_attr_bool(attr, attr_name, attr_value):
    _attr.set_bool(attr, attr_name, attr_value)


@api("ksL")
def set_attr_int(attr, attr_name, attr_value):
    _attr.set_int(attr, attr_name, attr_value)


@api("ksf")
def set_attr_float(attr, attr_name, attr_value):
    _attr.set_float(attr, attr_name, attr_value)


@api("kss")
def set_attr_string(attr, attr_name, attr_value):
    _attr.set_string(attr, attr_name, attr_value)


@api("ksi", VALUE)
def set_attr_data_type(attr, attr_name, attr_value):
    _attr.set_data_type(attr, attr_name, attr_value)
    return attr


def _values(value: object, qualname: str, array_dtype: type, element: type | tuple[type, ...]) -> list:
    """A list attribute's values: a ``list``, or a numpy array (pyACL warns that only lists will stay)."""
    if isinstance(value, np.ndarray):
        warn(f"{qualname}: a numpy array will not be supported in future, pass a list")
        try:
            return np.asarray(value, dtype=array_dtype).reshape(-1).tolist()
        except (TypeError, ValueError, OverflowError):  # an object array of non-numbers, as a list of them
            raise ArgumentTypeError(f"{qualname} args parse failed") from None
    if not isinstance(value, list) or not all(isinstance(item, element) for item in value):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    return value


@api("ksO")
def set_attr_list_bool(attr, attr_name, attr_value):
    values = _values(attr_value, "acl.op.set_attr_list_bool", np.bool_, (bool, int))
    _attr.set_list(attr, attr_name, _attr.LIST_BOOL, values)


@api("ksO")
def set_attr_list_int(attr, attr_name, attr_value):
    values = _values(attr_value, "acl.op.set_attr_list_int", np.int64, int)
    _attr.set_list(attr, attr_name, _attr.LIST_INT, values)


@api("ksO")
def set_attr_list_float(attr, attr_name, attr_value):
    values = _values(attr_value, "acl.op.set_attr_list_float", np.float32, (float, int))
    _attr.set_list(attr, attr_name, _attr.LIST_FLOAT, values)


@api("ksO")
def set_attr_list_string(attr, attr_name, attr_value):
    if not isinstance(attr_value, list) or not all(isinstance(item, str) for item in attr_value):
        raise ArgumentTypeError("acl.op.set_attr_list_string args parse failed")
    _attr.set_list(attr, attr_name, _attr.LIST_STRING, attr_value)


@api("ksO")
def set_attr_list_list_int(attr, attr_name, attr_value):
    if not isinstance(attr_value, list) or not all(
        isinstance(row, list) and all(isinstance(item, int) for item in row) for row in attr_value
    ):
        raise ArgumentTypeError("acl.op.set_attr_list_list_int args parse failed")
    _attr.set_list(attr, attr_name, _attr.LIST_LIST_INT, attr_value)


@api("ksO", VALUE)
def set_attr_list_data_type(attr, attr_name, attr_value):
    if not isinstance(attr_value, list) or not all(isinstance(item, int) for item in attr_value):
        raise ArgumentTypeError("acl.op.set_attr_list_data_type args parse failed")
    _attr.set_list(attr, attr_name, _attr.LIST_DATA_TYPE, attr_value)
    return attr


# ----- operator models -----


@api("s")
def set_model_dir(model_dir):
    _model_dir.set_model_dir(model_dir)


@api("kk")
def load(model, model_size):
    _model_dir.load(model, model_size)


@api("K")
def set_max_op_queue_num(max_op_queue_num):
    _model_dir.set_max_op_queue_num(max_op_queue_num)


# ----- execution -----


def _lists(qualname: str, **lists: object) -> list[list[int]]:
    return [handle_list(value, qualname, name) for name, value in lists.items()]


def _execute_whole(q: str, op_type, input_desc, inputs, output_desc, outputs, attr, stream) -> None:
    """``execute_v2`` and ``execute`` when the call is not a plain repeat (the entry handed it on): every check."""
    _execute.execute(
        op_type,
        handle_list(input_desc, q, "input_desc"),
        handle_list(inputs, q, "inputs"),
        handle_list(output_desc, q, "output_desc"),
        handle_list(outputs, q, "outputs"),
        attr,
        stream,
    )


@api("sOOOOkk", entry=_execute.repeat_entry)  # the hot call: a repeat of an earlier one, by its plan
def execute_v2(op_type, input_desc, inputs, output_desc, outputs, attr, stream):
    _execute_whole("acl.op.execute_v2", op_type, input_desc, inputs, output_desc, outputs, attr, stream)


@api("sOOOOkk", entry=_execute.repeat_entry)
def execute(op_type, input_desc, inputs, output_desc, outputs, attr, stream):
    _execute_whole("acl.op.execute", op_type, input_desc, inputs, output_desc, outputs, attr, stream)


@api("sOOk")
def update_params(op_type, input_desc, output_desc, attr):
    descs_in, descs_out = _lists("acl.op.update_params", input_desc=input_desc, output_desc=output_desc)
    _execute.update_params(op_type, descs_in, descs_out, attr)


@api("sOOiOk")
def infer_shape(op_type, input_desc, inputs, num_outputs, output_desc, attr):
    descs_in, _, descs_out = _lists("acl.op.infer_shape", input_desc=input_desc, inputs=inputs, output_desc=output_desc)
    _execute.infer_shape(op_type, descs_in, num_outputs, descs_out, attr)


@api("sOOk", VALUE)
def create_handle(op_type, input_desc, output_desc, attr):
    descs_in, descs_out = _lists("acl.op.create_handle", input_desc=input_desc, output_desc=output_desc)
    return _execute.create_handle(op_type, descs_in, descs_out, attr)


@api("kkB", VALUE)
def create_handle_for_cast(src_desc, dst_desc, truncate):
    return _execute.create_handle_for_cast(src_desc, dst_desc, truncate)


@api("k", BARE, failure=None)
def destroy_handle(handle):
    _execute.destroy_handle(handle)


@api("kOOk")
def execute_with_handle(handle, inputs, outputs, stream):
    bufs_in, bufs_out = _lists("acl.op.execute_with_handle", inputs=inputs, outputs=outputs)
    _execute.execute_with_handle(handle, bufs_in, bufs_out, stream)


@api("kkkkBk")
def cast(src_desc, src_buffer, dst_desc, dst_buffer, truncate, stream):
    _execute.cast(src_desc, src_buffer, dst_desc, dst_buffer, truncate, stream)
