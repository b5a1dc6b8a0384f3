"""A detection-style DVPP program in the manner of Ascend's samples: letterbox with crop-and-paste, then crops.

    python dvpp_detect_crop.py IMAGE.jpg OUT_DIR

Only ``import acl`` and numpy. The JPEG is decoded by JPEGD, pasted into a 416x416 NV12 letterbox keeping its
aspect ratio (the paste area computed as acllite does), then two "detected" boxes are cut out with one batch
crop call, each scaled to 96x64, and each crop is encoded back to JPEG by JPEGE into OUT_DIR.
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
NV12 = 1
BOARD = 416
CROP_W, CROP_H = 96, 64


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def align_up(value, align):
    return (value + align - 1) // align * align


def new_picture(width, height, width_align=16, height_align=2, fill=None):
    ws, hs = align_up(width, width_align), align_up(height, height_align)
    size = ws * hs * 3 // 2
    ptr, ret = acl.media.dvpp_malloc(size)
    check_ret("acl.media.dvpp_malloc", ret)
    if fill is not None:
        check_ret("acl.rt.memset", acl.rt.memset(ptr, size, fill, size))
    return describe(acl.media.dvpp_create_pic_desc(), ptr, size, width, height, ws, hs), ptr


def describe(desc, ptr, size, width, height, ws, hs):
    acl.media.dvpp_set_pic_desc_data(desc, ptr)
    acl.media.dvpp_set_pic_desc_size(desc, size)
    acl.media.dvpp_set_pic_desc_format(desc, NV12)
    acl.media.dvpp_set_pic_desc_width(desc, width)
    acl.media.dvpp_set_pic_desc_height(desc, height)
    acl.media.dvpp_set_pic_desc_width_stride(desc, ws)
    acl.media.dvpp_set_pic_desc_height_stride(desc, hs)
    return desc


def letterbox_area(width, height):
    """(right, bottom) of a top-left paste area keeping the aspect ratio, both odd."""
    rx, ry = width / BOARD, height / BOARD
    if rx > ry:
        dx, dy = 0, int((BOARD - height / rx) / 2)
    else:
        dx, dy = int((BOARD - width / ry) / 2), 0
    right, bottom = BOARD - 2 * dx, BOARD - 2 * dy
    return right - 1 if right % 2 == 0 else right, bottom - 1 if bottom % 2 == 0 else bottom


def main(image_path, out_dir):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    channel = acl.media.dvpp_create_channel_desc()
    check_ret("acl.media.dvpp_create_channel", acl.media.dvpp_create_channel(channel))

    with open(image_path, "rb") as f:
        jpeg = f.read()
    host = acl.util.bytes_to_ptr(jpeg)
    width, height, _, ret = acl.media.dvpp_jpeg_get_image_info(host, len(jpeg))
    check_ret("acl.media.dvpp_jpeg_get_image_info", ret)
    jpeg_dev, ret = acl.media.dvpp_malloc(len(jpeg))
    check_ret("acl.media.dvpp_malloc", ret)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(jpeg_dev, len(jpeg), host, len(jpeg), ACL_MEMCPY_HOST_TO_DEVICE))
    decoded, decoded_ptr = new_picture(width, height, 128, 16)
    check_ret("jpegd", acl.media.dvpp_jpeg_decode_async(channel, jpeg_dev, len(jpeg), decoded, stream))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    width, height = acl.media.dvpp_get_pic_desc_width(decoded), acl.media.dvpp_get_pic_desc_height(decoded)

    board, board_ptr = new_picture(BOARD, BOARD, fill=0)
    crop = acl.media.dvpp_create_roi_config(0, (width >> 1 << 1) - 1, 0, (height >> 1 << 1) - 1)
    right, bottom = letterbox_area(width, height)
    paste = acl.media.dvpp_create_roi_config(0, right, 0, bottom)
    ret = acl.media.dvpp_vpc_crop_and_paste_async(channel, decoded, board, crop, paste, stream)
    check_ret("acl.media.dvpp_vpc_crop_and_paste_async", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    print(f"letterbox paste area 0..{right} x 0..{bottom}")

    boxes = [(16, 16 + 2 * CROP_W - 1, 32, 32 + 2 * CROP_H - 1), (200, 200 + CROP_W - 1, 100, 100 + CROP_H - 1)]
    src_batch = acl.media.dvpp_create_batch_pic_desc(1)
    describe(acl.media.dvpp_get_pic_desc(src_batch, 0), board_ptr, BOARD * BOARD * 3 // 2, BOARD, BOARD, BOARD, BOARD)
    dst_batch = acl.media.dvpp_create_batch_pic_desc(len(boxes))
    crop_ptrs = []
    for i in range(len(boxes)):
        size = CROP_W * CROP_H * 3 // 2
        ptr, ret = acl.media.dvpp_malloc(size)
        check_ret("acl.media.dvpp_malloc", ret)
        describe(acl.media.dvpp_get_pic_desc(dst_batch, i), ptr, size, CROP_W, CROP_H, CROP_W, CROP_H)
        crop_ptrs.append(ptr)
    rois = [acl.media.dvpp_create_roi_config(*box) for box in boxes]
    _, ret = acl.media.dvpp_vpc_batch_crop_async(channel, src_batch, [len(boxes)], dst_batch, rois, stream)
    check_ret("acl.media.dvpp_vpc_batch_crop_async", ret)
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    jpege_config = acl.media.dvpp_create_jpege_config()
    check_ret("acl.media.dvpp_set_jpege_config_level", acl.media.dvpp_set_jpege_config_level(jpege_config, 100))
    for i in range(len(boxes)):
        member = acl.media.dvpp_get_pic_desc(dst_batch, i)
        check_ret("crop ret code", acl.media.dvpp_get_pic_desc_ret_code(member))
        out_size, ret = acl.media.dvpp_jpeg_predict_enc_size(member, jpege_config)
        check_ret("acl.media.dvpp_jpeg_predict_enc_size", ret)
        out_ptr, ret = acl.media.dvpp_malloc(out_size)
        check_ret("acl.media.dvpp_malloc", ret)
        size_holder = np.array([out_size], dtype=np.int32).tobytes()
        size_ptr = acl.util.bytes_to_ptr(size_holder)
        ret = acl.media.dvpp_jpeg_encode_async(channel, member, out_ptr, size_ptr, jpege_config, stream)
        check_ret("acl.media.dvpp_jpeg_encode_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        length = int(np.frombuffer(size_holder, np.int32)[0])
        path = os.path.join(out_dir, f"crop_{i}.jpg")
        with open(path, "wb") as f:
            f.write(acl.util.ptr_to_bytes(out_ptr, length))
        print(f"crop {i} box {boxes[i]} -> {path} ({length} bytes)")
        acl.media.dvpp_free(out_ptr)

    for roi in (crop, paste, *rois):
        acl.media.dvpp_destroy_roi_config(roi)
    acl.media.dvpp_destroy_jpege_config(jpege_config)
    acl.media.dvpp_destroy_batch_pic_desc(src_batch)
    acl.media.dvpp_destroy_batch_pic_desc(dst_batch)
    for desc in (decoded, board):
        acl.media.dvpp_destroy_pic_desc(desc)
    for ptr in (jpeg_dev, decoded_ptr, board_ptr, *crop_ptrs):
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
    check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(channel))
    check_ret("acl.media.dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(channel))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print("dvpp detection crop sample passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
