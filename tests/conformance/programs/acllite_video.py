"""Video reading in the style of acllite's VideoCapture over a DvppVdec-like decoder, using only `import acl`.

    openacl run acllite_video.py CLIP.h264

A decode thread (acl.util.start_thread) demuxes the Annex-B file with PyAV, picks the entype from the profile
byte of the stream's SPS, and sends every frame through one reused DVPP input buffer; a second thread loops on
process_report and puts each decoded picture into a bounded queue (the callback blocks while it is full); the
main thread reads pictures until the decoder says it has finished, then the decode thread destroys the channel.
Prints one line per picture and a summary.
"""

import queue
import sys
import threading
import time
import zlib

import av
import numpy as np

import acl

ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
PROFILE_TO_ENTYPE = {66: 1, 77: 2, 100: 3}  # H.264 baseline / main / high
QUEUE_SIZE = 4  # small on purpose: the callback thread blocks on it while the reader is behind


class Decoder:
    """One VDEC channel; callbacks queue the pictures, counters say when every frame sent has come back."""

    def __init__(self, context, channel_id, width, height, entype):
        self.context = context
        self.width, self.height = width, height
        self.frames = queue.Queue(QUEUE_SIZE)
        self.sent = 0
        self.completed = 0
        self.run_flag = True
        self.callback_tid, ret = acl.util.start_thread(self._callback_thread, [])
        assert ret == 0
        self.desc = acl.media.vdec_create_channel_desc()
        acl.media.vdec_set_channel_desc_channel_id(self.desc, channel_id)
        acl.media.vdec_set_channel_desc_thread_id(self.desc, self.callback_tid)
        acl.media.vdec_set_channel_desc_callback(self.desc, self._callback)
        acl.media.vdec_set_channel_desc_entype(self.desc, entype)
        acl.media.vdec_set_channel_desc_out_pic_format(self.desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        out_mode = acl.media.vdec_get_channel_desc_out_mode(self.desc)
        acl.media.vdec_set_channel_desc_out_mode(self.desc, out_mode)
        assert acl.media.vdec_create_channel(self.desc) == 0
        self.frame_config = acl.media.vdec_create_frame_config()

    def _callback_thread(self, args):
        acl.rt.set_context(self.context)
        while self.run_flag:
            acl.rt.process_report(300)

    def _callback(self, input_stream_desc, output_pic_desc, user_data):
        self.completed += 1
        acl.media.dvpp_destroy_stream_desc(input_stream_desc)
        data = acl.media.dvpp_get_pic_desc_data(output_pic_desc)
        size = acl.media.dvpp_get_pic_desc_size(output_pic_desc)
        ret_code = acl.media.dvpp_get_pic_desc_ret_code(output_pic_desc)
        if ret_code:
            print(f"decode channel frame {user_data[1]} failed, error {ret_code}")
            acl.media.dvpp_free(data)
        else:
            self.frames.put((user_data[1], data, size))
        acl.media.dvpp_destroy_pic_desc(output_pic_desc)

    def process(self, input_data, input_size, user_data):
        stream_desc = acl.media.dvpp_create_stream_desc()
        acl.media.dvpp_set_stream_desc_size(stream_desc, input_size)
        acl.media.dvpp_set_stream_desc_data(stream_desc, input_data)
        out_size = self.width * self.height * 3 // 2
        buffer, ret = acl.media.dvpp_malloc(out_size)
        assert ret == 0
        pic_desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(pic_desc, buffer)
        acl.media.dvpp_set_pic_desc_size(pic_desc, out_size)
        acl.media.dvpp_set_pic_desc_format(pic_desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        ret = acl.media.vdec_send_frame(self.desc, stream_desc, pic_desc, self.frame_config, user_data)
        self.sent += 1
        return ret

    def is_finished(self):
        return self.sent > 0 and self.completed >= self.sent

    def read(self, timeout):
        try:
            return self.frames.get(timeout=timeout)
        except queue.Empty:
            return None

    def destroy(self):
        ret = acl.media.vdec_destroy_channel(self.desc)
        self.run_flag = False
        acl.util.stop_thread(self.callback_tid)
        acl.media.vdec_destroy_frame_config(self.frame_config)
        acl.media.vdec_destroy_channel_desc(self.desc)
        return ret


class VideoCapture:
    def __init__(self, path):
        self.path = path
        self.context, _ = acl.rt.get_context()
        container = av.open(path)
        codec = container.streams.video[0].codec_context
        extradata = np.frombuffer(codec.extradata, np.ubyte)
        profile = extradata[4] if (extradata[0:3] == [0, 0, 1]).all() else extradata[5]
        self.entype = PROFILE_TO_ENTYPE.get(int(profile), 2)
        self.width, self.height = codec.width, codec.height
        container.close()
        self.status = "init"
        self.decoder = None
        self.destroy_ret = None
        self.thread_id, ret = acl.util.start_thread(self._decode_thread, [])
        assert ret == 0
        while self.status == "init":
            time.sleep(0.01)

    def _decode_thread(self, args):
        acl.rt.set_context(self.context)
        self.decoder = Decoder(self.context, 0, self.width, self.height, self.entype)
        input_buffer, ret = acl.media.dvpp_malloc(self.width * self.height * 3)
        assert ret == 0
        self.status = "ready"
        container = av.open(self.path)
        for index, packet in enumerate(container.demux(container.streams.video[0])):
            data = np.frombuffer(bytes(packet), np.byte)
            if data.size == 0:
                break
            ret = acl.rt.memcpy(
                input_buffer, self.width * self.height * 3, acl.util.numpy_to_ptr(data), data.size,
                ACL_MEMCPY_HOST_TO_DEVICE,
            )  # fmt: skip
            assert ret == 0
            assert self.decoder.process(input_buffer, data.size, [0, index]) == 0
        container.close()
        self.status = "sent"
        self.destroy_ret = self.decoder.destroy()  # waits for every callback, while the reader drains the queue
        acl.media.dvpp_free(input_buffer)
        self.status = "done"

    def read(self):
        while True:
            picture = self.decoder.read(timeout=0.05)
            if picture is not None:
                return picture
            if self.status == "done" and self.decoder.is_finished():
                return None

    def release(self):
        acl.util.stop_thread(self.thread_id)


def main(path):
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    context, ret = acl.rt.create_context(0)
    assert ret == 0
    capture = VideoCapture(path)
    print(f"stream {capture.width}x{capture.height} entype {capture.entype}")
    count = 0
    while True:
        picture = capture.read()
        if picture is None:
            break
        index, data, size = picture
        host = bytes(size)
        acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, data, size, ACL_MEMCPY_DEVICE_TO_HOST)
        acl.media.dvpp_free(data)
        crc = zlib.crc32(host[: capture.width * capture.height])
        print(f"picture {index} luma crc {crc:08x}")
        count += 1
    capture.release()
    print(f"read {count} pictures, sent {capture.decoder.sent}, destroy ret {capture.destroy_ret}")
    print(f"threads left: {threading.active_count()}")
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0


if __name__ == "__main__":
    main(sys.argv[1])
