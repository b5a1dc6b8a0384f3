"""Asynchronous inference in the manner of Ascend's samples, with one bug: the output is copied back to the host
before the stream is synchronized, so the copy may read it before the model wrote it.

    python race_output_before_sync.py MODEL

Under ``openacl check`` the report names the copy and the ``execute_async`` it races.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def make_dataset(desc, count, size_of):
    dataset = acl.mdl.create_dataset()
    buffers = []
    for i in range(count):
        size = size_of(desc, i)
        ptr, ret = acl.rt.malloc(size, 0)
        check_ret("acl.rt.malloc", ret)
        _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
        buffers.append((ptr, size))
    return dataset, buffers


def destroy_dataset(dataset, buffers):
    for i, (ptr, _) in enumerate(buffers):
        check_ret("acl.destroy_data_buffer", acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i)))
        check_ret("acl.rt.free", acl.rt.free(ptr))
    check_ret("acl.mdl.destroy_dataset", acl.mdl.destroy_dataset(dataset))


def main(model_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    inputs, in_buffers = make_dataset(desc, acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index)
    outputs, out_buffers = make_dataset(desc, acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)

    in_dev, in_size = in_buffers[0]
    data = np.random.default_rng(0).random(in_size // 4, dtype=np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(in_dev, in_size, ptr, len(data), ACL_MEMCPY_HOST_TO_DEVICE))
    check_ret("acl.mdl.execute_async", acl.mdl.execute_async(model_id, inputs, outputs, stream))
    out_dev, out_size = out_buffers[0]
    result = np.zeros(out_size // 4, np.float32)
    host_ptr = acl.util.numpy_to_ptr(result)
    ret = acl.rt.memcpy(host_ptr, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST)  # BUG: not synchronized
    check_ret("acl.rt.memcpy", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    print(f"top class {int(np.argmax(result))}")

    destroy_dataset(inputs, in_buffers)
    destroy_dataset(outputs, out_buffers)
    check_ret("acl.mdl.unload", acl.mdl.unload(model_id))
    check_ret("acl.mdl.destroy_desc", acl.mdl.destroy_desc(desc))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1])
