"""Synchronous inference in the manner of Ascend's samples, with one bug: the input buffer is never freed.

    python leak_output_buffer.py MODEL

Under ``openacl check`` the report names the line that allocated it (the ``acl.rt.malloc`` of the input).
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def dataset_of(buffers):
    dataset = acl.mdl.create_dataset()
    for ptr, size in buffers:
        _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
    return dataset


def destroy_dataset(dataset):
    for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
        check_ret("acl.destroy_data_buffer", acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i)))
    check_ret("acl.mdl.destroy_dataset", acl.mdl.destroy_dataset(dataset))


def main(model_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    in_dev, ret = acl.rt.malloc(in_size, 0)  # BUG: never freed
    check_ret("acl.rt.malloc", ret)
    out_buffers = []
    for i in range(acl.mdl.get_num_outputs(desc)):
        size = acl.mdl.get_output_size_by_index(desc, i)
        ptr, ret = acl.rt.malloc(size, 0)
        check_ret("acl.rt.malloc", ret)
        out_buffers.append((ptr, size))
    inputs = dataset_of([(in_dev, in_size)])
    outputs = dataset_of(out_buffers)

    data = np.random.default_rng(0).random(in_size // 4, dtype=np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(in_dev, in_size, ptr, len(data), ACL_MEMCPY_HOST_TO_DEVICE))
    check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))
    out_dev, out_size = out_buffers[0]
    result = np.zeros(out_size // 4, np.float32)
    host_ptr = acl.util.numpy_to_ptr(result)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(host_ptr, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST))
    print(f"top class {int(np.argmax(result))}")

    destroy_dataset(inputs)
    destroy_dataset(outputs)
    for ptr, _ in out_buffers:
        check_ret("acl.rt.free", acl.rt.free(ptr))
    check_ret("acl.mdl.unload", acl.mdl.unload(model_id))
    check_ret("acl.mdl.destroy_desc", acl.mdl.destroy_desc(desc))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1])
