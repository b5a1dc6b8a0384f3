"""Host-device round trip in the manner of Ascend's memory samples, with one bug: the device buffer is read back
after it was freed.

    python use_after_free.py

Under ``openacl check`` the report names the copy, the free and the allocation.
"""

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
SIZE = 1024


def main():
    acl.init()
    acl.rt.set_device(DEVICE_ID)
    context, ret = acl.rt.create_context(DEVICE_ID)
    host_in = np.arange(SIZE, dtype=np.uint8)
    host_out = np.zeros(SIZE, dtype=np.uint8)
    dev, ret = acl.rt.malloc(SIZE, 0)
    ret = acl.rt.memcpy(dev, SIZE, acl.util.numpy_to_ptr(host_in), SIZE, ACL_MEMCPY_HOST_TO_DEVICE)
    ret = acl.rt.free(dev)
    ret = acl.rt.memcpy(acl.util.numpy_to_ptr(host_out), SIZE, dev, SIZE, ACL_MEMCPY_DEVICE_TO_HOST)  # BUG
    print(f"read back: ret={ret}")
    acl.rt.destroy_context(context)
    acl.rt.reset_device(DEVICE_ID)
    acl.finalize()


if __name__ == "__main__":
    main()
