"""A two-stream pipeline in the manner of Ascend's samples (one stream uploads, another processes), with one bug:
nothing orders the processing after the upload (no event recorded on the upload stream and waited for by the
other), so the processing stream may copy the input before it arrived.

    python race_two_streams.py

Under ``openacl check`` the report names both copies: the one that reads and the upload it races.
"""

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE = 1, 2, 3
SIZE = 4096


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    upload_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    process_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    host, ret = acl.rt.malloc_host(SIZE)
    check_ret("acl.rt.malloc_host", ret)
    check_ret("acl.rt.memset", acl.rt.memset(host, SIZE, 7, SIZE))
    dev_in, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    dev_out, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)

    ret = acl.rt.memcpy_async(dev_in, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, upload_stream)
    check_ret("acl.rt.memcpy_async", ret)
    ret = acl.rt.memcpy_async(dev_out, SIZE, dev_in, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, process_stream)  # BUG
    check_ret("acl.rt.memcpy_async", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(upload_stream))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(process_stream))

    ret = acl.rt.memcpy(host, SIZE, dev_out, SIZE, ACL_MEMCPY_DEVICE_TO_HOST)
    check_ret("acl.rt.memcpy", ret)
    print(f"processed {SIZE} bytes, first byte {acl.util.ptr_to_bytes(host, 1)[0]}")

    check_ret("acl.rt.free", acl.rt.free(dev_out))
    check_ret("acl.rt.free", acl.rt.free(dev_in))
    check_ret("acl.rt.free_host", acl.rt.free_host(host))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(process_stream))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(upload_stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
