"""A stream-ordered upload in the manner of Ascend's samples, with one bug: the stream is destroyed without
synchronizing it first, which CANN requires (``aclrtSynchronizeStream`` before ``aclrtDestroyStream``).

    python destroy_unsynchronized_stream.py

Under ``openacl check`` the report names the destroy and the copy it did not wait for.
"""

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
SIZE = 4096


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
    host = np.arange(SIZE, dtype=np.uint8)
    dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    ret = acl.rt.memcpy_async(dev, SIZE, acl.util.numpy_to_ptr(host), SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    check_ret("acl.rt.memcpy_async", ret)
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))  # BUG: not synchronized first
    print(f"uploaded {SIZE} bytes")
    check_ret("acl.rt.free", acl.rt.free(dev))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
