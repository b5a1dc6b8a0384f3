"""Two devices in the manner of Ascend's multi-device samples, with one bug: the upload for device 0 is queued on
device 0's stream while device 1's context is still current (CANN requires the stream's own context).

    python stream_of_other_device.py

Under ``openacl check`` the report names the copy and the line that created the stream.
"""

import numpy as np

import acl

ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
SIZE = 4096


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class DeviceResource:
    def __init__(self, device_id):
        self.device_id = device_id
        check_ret("acl.rt.set_device", acl.rt.set_device(device_id))
        self.context, ret = acl.rt.create_context(device_id)
        check_ret("acl.rt.create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)
        self.buffer, ret = acl.rt.malloc(SIZE, 0)
        check_ret("acl.rt.malloc", ret)

    def release(self):
        check_ret("acl.rt.set_context", acl.rt.set_context(self.context))
        check_ret("acl.rt.free", acl.rt.free(self.buffer))
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(self.stream))
        check_ret("acl.rt.destroy_context", acl.rt.destroy_context(self.context))
        check_ret("acl.rt.reset_device", acl.rt.reset_device(self.device_id))


def main():
    check_ret("acl.init", acl.init())
    devices = [DeviceResource(0), DeviceResource(1)]  # device 1's context is current after this
    data = np.arange(SIZE, dtype=np.uint8).tobytes()
    host = acl.util.bytes_to_ptr(data)
    first = devices[0]
    # BUG: no acl.rt.set_context(first.context) before using device 0's stream
    ret = acl.rt.memcpy_async(first.buffer, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, first.stream)
    check_ret("acl.rt.memcpy_async", ret)
    check_ret("acl.rt.set_context", acl.rt.set_context(first.context))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(first.stream))
    result, ret = acl.rt.malloc_host(SIZE)
    check_ret("acl.rt.malloc_host", ret)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(result, SIZE, first.buffer, SIZE, ACL_MEMCPY_DEVICE_TO_HOST))
    print(f"round trip equal: {acl.util.ptr_to_bytes(result, SIZE) == data}")
    check_ret("acl.rt.free_host", acl.rt.free_host(result))
    for device in devices:
        device.release()
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
