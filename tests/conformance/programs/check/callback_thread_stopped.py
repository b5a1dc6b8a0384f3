"""Stream callbacks in the manner of Ascend's callback sample, with one bug: the callback thread is stopped before
the last callback it was meant to run, so no thread serves the stream when the stream reaches it.

    python callback_thread_stopped.py

Under ``openacl check`` the report names the synchronize that found the callback and the line that launched it.
"""

import numpy as np

import acl

DEVICE_ID = 0
ACL_CALLBACK_NO_BLOCK = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
SIZE = 1024
BATCHES = 3


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class CallbackWorker:
    def __init__(self, context):
        self.context = context
        self.is_exit = False
        self.done = []

    def thread_func(self, args):
        check_ret("acl.rt.set_context", acl.rt.set_context(self.context))
        while not self.is_exit:
            acl.rt.process_report(100)

    def on_batch(self, batch):
        self.done.append(batch)


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    worker = CallbackWorker(context)
    tid, ret = acl.util.start_thread(worker.thread_func, [])
    check_ret("acl.util.start_thread", ret)
    check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(tid, stream))

    data = np.ones(SIZE, np.uint8).tobytes()
    dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    for batch in range(BATCHES):
        if batch == BATCHES - 1:  # BUG: the worker is stopped before the last batch's callback
            worker.is_exit = True
            check_ret("acl.util.stop_thread", acl.util.stop_thread(tid))
        ret = acl.rt.memcpy_async(dev, SIZE, acl.util.bytes_to_ptr(data), SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream)
        check_ret("acl.rt.memcpy_async", ret)
        ret = acl.rt.launch_callback(worker.on_batch, batch, ACL_CALLBACK_NO_BLOCK, stream)
        check_ret("acl.rt.launch_callback", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    print(f"batches done: {worker.done}")

    acl.rt.unsubscribe_report(tid, stream)  # the sample does not check it
    check_ret("acl.rt.free", acl.rt.free(dev))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
