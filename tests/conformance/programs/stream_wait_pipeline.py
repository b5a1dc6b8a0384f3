"""A two-stage pipeline on two streams in the manner of Ascend's event samples: stage one fills a buffer on its own
stream and records an event; stage two waits for that event and copies the result to pinned host memory. The host
synchronizes only the last stream (which orders it after stage one too, through the wait), then polls an event with
``query_event_status`` before reusing the host buffer. Only ``import acl`` is used, so it runs unchanged on an NPU.

    python stream_wait_pipeline.py
"""

import time

import acl

DEVICE_ID = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
SIZE = 1 << 16
ROUNDS = 3


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    fill_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    copy_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    filled, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)
    copied, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)
    dev, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    host, ret = acl.rt.malloc_host(SIZE)
    check_ret("acl.rt.malloc_host", ret)

    for value in range(1, ROUNDS + 1):
        check_ret("acl.rt.memset_async", acl.rt.memset_async(dev, SIZE, value, SIZE, fill_stream))
        check_ret("acl.rt.record_event", acl.rt.record_event(filled, fill_stream))
        check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(copy_stream, filled))
        ret = acl.rt.memcpy_async(host, SIZE, dev, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, copy_stream)
        check_ret("acl.rt.memcpy_async", ret)
        if value < ROUNDS:
            check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(copy_stream))
        else:
            check_ret("acl.rt.record_event", acl.rt.record_event(copied, copy_stream))
            while True:
                status, ret = acl.rt.query_event_status(copied)
                check_ret("acl.rt.query_event_status", ret)
                if status == ACL_EVENT_RECORDED_STATUS_COMPLETE:
                    break
                time.sleep(0.001)
        data = acl.util.ptr_to_bytes(host, SIZE)
        if data != bytes([value]) * SIZE:
            raise Exception(f"round {value}: the host buffer does not hold the filled bytes")
        print(f"round {value}: {SIZE} bytes through two streams")

    check_ret("acl.rt.free_host", acl.rt.free_host(host))
    check_ret("acl.rt.free", acl.rt.free(dev))
    for event in (filled, copied):
        check_ret("acl.rt.destroy_event", acl.rt.destroy_event(event))
    for stream in (fill_stream, copy_stream):
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
