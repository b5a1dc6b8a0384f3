"""A YOLOv3-style detection program in the manner of Ascend's samples: DVPP decodes a JPEG, VPC crop-and-paste
resizes it into a 416x416 YUV420SP picture, and that picture is the model's input as it is: the model was
converted with static AIPP (YUV420SP to RGB, scaled by 1/255), so it takes 416 x 416 x 3 / 2 = 259,584 bytes.

    python static_aipp_detect.py MODEL.om IMAGE.jpg OUT_DIR

Only ``import acl`` and numpy. The second model input is ``img_info`` ([1, 4] float32: the model input's
height and width, the image's), untouched by AIPP. Writes OUT_DIR/board.yuv (what the model was given) and
OUT_DIR/out<i>.npy (each output).
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
NV12 = 1
ACL_DATA_WITH_STATIC_AIPP = 1
MODEL_W, MODEL_H = 416, 416


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def align_up(value, align):
    return (value + align - 1) // align * align


def pic_desc(ptr, size, width, height, ws, hs):
    desc = acl.media.dvpp_create_pic_desc()
    acl.media.dvpp_set_pic_desc_data(desc, ptr)
    acl.media.dvpp_set_pic_desc_size(desc, size)
    acl.media.dvpp_set_pic_desc_format(desc, NV12)
    acl.media.dvpp_set_pic_desc_width(desc, width)
    acl.media.dvpp_set_pic_desc_height(desc, height)
    acl.media.dvpp_set_pic_desc_width_stride(desc, ws)
    acl.media.dvpp_set_pic_desc_height_stride(desc, hs)
    return desc


class Dvpp:
    def __init__(self, stream):
        self.stream = stream
        self.channel = acl.media.dvpp_create_channel_desc()
        check_ret("acl.media.dvpp_create_channel", acl.media.dvpp_create_channel(self.channel))

    def jpegd(self, jpeg):
        host = acl.util.bytes_to_ptr(jpeg)
        width, height, _, ret = acl.media.dvpp_jpeg_get_image_info(host, len(jpeg))
        check_ret("acl.media.dvpp_jpeg_get_image_info", ret)
        src, ret = acl.media.dvpp_malloc(len(jpeg))
        check_ret("acl.media.dvpp_malloc", ret)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(src, len(jpeg), host, len(jpeg), ACL_MEMCPY_HOST_TO_DEVICE))
        ws, hs = align_up(width, 128), align_up(height, 16)
        size = ws * hs * 3 // 2
        out, ret = acl.media.dvpp_malloc(size)
        check_ret("acl.media.dvpp_malloc", ret)
        desc = pic_desc(out, size, width, height, ws, hs)
        check_ret("jpegd", acl.media.dvpp_jpeg_decode_async(self.channel, src, len(jpeg), desc, self.stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        acl.media.dvpp_free(src)
        return desc, out

    def crop_and_paste(self, src_desc, width, height):
        """The whole (even-cropped) picture resized into a width x height one, as acllite's crop_and_paste."""
        size = width * height * 3 // 2
        out, ret = acl.media.dvpp_malloc(size)
        check_ret("acl.media.dvpp_malloc", ret)
        desc = pic_desc(out, size, width, height, width, height)
        src_w = acl.media.dvpp_get_pic_desc_width(src_desc)
        src_h = acl.media.dvpp_get_pic_desc_height(src_desc)
        crop = acl.media.dvpp_create_roi_config(0, (src_w >> 1 << 1) - 1, 0, (src_h >> 1 << 1) - 1)
        paste = acl.media.dvpp_create_roi_config(0, width - 1, 0, height - 1)
        ret = acl.media.dvpp_vpc_crop_and_paste_async(self.channel, src_desc, desc, crop, paste, self.stream)
        check_ret("acl.media.dvpp_vpc_crop_and_paste_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        acl.media.dvpp_destroy_roi_config(crop)
        acl.media.dvpp_destroy_roi_config(paste)
        return desc, out, size

    def close(self):
        check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(self.channel))
        acl.media.dvpp_destroy_channel_desc(self.channel)


def main(model_path, image_path, out_dir):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    dims, ret = acl.mdl.get_input_dims(desc, 0)
    check_ret("acl.mdl.get_input_dims", ret)
    print(f"input 0 {dims['name']} dims {dims['dims']} type {acl.mdl.get_input_data_type(desc, 0)}")
    aipp_type, _, ret = acl.mdl.get_aipp_type(model_id, 0)
    check_ret("acl.mdl.get_aipp_type", ret)
    assert aipp_type == ACL_DATA_WITH_STATIC_AIPP, aipp_type
    info, ret = acl.mdl.get_first_aipp_info(model_id, 0)
    check_ret("acl.mdl.get_first_aipp_info", ret)
    print(f"aipp input format {info['inputFormat']} src {info['srcImageSizeW']}x{info['srcImageSizeH']}")

    dvpp = Dvpp(stream)
    with open(image_path, "rb") as f:
        jpeg = f.read()
    decoded, decoded_ptr = dvpp.jpegd(jpeg)
    image_w, image_h = acl.media.dvpp_get_pic_desc_width(decoded), acl.media.dvpp_get_pic_desc_height(decoded)
    board, board_ptr, board_size = dvpp.crop_and_paste(decoded, MODEL_W, MODEL_H)
    input_size = acl.mdl.get_input_size_by_index(desc, 0)
    print(f"model input size {input_size}, dvpp picture {board_size}")
    if board_size != input_size:
        raise Exception(f"input size {input_size} != picture size {board_size}")

    # acllite's way: the DVPP picture itself is the model's first input buffer
    info_host = np.array([[MODEL_H, MODEL_W, image_h, image_w]], dtype=np.float32)
    info_size = acl.mdl.get_input_size_by_index(desc, 1)
    info_ptr, ret = acl.rt.malloc(info_size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    info_bytes = info_host.tobytes()
    ret = acl.rt.memcpy(info_ptr, info_size, acl.util.bytes_to_ptr(info_bytes), len(info_bytes), 1)
    check_ret("acl.rt.memcpy", ret)
    inputs = acl.mdl.create_dataset()
    for ptr, size in ((board_ptr, board_size), (info_ptr, info_size)):
        _, ret = acl.mdl.add_dataset_buffer(inputs, acl.create_data_buffer(ptr, size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
    outputs = acl.mdl.create_dataset()
    out_ptrs = []
    for i in range(acl.mdl.get_num_outputs(desc)):
        size = acl.mdl.get_output_size_by_index(desc, i)
        ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        _, ret = acl.mdl.add_dataset_buffer(outputs, acl.create_data_buffer(ptr, size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
        out_ptrs.append((ptr, size))
    check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))

    with open(os.path.join(out_dir, "board.yuv"), "wb") as f:
        f.write(acl.util.ptr_to_bytes(board_ptr, board_size))
    for i, (ptr, size) in enumerate(out_ptrs):
        dims, ret = acl.mdl.get_output_dims(desc, i)
        check_ret("acl.mdl.get_output_dims", ret)
        host, ret = acl.rt.malloc_host(size)
        check_ret("acl.rt.malloc_host", ret)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(host, size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST))
        out = np.frombuffer(acl.util.ptr_to_bytes(host, size), np.float32).reshape(dims["dims"])
        np.save(os.path.join(out_dir, f"out{i}.npy"), out)
        print(f"output {i} dims {dims['dims']} max {float(out.max()):.4f}")
        acl.rt.free_host(host)
        acl.rt.free(ptr)

    for dataset in (inputs, outputs):
        for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
            acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
        acl.mdl.destroy_dataset(dataset)
    acl.rt.free(info_ptr)
    for pic in (decoded, board):
        acl.media.dvpp_destroy_pic_desc(pic)
    for ptr in (decoded_ptr, board_ptr):
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
    dvpp.close()
    check_ret("acl.mdl.unload", acl.mdl.unload(model_id))
    acl.mdl.destroy_desc(desc)
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print("static aipp detection sample passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
