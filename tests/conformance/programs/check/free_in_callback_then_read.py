"""An upload with a stream callback in the manner of Ascend's callback samples, with one bug: the callback (run by
the report thread's ``process_report``) frees the device buffer, and the main thread reads it back afterwards.

    python free_in_callback_then_read.py

Under ``openacl check`` the report names the read, the free in the callback and the allocation.
"""

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
ACL_CALLBACK_BLOCK = 1
SIZE = 4096


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class Sample:
    def __init__(self):
        self.exit_flag = False
        check_ret("acl.init", acl.init())
        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check_ret("acl.rt.create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)

    def _process_callback(self, args_list):
        context, timeout = args_list
        acl.rt.set_context(context)
        while not self.exit_flag:
            acl.rt.process_report(timeout)

    def release_buffer(self, dev_ptr):
        check_ret("acl.rt.free", acl.rt.free(dev_ptr))

    def run(self):
        tid, ret = acl.util.start_thread(self._process_callback, [self.context, 50])
        check_ret("acl.util.start_thread", ret)
        check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(tid, self.stream))
        host = np.arange(SIZE, dtype=np.uint8)
        dev_ptr, ret = acl.rt.malloc(SIZE, 0)
        check_ret("acl.rt.malloc", ret)
        ret = acl.rt.memcpy_async(
            dev_ptr, SIZE, acl.util.numpy_to_ptr(host), SIZE, ACL_MEMCPY_HOST_TO_DEVICE, self.stream
        )
        check_ret("acl.rt.memcpy_async", ret)
        check_ret(
            "acl.rt.launch_callback",
            acl.rt.launch_callback(self.release_buffer, dev_ptr, ACL_CALLBACK_BLOCK, self.stream),
        )
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        result = np.zeros(SIZE, dtype=np.uint8)
        ret = acl.rt.memcpy(acl.util.numpy_to_ptr(result), SIZE, dev_ptr, SIZE, ACL_MEMCPY_DEVICE_TO_HOST)  # BUG: freed
        print(f"read back: ret={ret}")
        check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, self.stream))
        self.exit_flag = True
        check_ret("acl.util.stop_thread", acl.util.stop_thread(tid))

    def release(self):
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(self.stream))
        check_ret("acl.rt.destroy_context", acl.rt.destroy_context(self.context))
        check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
        check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    sample = Sample()
    sample.run()
    sample.release()
