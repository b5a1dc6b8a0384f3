"""A two-stream pipeline in the manner of Ascend's samples, ordered with events: one stream uploads each batch,
another processes it after an event recorded behind the upload, and the upload stream downloads the result after an
event recorded behind the processing. The host reuses the buffers only after waiting for the download.

    python streams_with_events.py

Exits 0 and prints ``pipeline passed`` when every batch came back as sent.
"""

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE = 1, 2, 3
SIZE = 4096
BATCHES = 3


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    copy_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    process_stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    uploaded, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)
    processed, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)

    host_in, ret = acl.rt.malloc_host(SIZE)
    check_ret("acl.rt.malloc_host", ret)
    host_out, ret = acl.rt.malloc_host(SIZE)
    check_ret("acl.rt.malloc_host", ret)
    dev_in, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)
    dev_out, ret = acl.rt.malloc(SIZE, 0)
    check_ret("acl.rt.malloc", ret)

    for batch in range(BATCHES):
        check_ret("acl.rt.memset", acl.rt.memset(host_in, SIZE, batch + 1, SIZE))
        ret = acl.rt.memcpy_async(dev_in, SIZE, host_in, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, copy_stream)
        check_ret("acl.rt.memcpy_async", ret)
        check_ret("acl.rt.record_event", acl.rt.record_event(uploaded, copy_stream))
        check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(process_stream, uploaded))
        ret = acl.rt.memcpy_async(dev_out, SIZE, dev_in, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, process_stream)
        check_ret("acl.rt.memcpy_async", ret)
        check_ret("acl.rt.record_event", acl.rt.record_event(processed, process_stream))
        check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(copy_stream, processed))
        ret = acl.rt.memcpy_async(host_out, SIZE, dev_out, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, copy_stream)
        check_ret("acl.rt.memcpy_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(copy_stream))
        data = acl.util.ptr_to_bytes(host_out, SIZE)
        if data != bytes([batch + 1]) * SIZE:
            raise Exception(f"batch {batch} came back wrong")

    print("pipeline passed")
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(process_stream))
    for ptr in (dev_out, dev_in):
        check_ret("acl.rt.free", acl.rt.free(ptr))
    for ptr in (host_out, host_in):
        check_ret("acl.rt.free_host", acl.rt.free_host(ptr))
    for event in (processed, uploaded):
        check_ret("acl.rt.destroy_event", acl.rt.destroy_event(event))
    for stream in (process_stream, copy_stream):
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
