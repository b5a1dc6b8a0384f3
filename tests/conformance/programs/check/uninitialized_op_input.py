"""A single operator in the manner of Ascend's samples (Add two float32 vectors with ``acl.op.execute_v2``), with
one bug: the second input is copied into the first input's buffer, so the second buffer is read unwritten.

    python uninitialized_op_input.py

Under ``openacl check`` the report names the ``execute_v2`` that reads it and the allocation.
"""

import numpy as np

import acl

DEVICE_ID = 0
ACL_FLOAT, ACL_FORMAT_ND = 0, 2
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
LENGTH = 16
SIZE = LENGTH * 4


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    desc = acl.create_tensor_desc(ACL_FLOAT, [LENGTH], ACL_FORMAT_ND)
    x1 = np.arange(LENGTH, dtype=np.float32).tobytes()
    x2 = np.ones(LENGTH, dtype=np.float32).tobytes()
    x1_dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    x2_dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    y_dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    ret = acl.rt.memcpy(x1_dev, SIZE, acl.util.bytes_to_ptr(x1), SIZE, ACL_MEMCPY_HOST_TO_DEVICE)
    check_ret("acl.rt.memcpy", ret)
    ret = acl.rt.memcpy(x1_dev, SIZE, acl.util.bytes_to_ptr(x2), SIZE, ACL_MEMCPY_HOST_TO_DEVICE)  # meant x2_dev
    check_ret("acl.rt.memcpy", ret)
    inputs = [acl.create_data_buffer(x1_dev, SIZE), acl.create_data_buffer(x2_dev, SIZE)]
    outputs = [acl.create_data_buffer(y_dev, SIZE)]
    attr = acl.op.create_attr()

    ret = acl.op.execute_v2("Add", [desc, desc], inputs, [desc], outputs, attr, stream)  # BUG: x2 never written
    check_ret("acl.op.execute_v2", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    y = bytes(SIZE)
    ret = acl.rt.memcpy(acl.util.bytes_to_ptr(y), SIZE, y_dev, SIZE, ACL_MEMCPY_DEVICE_TO_HOST)
    check_ret("acl.rt.memcpy", ret)
    print(f"y[0] = {np.frombuffer(y, np.float32)[0]}")

    acl.op.destroy_attr(attr)
    for buffer in inputs + outputs:
        check_ret("acl.destroy_data_buffer", acl.destroy_data_buffer(buffer))
    acl.destroy_tensor_desc(desc)
    for ptr in (y_dev, x2_dev, x1_dev):
        check_ret("acl.rt.free", acl.rt.free(ptr))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
