"""JPEG decode then VPC resize, in the manner of Ascend's ``vpc_jpeg_resnet50_imagenet_classification`` sample.

    python vpc_jpeg_resize.py IMAGE.jpg OUT.yuv

Only ``import acl`` and numpy. As that sample does, the decoded picture (JPEGD's output, width aligned to 128 and
height to 16) is copied back to the host, then copied into a VPC input buffer sized for the picture aligned to
16 x 2, which is smaller: the copy runs past the end of that buffer. A device does not fault on it, so the sample
works on one; openacl cuts the copy at the end of the buffer and logs one warning. The resized NV12 picture is
written to OUT.yuv.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
OUT_W, OUT_H = 224, 224


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def align_up(value, align):
    return (value + align - 1) // align * align


class Dvpp:
    def __init__(self, stream):
        self.stream = stream
        self.channel_desc = acl.media.dvpp_create_channel_desc()
        check_ret("acl.media.dvpp_create_channel", acl.media.dvpp_create_channel(self.channel_desc))
        self.resize_config = acl.media.dvpp_create_resize_config()

    def pic_desc(self, ptr, size, width, height, w_align, h_align):
        desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(desc, ptr)
        acl.media.dvpp_set_pic_desc_size(desc, size)
        acl.media.dvpp_set_pic_desc_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        acl.media.dvpp_set_pic_desc_width(desc, width)
        acl.media.dvpp_set_pic_desc_height(desc, height)
        acl.media.dvpp_set_pic_desc_width_stride(desc, align_up(width, w_align))
        acl.media.dvpp_set_pic_desc_height_stride(desc, align_up(height, h_align))
        return desc

    def jpeg_decode(self, jpeg):
        in_size = jpeg.size
        in_dev, ret = acl.media.dvpp_malloc(in_size)
        check_ret("acl.media.dvpp_malloc", ret)
        jpeg_ptr = acl.util.numpy_to_ptr(jpeg)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(in_dev, in_size, jpeg_ptr, in_size, ACL_MEMCPY_HOST_TO_DEVICE))
        width, height, _, ret = acl.media.dvpp_jpeg_get_image_info(jpeg_ptr, in_size)
        check_ret("acl.media.dvpp_jpeg_get_image_info", ret)
        out_size = align_up(width, 128) * align_up(height, 16) * 3 // 2
        out_dev, ret = acl.media.dvpp_malloc(out_size)
        check_ret("acl.media.dvpp_malloc", ret)
        desc = self.pic_desc(out_dev, out_size, width, height, 128, 16)
        ret = acl.media.dvpp_jpeg_decode_async(self.channel_desc, in_dev, in_size, desc, self.stream)
        check_ret("acl.media.dvpp_jpeg_decode_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        decoded = np.zeros(out_size, dtype=np.byte)
        ret = acl.rt.memcpy(acl.util.numpy_to_ptr(decoded), out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST)
        check_ret("acl.rt.memcpy", ret)
        acl.media.dvpp_destroy_pic_desc(desc)
        for ptr in (in_dev, out_dev):
            check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
        print(f"[Dvpp] jpeg decode {width}x{height}: {out_size} bytes")
        return decoded, width, height

    def vpc_resize(self, picture, width, height):
        in_size = align_up(width, 16) * align_up(height, 2) * 3 // 2
        in_dev, ret = acl.media.dvpp_malloc(in_size)
        check_ret("acl.media.dvpp_malloc", ret)
        out_size = align_up(OUT_W, 16) * align_up(OUT_H, 2) * 3 // 2
        out_dev, ret = acl.media.dvpp_malloc(out_size)
        check_ret("acl.media.dvpp_malloc", ret)
        in_desc = self.pic_desc(in_dev, in_size, width, height, 16, 2)
        out_desc = self.pic_desc(out_dev, out_size, OUT_W, OUT_H, 16, 2)
        picture_size = picture.itemsize * picture.size  # the decoded picture: larger than in_size
        ptr = acl.util.numpy_to_ptr(picture)
        ret = acl.rt.memcpy(in_dev, picture_size, ptr, picture_size, ACL_MEMCPY_HOST_TO_DEVICE)
        check_ret("acl.rt.memcpy", ret)
        ret = acl.media.dvpp_vpc_resize_async(self.channel_desc, in_desc, out_desc, self.resize_config, self.stream)
        check_ret("acl.media.dvpp_vpc_resize_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        resized = np.zeros(out_size, dtype=np.uint8)
        ret = acl.rt.memcpy(acl.util.numpy_to_ptr(resized), out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST)
        check_ret("acl.rt.memcpy", ret)
        for desc in (in_desc, out_desc):
            acl.media.dvpp_destroy_pic_desc(desc)
        for dev in (in_dev, out_dev):
            check_ret("acl.media.dvpp_free", acl.media.dvpp_free(dev))
        print(f"[Dvpp] vpc resize {width}x{height} -> {OUT_W}x{OUT_H}")
        return resized

    def destroy(self):
        acl.media.dvpp_destroy_resize_config(self.resize_config)
        check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(self.channel_desc))
        check_ret("acl.media.dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(self.channel_desc))


def main(image_path, out_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    dvpp = Dvpp(stream)
    picture, width, height = dvpp.jpeg_decode(np.fromfile(image_path, dtype=np.byte))
    dvpp.vpc_resize(picture, width, height).tofile(out_path)
    dvpp.destroy()
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print("vpc sample passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
