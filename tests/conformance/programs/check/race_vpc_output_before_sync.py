"""A VPC resize in the manner of Ascend's samples, with one bug: the resized picture is copied back to the host
before the stream is synchronized, so the copy may read it before VPC wrote it.

    python race_vpc_output_before_sync.py

Under ``openacl check`` the report names the copy and the resize it races.
"""

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
IN_W, IN_H = 256, 192
OUT_W, OUT_H = 128, 96


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def pic_desc(ptr, size, width, height):
    desc = acl.media.dvpp_create_pic_desc()
    check_ret("acl.media.dvpp_set_pic_desc_data", acl.media.dvpp_set_pic_desc_data(desc, ptr))
    check_ret("acl.media.dvpp_set_pic_desc_size", acl.media.dvpp_set_pic_desc_size(desc, size))
    ret = acl.media.dvpp_set_pic_desc_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
    check_ret("acl.media.dvpp_set_pic_desc_format", ret)
    check_ret("acl.media.dvpp_set_pic_desc_width", acl.media.dvpp_set_pic_desc_width(desc, width))
    check_ret("acl.media.dvpp_set_pic_desc_height", acl.media.dvpp_set_pic_desc_height(desc, height))
    check_ret("acl.media.dvpp_set_pic_desc_width_stride", acl.media.dvpp_set_pic_desc_width_stride(desc, width))
    check_ret("acl.media.dvpp_set_pic_desc_height_stride", acl.media.dvpp_set_pic_desc_height_stride(desc, height))
    return desc


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    channel = acl.media.dvpp_create_channel_desc()
    check_ret("acl.media.dvpp_create_channel", acl.media.dvpp_create_channel(channel))
    resize_config = acl.media.dvpp_create_resize_config()

    in_size, out_size = IN_W * IN_H * 3 // 2, OUT_W * OUT_H * 3 // 2
    host, ret = acl.rt.malloc_host(in_size)
    check_ret("acl.rt.malloc_host", ret)
    check_ret("acl.rt.memset", acl.rt.memset(host, in_size, 128, in_size))  # a grey picture
    in_dev, ret = acl.media.dvpp_malloc(in_size)
    check_ret("acl.media.dvpp_malloc", ret)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(in_dev, in_size, host, in_size, ACL_MEMCPY_HOST_TO_DEVICE))
    out_dev, ret = acl.media.dvpp_malloc(out_size)
    check_ret("acl.media.dvpp_malloc", ret)
    in_desc = pic_desc(in_dev, in_size, IN_W, IN_H)
    out_desc = pic_desc(out_dev, out_size, OUT_W, OUT_H)

    ret = acl.media.dvpp_vpc_resize_async(channel, in_desc, out_desc, resize_config, stream)
    check_ret("acl.media.dvpp_vpc_resize_async", ret)
    ret = acl.rt.memcpy(host, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST)  # BUG: not synchronized
    check_ret("acl.rt.memcpy", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    print(f"resized to {OUT_W}x{OUT_H}, first byte {acl.util.ptr_to_bytes(host, 1)[0]}")

    for desc in (out_desc, in_desc):
        check_ret("acl.media.dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(desc))
    for ptr in (out_dev, in_dev):
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
    check_ret("acl.rt.free_host", acl.rt.free_host(host))
    check_ret("acl.media.dvpp_destroy_resize_config", acl.media.dvpp_destroy_resize_config(resize_config))
    check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(channel))
    check_ret("acl.media.dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(channel))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
