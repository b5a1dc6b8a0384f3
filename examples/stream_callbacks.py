"""The canonical pyACL stream-callback pattern (Ascend samples, resnet50_async_imagenet_classification).

Runs unchanged against pyACL on an Ascend NPU, and on any Linux machine with:

    openacl run examples/stream_callbacks.py

A thread from ``acl.util.start_thread`` loops ``process_report``; the main thread subscribes it to a stream,
queues asynchronous copies and BLOCK callbacks that post-process each result (the callback copies the data
back to the host, as the official sample does), synchronizes, unsubscribes and stops the thread.
"""

import struct
import sys

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_BLOCK = 1
EXECUTE_TIMES = 8
ITEM_BYTES = 16


class Sample:
    def __init__(self):
        self.exit_flag = False
        self.results = []
        ret = acl.init()
        assert ret == 0, ret
        ret = acl.rt.set_device(DEVICE_ID)
        assert ret == 0, ret
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        assert ret == 0, ret
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0, ret
        self.host_data = b"".join(struct.pack("<4i", i, i * i, -i, 7) for i in range(EXECUTE_TIMES))
        self.host_ptr = acl.util.bytes_to_ptr(self.host_data)
        self.dev_ptr, ret = acl.rt.malloc(len(self.host_data), ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0, ret

    def _process_callback(self, args_list):
        context, timeout = args_list
        acl.rt.set_context(context)
        while True:
            acl.rt.process_report(timeout)
            if self.exit_flag:
                break

    def callback_func(self, delete_list):
        """Runs on the report thread: copy one result back to the host and read it."""
        index, dev_ptr = delete_list
        host_ptr, ret = acl.rt.malloc_host(ITEM_BYTES)
        assert ret == 0, ret
        acl.rt.memcpy(host_ptr, ITEM_BYTES, dev_ptr, ITEM_BYTES, ACL_MEMCPY_DEVICE_TO_HOST)
        values = struct.unpack("<4i", acl.util.ptr_to_bytes(host_ptr, ITEM_BYTES))
        acl.rt.free_host(host_ptr)
        self.results.append((index, values))

    def run(self):
        tid, ret = acl.util.start_thread(self._process_callback, [self.context, 50])
        assert ret == 0, ret
        ret = acl.rt.subscribe_report(tid, self.stream)
        assert ret == 0, ret
        for i in range(EXECUTE_TIMES):
            offset = i * ITEM_BYTES
            acl.rt.memcpy_async(
                self.dev_ptr + offset,
                ITEM_BYTES,
                self.host_ptr + offset,
                ITEM_BYTES,
                ACL_MEMCPY_HOST_TO_DEVICE,
                self.stream,
            )
            acl.rt.launch_callback(self.callback_func, [i, self.dev_ptr + offset], ACL_CALLBACK_BLOCK, self.stream)
        ret = acl.rt.synchronize_stream(self.stream)
        assert ret == 0, ret
        ret = acl.rt.unsubscribe_report(tid, self.stream)
        assert ret == 0, ret
        self.exit_flag = True
        ret = acl.util.stop_thread(tid)
        assert ret == 0, ret

    def release(self):
        acl.rt.free(self.dev_ptr)
        acl.rt.destroy_stream(self.stream)
        acl.rt.destroy_context(self.context)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()


def main():
    sample = Sample()
    sample.run()
    sample.release()
    for index, values in sample.results:
        print(f"callback {index}: {values}")
    expected = [(i, (i, i * i, -i, 7)) for i in range(EXECUTE_TIMES)]
    if sample.results != expected:
        print("callbacks did not see the expected data, in order", file=sys.stderr)
        return 1
    print(f"{len(sample.results)} BLOCK callbacks ran in stream order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
