"""A pyACL program in the style of the runtime samples: a producer stream hands a buffer to a consumer stream through
a notify, the data travels through registered host memory and a virtual-memory range, and a picture is given a
border by VPC. Only ``import acl`` and numpy are used, so it runs unchanged on an NPU."""

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE = 1, 3
ACL_HOST_REGISTER_MAPPED = 0
SUM, ACL_FLOAT = 10, 0
NV12 = 1


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} failed, ret {ret}")


def notify_pipeline():
    producer, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    consumer, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    notify, ret = acl.rt.create_notify(0)
    check(ret, "create_notify")

    host = np.arange(256, dtype=np.float32)
    data = host.tobytes()
    host_ptr = acl.util.bytes_to_ptr(data)
    dev_view, ret = acl.rt.host_register(host_ptr, len(data), ACL_HOST_REGISTER_MAPPED)
    check(ret, "host_register")
    staging, ret = acl.rt.malloc(len(data), 0)
    check(ret, "malloc")
    total, ret = acl.rt.malloc(len(data), 0)
    check(ret, "malloc")
    check(acl.rt.memset(total, len(data), 0, len(data)), "memset")

    # The consumer waits before the producer has even queued its copy: the notify orders them.
    check(acl.rt.wait_and_reset_notify(notify, consumer, 0), "wait_and_reset_notify")
    check(acl.rt.reduce_async(total, staging, len(data), SUM, ACL_FLOAT, consumer, 0), "reduce_async")
    check(acl.rt.memcpy_async(staging, len(data), dev_view, len(data), ACL_MEMCPY_DEVICE_TO_DEVICE, producer), "copy")
    check(acl.rt.record_notify(notify, producer), "record_notify")
    check(acl.rt.synchronize_stream(consumer), "synchronize_stream")
    check(acl.rt.synchronize_stream(producer), "synchronize_stream")  # before destroying it, as the samples do
    result = np.frombuffer(acl.util.ptr_to_bytes(total, len(data)), np.float32)
    print(f"notify pipeline sum {float(result.sum()):.0f}")

    check(acl.rt.host_unregister(host_ptr), "host_unregister")
    check(acl.rt.destroy_notify(notify), "destroy_notify")
    for stream in (producer, consumer):
        check(acl.rt.destroy_stream(stream), "destroy_stream")
    for ptr in (staging, total):
        check(acl.rt.free(ptr), "free")


def virtual_memory():
    prop = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": DEVICE_ID, "type": 1}, "reserve": 0}
    granularity, ret = acl.rt.mem_get_allocation_granularity(prop, 0)
    check(ret, "mem_get_allocation_granularity")
    size = 2 * granularity
    base, ret = acl.rt.reserve_mem_address(size, 0, 0, 0)
    check(ret, "reserve_mem_address")
    handles = []
    for i in range(2):
        handle, ret = acl.rt.malloc_physical(granularity, prop, 0)
        check(ret, "malloc_physical")
        check(acl.rt.map_mem(base + i * granularity, granularity, 0, handle, 0), "map_mem")
        handles.append(handle)
    pattern = bytes(range(256)) * (size // 256)
    check(acl.rt.memcpy(base, size, acl.util.bytes_to_ptr(pattern), size, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
    print(f"virtual range round trip {acl.util.ptr_to_bytes(base, size) == pattern}")
    for i, handle in enumerate(handles):
        check(acl.rt.unmap_mem(base + i * granularity), "unmap_mem")
        check(acl.rt.free_physical(handle), "free_physical")
    check(acl.rt.release_mem_address(base), "release_mem_address")


def make_border(stream):
    channel = acl.media.dvpp_create_channel_desc()
    check(acl.media.dvpp_create_channel(channel), "dvpp_create_channel")
    pics = []
    for width, height, value in ((64, 32, 200), (96, 48, None)):
        stride = (width + 15) // 16 * 16
        size = stride * height * 3 // 2
        ptr, ret = acl.media.dvpp_malloc(size)
        check(ret, "dvpp_malloc")
        if value is not None:
            check(acl.rt.memset(ptr, size, value, size), "memset")
        pic = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(pic, ptr)
        acl.media.dvpp_set_pic_desc_size(pic, size)
        acl.media.dvpp_set_pic_desc_format(pic, NV12)
        acl.media.dvpp_set_pic_desc_width(pic, width)
        acl.media.dvpp_set_pic_desc_height(pic, height)
        acl.media.dvpp_set_pic_desc_width_stride(pic, stride)
        acl.media.dvpp_set_pic_desc_height_stride(pic, height)
        pics.append((pic, ptr))
    border = acl.media.dvpp_create_border_config()
    for setter, value in (("top", 8), ("bottom", 8), ("left", 16), ("right", 16)):
        check(getattr(acl.media, f"dvpp_set_border_config_{setter}")(border, value), setter)
    check(acl.media.dvpp_set_border_config_value(border, 0, 16.0), "value")
    check(acl.media.dvpp_vpc_make_border_async(channel, pics[0][0], pics[1][0], border, stream), "make_border")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    out = np.frombuffer(acl.util.ptr_to_bytes(pics[1][1], 96 * 48), np.uint8).reshape(48, 96)
    print(f"border {int(out[0, 0])} inside {int(out[24, 48])}")
    acl.media.dvpp_destroy_border_config(border)
    for pic, ptr in pics:
        acl.media.dvpp_destroy_pic_desc(pic)
        acl.media.dvpp_free(ptr)
    acl.media.dvpp_destroy_channel(channel)
    acl.media.dvpp_destroy_channel_desc(channel)


def main():
    check(acl.init(), "init")
    check(acl.rt.set_device(DEVICE_ID), "set_device")
    context, ret = acl.rt.create_context(DEVICE_ID)
    check(ret, "create_context")
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    notify_pipeline()
    virtual_memory()
    make_border(stream)
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.destroy_context(context), "destroy_context")
    check(acl.rt.reset_device(DEVICE_ID), "reset_device")
    check(acl.finalize(), "finalize")
    print("done")


if __name__ == "__main__":
    main()
