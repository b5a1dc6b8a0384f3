"""Video encoding in the style of Ascend's VENC sample, using only `import acl`.

    openacl run venc_file.py FRAMES.nv12 WIDTH HEIGHT OUT.h264

Reads NV12 frames from a raw file, sends each through one DVPP input buffer to a VENC channel whose callback
thread (with a context of its own, as the sample's) loops on process_report, appends every payload the callback
receives to OUT, then sends end of stream and destroys the channel.
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
H264_HIGH_LEVEL = 3
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class AclVenc:
    def __init__(self, out_path):
        self.out_path = out_path
        self.running = True
        self.callbacks = 0
        if os.path.exists(out_path):
            os.remove(out_path)

    def cb_thread_func(self, args_list):
        context, ret = acl.rt.create_context(DEVICE_ID)
        check_ret("acl.rt.create_context", ret)
        while self.running:
            acl.rt.process_report(args_list[0])
        acl.rt.destroy_context(context)

    def callback_func(self, input_pic_desc, output_stream_desc, user_data):
        if output_stream_desc == 0:
            return
        data_ptr = acl.media.dvpp_get_stream_desc_data(output_stream_desc)
        if acl.media.dvpp_get_stream_desc_ret_code(output_stream_desc) != 0:
            print(f"frame {user_data} failed")
            return
        size = acl.media.dvpp_get_stream_desc_size(output_stream_desc)
        host = bytes(size)
        ret = acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, data_ptr, size, ACL_MEMCPY_DEVICE_TO_HOST)
        check_ret("acl.rt.memcpy", ret)
        with open(self.out_path, "ab") as f:
            f.write(host)
        self.callbacks += 1

    def run(self, frames_path, width, height):
        self.thread_id, ret = acl.util.start_thread(self.cb_thread_func, [1000])
        check_ret("acl.util.start_thread", ret)
        desc = acl.media.venc_create_channel_desc()
        acl.media.venc_set_channel_desc_thread_id(desc, self.thread_id)
        acl.media.venc_set_channel_desc_callback(desc, self.callback_func)
        acl.media.venc_set_channel_desc_entype(desc, H264_HIGH_LEVEL)
        acl.media.venc_set_channel_desc_pic_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        acl.media.venc_set_channel_desc_key_frame_interval(desc, 16)
        acl.media.venc_set_channel_desc_pic_height(desc, height)
        acl.media.venc_set_channel_desc_pic_width(desc, width)
        check_ret("acl.media.venc_create_channel", acl.media.venc_create_channel(desc))
        frame_config = acl.media.venc_create_frame_config()
        acl.media.venc_set_frame_config_eos(frame_config, 0)
        acl.media.venc_set_frame_config_force_i_frame(frame_config, 0)
        check_ret("eos flag", acl.media.venc_get_frame_config_eos(frame_config))

        frame_size = width * height * 3 // 2
        frames = np.fromfile(frames_path, dtype=np.byte).reshape(-1, frame_size)
        input_mem, ret = acl.media.dvpp_malloc(frame_size)
        check_ret("acl.media.dvpp_malloc", ret)
        pic_desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(pic_desc, input_mem)
        acl.media.dvpp_set_pic_desc_size(pic_desc, frame_size)
        for index, frame in enumerate(frames):
            ret = acl.rt.memcpy(
                input_mem, frame_size, acl.util.numpy_to_ptr(frame), frame_size, ACL_MEMCPY_HOST_TO_DEVICE
            )
            check_ret("acl.rt.memcpy", ret)
            check_ret("acl.media.venc_send_frame", acl.media.venc_send_frame(desc, pic_desc, 0, frame_config, index))
        acl.media.venc_set_frame_config_eos(frame_config, 1)
        check_ret("eos", acl.media.venc_send_frame(desc, 0, 0, frame_config, None))
        print(f"sent {len(frames)} frames, {self.callbacks} payloads written")

        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(input_mem))
        check_ret("acl.media.venc_destroy_channel", acl.media.venc_destroy_channel(desc))
        self.running = False
        check_ret("acl.util.stop_thread", acl.util.stop_thread(self.thread_id))
        acl.media.dvpp_destroy_pic_desc(pic_desc)
        acl.media.venc_destroy_frame_config(frame_config)
        check_ret("acl.media.venc_destroy_channel_desc", acl.media.venc_destroy_channel_desc(desc))


def main(frames_path, width, height, out_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    AclVenc(out_path).run(frames_path, width, height)
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print(f"wrote {os.path.getsize(out_path)} bytes to {os.path.basename(out_path)}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
