"""Buffer reuse in the manner of Ascend's memory samples, with one bug: a buffer is freed, a new one allocated in
its place (on an NPU often at the same address), and the clean-up frees the old pointer again as well.

    python double_free_after_realloc.py

Under ``openacl check`` the report names the second free of the old pointer, its first free and its allocation,
not the new buffer's.
"""

import acl

DEVICE_ID = 0
SIZE = 1024


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    old, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    check_ret("acl.rt.memset", acl.rt.memset(old, SIZE, 0, SIZE))
    check_ret("acl.rt.free", acl.rt.free(old))
    new, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    check_ret("acl.rt.memset", acl.rt.memset(new, SIZE, 1, SIZE))
    check_ret("acl.rt.free", acl.rt.free(new))
    ret = acl.rt.free(old)  # BUG: freed already
    print(f"second free: ret={ret}")
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
