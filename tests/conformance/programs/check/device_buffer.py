"""A helper module of use_after_free_through_helper.py: a device buffer class in the manner of acllite's."""

import numpy as np

import acl

ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


class DeviceBuffer:
    def __init__(self, size):
        self.size = size
        self.ptr, ret = acl.rt.malloc(size, 0)
        if ret != 0:
            raise Exception(f"acl.rt.malloc failed ret={ret}")

    def upload(self, array):
        return acl.rt.memcpy(self.ptr, self.size, acl.util.numpy_to_ptr(array), array.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)

    def download(self):
        out = np.zeros(self.size, np.uint8)
        ret = acl.rt.memcpy(acl.util.numpy_to_ptr(out), self.size, self.ptr, self.size, ACL_MEMCPY_DEVICE_TO_HOST)
        return out, ret

    def release(self):
        return acl.rt.free(self.ptr)
