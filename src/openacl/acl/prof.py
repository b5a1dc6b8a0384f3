"""``acl.prof``: profiling sessions that write msprof's summaries, model subscriptions that write operator
records to a pipe, and msproftx stamps. State and checks live in ``openacl.runtime.prof`` and
``openacl.model.profiled``; what a CPU cannot measure (AI Core counters) is described there and in docs/profiling.md.
"""

from __future__ import annotations

from openacl.acl._args import BARE, VALUE, ArgumentTypeError, ArgumentValueError, api
from openacl.model import profiled as _profiled
from openacl.runtime.prof import opdesc as _opdesc
from openacl.runtime.prof import session as _session
from openacl.runtime.prof import stamps as _stamps

__all__ = [
    "create_config",
    "create_stamp",
    "create_step_info",
    "create_subscribe_config",
    "destroy_config",
    "destroy_stamp",
    "destroy_step_info",
    "destroy_subscribe_config",
    "finalize",
    "get_model_id",
    "get_op_desc_size",
    "get_op_duration",
    "get_op_end",
    "get_op_name",
    "get_op_name_len",
    "get_op_name_v2",
    "get_op_num",
    "get_op_start",
    "get_op_type",
    "get_op_type_len",
    "get_op_type_v2",
    "get_step_timestamp",
    "init",
    "mark",
    "mark_ex",
    "model_subscribe",
    "model_un_subscribe",
    "model_unsubscribe",
    "pop",
    "push",
    "range_start",
    "range_stop",
    "set_config",
    "set_stamp_trace_message",
    "start",
    "stop",
]


def _device_ids(value: object) -> list[int]:
    """pyACL's device list: a ``list`` of ints, each read as a C unsigned long and kept as a uint32."""
    if not isinstance(value, list):
        raise ArgumentTypeError("argument 1 is not list")
    if not all(isinstance(item, int) for item in value):
        raise ArgumentTypeError("the first argument is not list of int")
    if any(item < 0 for item in value):
        raise ArgumentValueError("PyLong_AsUnsignedLong failed")
    return [item & 0xFFFFFFFF for item in value]


# ----- sessions -----


@api("s")
def init(profiler_result_path):
    _session.init(profiler_result_path)


@api("")
def finalize():
    _profiled.finalize()


@api("OikK", BARE)
def create_config(device_id_list, aicore_metrics, aicore_events, data_type_config):
    return _session.create_config(_device_ids(device_id_list), aicore_metrics, aicore_events, data_type_config)


@api("k")
def destroy_config(profiler_config):
    _session.destroy_config(profiler_config)


@api("k")
def start(profiler_config):
    _session.start(profiler_config)


@api("k")
def stop(profiler_config):
    _profiled.stop(profiler_config)


@api("is")
def set_config(config_type, config):
    _session.set_config(config_type, config)


# ----- model subscriptions -----


@api("bii", BARE)
def create_subscribe_config(time_info_switch, aicore_metrics, fd):
    return _session.create_subscribe_config(time_info_switch, aicore_metrics, fd)


@api("k")
def destroy_subscribe_config(prof_subscribe_config):
    _session.destroy_subscribe_config(prof_subscribe_config)


@api("Ik")
def model_subscribe(model_id, prof_subscribe_config):
    _profiled.subscribe(model_id, prof_subscribe_config)


@api("I")
def model_unsubscribe(model_id):
    _profiled.unsubscribe(model_id)


@api("I")
def model_un_subscribe(model_id):
    _profiled.unsubscribe(model_id)


# ----- operator records -----


@api("", VALUE)
def get_op_desc_size():
    return _opdesc.RECORD_SIZE


@api("kk", VALUE)
def get_op_num(op_info, op_info_len):
    return _opdesc.op_num(op_info, op_info_len)


@api("kkIk", VALUE, failure="")
def get_op_type(op_info, op_info_len, index, op_type_len):
    return _opdesc.truncated(_opdesc.op_type(op_info, op_info_len, index), op_type_len)


@api("kkIk", VALUE, failure="")
def get_op_name(op_info, op_info_len, index, op_name_len):
    return _opdesc.truncated(_opdesc.op_name(op_info, op_info_len, index), op_name_len)


@api("kkI", VALUE, failure=None)
def get_op_type_v2(op_info, op_info_len, index):
    return _opdesc.op_type(op_info, op_info_len, index)


@api("kkI", VALUE, failure=None)
def get_op_name_v2(op_info, op_info_len, index):
    return _opdesc.op_name(op_info, op_info_len, index)


@api("kkI", VALUE)
def get_op_type_len(op_info, op_info_len, index):
    return _opdesc.string_len(_opdesc.op_type(op_info, op_info_len, index))


@api("kkI", VALUE)
def get_op_name_len(op_info, op_info_len, index):
    return _opdesc.string_len(_opdesc.op_name(op_info, op_info_len, index))


@api("kkI", BARE)
def get_op_start(op_info, op_info_len, index):
    return _opdesc.record(op_info, op_info_len, index).start_ns


@api("kkI", BARE)
def get_op_end(op_info, op_info_len, index):
    return _opdesc.record(op_info, op_info_len, index).end_ns


@api("kkI", BARE)
def get_op_duration(op_info, op_info_len, index):
    return _opdesc.record(op_info, op_info_len, index).duration_ns


@api("kkI", BARE)
def get_model_id(op_info, op_info_len, index):
    return _opdesc.record(op_info, op_info_len, index).model_id


# ----- steps, stamps, marks and ranges -----


@api("", BARE)
def create_step_info():
    return _stamps.create_step_info()


@api("k", BARE, failure=None)
def destroy_step_info(step_info):
    _stamps.destroy_step_info(step_info)


@api("kik")
def get_step_timestamp(step_info, tag, stream):
    _stamps.step_timestamp(step_info, tag, stream)


@api("", BARE)
def create_stamp():
    return _stamps.create_stamp()


@api("k", BARE, failure=None)
def destroy_stamp(stamp):
    _stamps.destroy_stamp(stamp)


@api("ksI")
def set_stamp_trace_message(stamp, msg, msg_len):
    _stamps.set_trace_message(stamp, msg, msg_len)


@api("k")
def mark(stamp):
    _stamps.mark(stamp)


@api("sk")
def mark_ex(msg, stream):
    _stamps.mark_ex(msg, stream)


@api("k")
def push(stamp):
    _stamps.push(stamp)


@api("")
def pop():
    _stamps.pop()


@api("k", VALUE)
def range_start(stamp):
    return _stamps.range_start(stamp)


@api("I")
def range_stop(range_id):
    _stamps.range_stop(range_id)
