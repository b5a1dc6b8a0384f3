"""A program in the style of Ascend's samples: an exception-info callback reports a failed stream task.

A report thread holds the stream with a BLOCK callback while the program frees the device memory a queued
copy reads; when the stream gets there the copy fails, the exception callback prints its record and
synchronize_stream returns the same code.
"""

import threading
import time

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_BLOCK = 1
DEVICE_ID = 0

reports = []
exiting = False


def exception_callback(info):
    reports.append(
        {
            "device": acl.rt.get_device_id_from_exception_info(info),
            "stream": acl.rt.get_stream_id_from_exception_info(info),
            "task": acl.rt.get_task_id_from_exception_info(info),
            "thread": acl.rt.get_thread_id_from_exception_info(info),
            "code": acl.rt.get_error_code_from_exception_info(info),
        }
    )


def report_loop(args):
    acl.rt.set_context(args[0])
    while not exiting:
        acl.rt.process_report(100)


def hold(_user_data):
    time.sleep(0.1)


def main():
    global exiting
    assert acl.init() == 0
    assert acl.rt.set_device(DEVICE_ID) == 0
    context, ret = acl.rt.create_context(DEVICE_ID)
    assert ret == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.set_exception_info_callback(exception_callback) == 0

    tid, ret = acl.util.start_thread(report_loop, [context])
    assert ret == 0
    assert acl.rt.subscribe_report(tid, stream) == 0

    dev, ret = acl.rt.malloc(1024, ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    host, ret = acl.rt.malloc_host(1024)
    assert ret == 0
    assert acl.rt.launch_callback(hold, None, ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.memcpy_async(host, 1024, dev, 1024, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.free(dev) == 0  # too early: the copy has not run yet
    ret = acl.rt.synchronize_stream(stream)
    print("synchronize_stream returned", ret)

    for _ in range(100):
        if reports:
            break
        time.sleep(0.01)
    stream_id, _ = acl.rt.stream_get_id(stream)
    for report in reports:
        print("exception: device {device} stream {stream} task {task} code {code}".format(**report))
    assert len(reports) == 1 and reports[0]["code"] == ret and reports[0]["stream"] == stream_id
    assert reports[0]["thread"] == threading.get_ident() & 0xFFFFFFFF

    assert acl.rt.set_exception_info_callback(None) == 0
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    exiting = True
    acl.util.stop_thread(tid)
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(DEVICE_ID) == 0
    assert acl.finalize() == 0
    print("exception callback sample passed")


if __name__ == "__main__":
    main()
