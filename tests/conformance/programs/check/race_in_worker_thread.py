"""Multi-threaded asynchronous inference in the manner of Ascend's samples (one stream per worker thread), with one
bug: each worker reads its output with ``ptr_to_bytes`` before synchronizing its stream.

    python race_in_worker_thread.py MODEL

Under ``openacl check`` the report names the read and the ``execute_async`` in the worker (one finding, counted
once per thread).
"""

import sys
import threading

import numpy as np

import acl

DEVICE_ID = 0
THREADS = 2


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


def worker(context, model_id, desc, results, index):
    check_ret("acl.rt.set_context", acl.rt.set_context(context))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    inputs, in_buffers = make_dataset(desc, acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index)
    outputs, out_buffers = make_dataset(desc, acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)
    in_dev, in_size = in_buffers[0]
    check_ret("acl.rt.memset", acl.rt.memset(in_dev, in_size, index, in_size))
    check_ret("acl.mdl.execute_async", acl.mdl.execute_async(model_id, inputs, outputs, stream))
    out_dev, out_size = out_buffers[0]
    results[index] = acl.util.ptr_to_bytes(out_dev, out_size)  # BUG: the stream was not synchronized
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    destroy_dataset(inputs, in_buffers)
    destroy_dataset(outputs, out_buffers)
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))


def main(model_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    results = {}
    threads = [threading.Thread(target=worker, args=(context, model_id, desc, results, i)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in sorted(results):
        print(f"worker {index}: top class {int(np.argmax(np.frombuffer(results[index], np.float32)))}")
    check_ret("acl.mdl.unload", acl.mdl.unload(model_id))
    check_ret("acl.mdl.destroy_desc", acl.mdl.destroy_desc(desc))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1])
