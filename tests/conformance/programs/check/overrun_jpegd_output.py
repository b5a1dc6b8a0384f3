"""JPEG decode in the manner of Ascend's DVPP samples, with one bug: the output buffer is sized for the picture's
own width and height, while the output desc is given the size JPEGD predicts (its strides are aligned up), so the
decode writes past the end of the buffer.

    python overrun_jpegd_output.py IMAGE.jpg

A device does not check the range; openacl refuses the decode (100000). Under ``openacl check`` the report names
the decode and the allocation.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main(image_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    channel = acl.media.dvpp_create_channel_desc()
    check_ret("acl.media.dvpp_create_channel", acl.media.dvpp_create_channel(channel))
    jpeg = np.fromfile(image_path, dtype=np.uint8)
    jpeg_ptr = acl.util.bytes_to_ptr(jpeg.tobytes())
    width, height, _, ret = acl.media.dvpp_jpeg_get_image_info(jpeg_ptr, jpeg.size)
    check_ret("acl.media.dvpp_jpeg_get_image_info", ret)
    in_dev, ret = acl.media.dvpp_malloc(jpeg.size)
    check_ret("acl.media.dvpp_malloc", ret)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(in_dev, jpeg.size, jpeg_ptr, jpeg.size, ACL_MEMCPY_HOST_TO_DEVICE))
    out_size, ret = acl.media.dvpp_jpeg_predict_dec_size(jpeg_ptr, jpeg.size, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
    check_ret("acl.media.dvpp_jpeg_predict_dec_size", ret)
    out_dev, ret = acl.media.dvpp_malloc(width * height * 3 // 2)
    check_ret("acl.media.dvpp_malloc", ret)
    desc = acl.media.dvpp_create_pic_desc()
    acl.media.dvpp_set_pic_desc_data(desc, out_dev)
    acl.media.dvpp_set_pic_desc_size(desc, out_size)
    acl.media.dvpp_set_pic_desc_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
    ret = acl.media.dvpp_jpeg_decode_async(channel, in_dev, jpeg.size, desc, stream)  # BUG: buffer too small
    if ret == 0:
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        print(f"decoded {width}x{height}")
    else:
        print(f"acl.media.dvpp_jpeg_decode_async failed ret={ret}")

    acl.media.dvpp_destroy_pic_desc(desc)
    for ptr in (in_dev, out_dev):
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
    check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(channel))
    check_ret("acl.media.dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(channel))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1])
