"""A program in the style of Ascend's profiling samples: profile an inference loop with ``acl.prof`` and
leave msprof's data under a result directory.

    python prof_classify.py MODEL RESULT_DIR LOOPS

Runs the model LOOPS times on zeros between ``acl.prof.start`` and ``acl.prof.stop``, half with
``acl.mdl.execute`` and half with ``execute_async`` on a stream; prints ``done`` at the end.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_SUCCESS = 0
ACL_AICORE_ARITHMETIC_UTILIZATION = 0
ACL_PROF_ACL_API = 0x0001
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_AICORE_METRICS = 0x0004


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


def release(ds, buffer, data):
    check(acl.destroy_data_buffer(data), "acl.destroy_data_buffer")
    check(acl.mdl.destroy_dataset(ds), "acl.mdl.destroy_dataset")
    check(acl.rt.free(buffer), "acl.rt.free")


def main(model_path, result_dir, loops):
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
    context, ret = acl.rt.create_context(DEVICE_ID)
    check(ret, "acl.rt.create_context")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")

    check(acl.prof.init(result_dir), "acl.prof.init")
    config = acl.prof.create_config(
        [DEVICE_ID],
        ACL_AICORE_ARITHMETIC_UTILIZATION,
        0,
        ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS,
    )
    if config == 0:
        raise RuntimeError("acl.prof.create_config failed")
    check(acl.prof.start(config), "acl.prof.start")

    model_id, ret = acl.mdl.load_from_file(model_path)
    check(ret, "acl.mdl.load_from_file")
    desc = acl.mdl.create_desc()
    check(acl.mdl.get_desc(desc, model_id), "acl.mdl.get_desc")
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    inputs = dataset(in_size)
    outputs = dataset(out_size)
    image = np.zeros(in_size // 4, dtype=np.float32)
    host = acl.util.bytes_to_ptr(image.tobytes())
    check(acl.rt.memcpy_async(inputs[1], in_size, host, in_size, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async")
    check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    for i in range(loops):
        if i % 2:
            check(acl.mdl.execute_async(model_id, inputs[0], outputs[0], stream), "acl.mdl.execute_async")
            check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
        else:
            check(acl.mdl.execute(model_id, inputs[0], outputs[0]), "acl.mdl.execute")

    check(acl.prof.stop(config), "acl.prof.stop")
    check(acl.prof.destroy_config(config), "acl.prof.destroy_config")
    check(acl.prof.finalize(), "acl.prof.finalize")

    release(*inputs)
    release(*outputs)
    check(acl.mdl.destroy_desc(desc), "acl.mdl.destroy_desc")
    check(acl.mdl.unload(model_id), "acl.mdl.unload")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.destroy_context(context), "acl.rt.destroy_context")
    check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    print("done")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
