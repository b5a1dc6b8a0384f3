"""A device-to-device copy in the manner of Ascend's memory samples, with one bug: the source is freed right after
the copy is queued, before the stream is synchronized (the copy may not have read it yet).

    python free_while_copy_queued.py

Under ``openacl check`` the report names the queued copy, the free and the allocation, whether or not the stream
got to the copy before the free.
"""

import acl

DEVICE_ID = 0
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
SIZE = 1 << 20


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    src, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    dst, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    check_ret("acl.rt.memset", acl.rt.memset(src, SIZE, 0x3C, SIZE))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(dst, SIZE, src, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, stream))
    check_ret("acl.rt.free", acl.rt.free(src))  # BUG: the queued copy may not have read it yet
    ret = acl.rt.synchronize_stream(stream)
    print(f"synchronize: ret={ret}")
    check_ret("acl.rt.free", acl.rt.free(dst))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
