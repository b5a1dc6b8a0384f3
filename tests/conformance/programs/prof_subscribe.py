"""A program in the style of Ascend's profiling samples: subscribe to a model's operator records and read
them from a pipe on a thread of its own while the model runs.

    python prof_subscribe.py MODEL LOOPS

Prints one line per operator record: ``op <model_id> <name> <type> <start> <end> <duration>``, then
``records <n>``.
"""

import os
import sys
import threading

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_SUCCESS = 0
ACL_AICORE_NONE = 0xFF
RECORDS_PER_READ = 10
NAME_LEN = 256


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed, ret={ret}")


def dataset(size):
    buffer, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "acl.rt.malloc")
    data = acl.create_data_buffer(buffer, size)
    ds = acl.mdl.create_dataset()
    _, ret = acl.mdl.add_dataset_buffer(ds, data)
    check(ret, "acl.mdl.add_dataset_buffer")
    return ds, buffer, data


class OpReader:
    """Reads operator records until the pipe's write end is closed (after model_un_subscribe)."""

    def __init__(self, fd, context):
        self.fd = fd
        self.context = context
        self.lines = []
        self.errors = []

    def parse(self, data):
        ptr = acl.util.bytes_to_ptr(data)
        count, ret = acl.prof.get_op_num(ptr, len(data))
        check(ret, "acl.prof.get_op_num")
        for i in range(count):
            model_id = acl.prof.get_model_id(ptr, len(data), i)
            name, ret = acl.prof.get_op_name(ptr, len(data), i, NAME_LEN)
            check(ret, "acl.prof.get_op_name")
            op_type, ret = acl.prof.get_op_type(ptr, len(data), i, NAME_LEN)
            check(ret, "acl.prof.get_op_type")
            start = acl.prof.get_op_start(ptr, len(data), i)
            end = acl.prof.get_op_end(ptr, len(data), i)
            duration = acl.prof.get_op_duration(ptr, len(data), i)
            self.lines.append(f"op {model_id} {name} {op_type} {start} {end} {duration}")

    def run(self):
        try:
            check(acl.rt.set_context(self.context), "acl.rt.set_context")
            size, ret = acl.prof.get_op_desc_size()
            check(ret, "acl.prof.get_op_desc_size")
            while True:
                data = os.read(self.fd, size * RECORDS_PER_READ)
                if not data:
                    break
                self.parse(data)
        except Exception as exc:  # reported by the main thread
            self.errors.append(exc)


def main(model_path, loops):
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
    context, ret = acl.rt.create_context(DEVICE_ID)
    check(ret, "acl.rt.create_context")
    model_id, ret = acl.mdl.load_from_file(model_path)
    check(ret, "acl.mdl.load_from_file")
    desc = acl.mdl.create_desc()
    check(acl.mdl.get_desc(desc, model_id), "acl.mdl.get_desc")
    input_size = acl.mdl.get_input_size_by_index(desc, 0)
    inputs = dataset(input_size)
    check(acl.rt.memset(inputs[1], input_size, 0, input_size), "acl.rt.memset")  # a blank picture
    outputs = dataset(acl.mdl.get_output_size_by_index(desc, 0))

    read_fd, write_fd = os.pipe()
    config = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, write_fd)
    if config == 0:
        raise RuntimeError("acl.prof.create_subscribe_config failed")
    check(acl.prof.model_subscribe(model_id, config), "acl.prof.model_subscribe")
    reader = OpReader(read_fd, context)
    thread = threading.Thread(target=reader.run)
    thread.start()

    for _ in range(loops):
        check(acl.mdl.execute(model_id, inputs[0], outputs[0]), "acl.mdl.execute")

    check(acl.prof.model_un_subscribe(model_id), "acl.prof.model_un_subscribe")
    thread.join()
    os.close(read_fd)
    if reader.errors:
        raise reader.errors[0]
    check(acl.prof.destroy_subscribe_config(config), "acl.prof.destroy_subscribe_config")
    print("\n".join(reader.lines))
    print(f"records {len(reader.lines)}")

    for ds, buffer, data in (inputs, outputs):
        check(acl.destroy_data_buffer(data), "acl.destroy_data_buffer")
        check(acl.mdl.destroy_dataset(ds), "acl.mdl.destroy_dataset")
        check(acl.rt.free(buffer), "acl.rt.free")
    check(acl.mdl.destroy_desc(desc), "acl.mdl.destroy_desc")
    check(acl.mdl.unload(model_id), "acl.mdl.unload")
    check(acl.rt.destroy_context(context), "acl.rt.destroy_context")
    check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
