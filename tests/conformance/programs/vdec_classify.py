"""Video classification in the style of Ascend's VDEC sample and acllite's VideoCapture, using only `import acl`.

    openacl run vdec_classify.py CLIP.h264 MODEL

PyAV demuxes the Annex-B file into frames (as acllite's VideoCapture does); each frame goes through one reused
DVPP input buffer to VDEC; the callback thread loops on process_report and keeps every decoded NV12 picture.
After the channel is destroyed each picture is converted to RGB, resized to the model's 64x64 with numpy and
classified. Prints one line per frame: its index, the CRC of its luma, the class and its probability.
"""

import sys
import zlib

import av
import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
H264_MAIN_LEVEL = 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
MODEL_SIZE = 64


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class Vdec:
    def __init__(self, context, width, height):
        self.context = context
        self.width, self.height = width, height
        self.running = True
        self.pictures = []
        self.sent = 0

    def _thread_func(self, args_list):
        acl.rt.set_context(self.context)
        while self.running:
            acl.rt.process_report(args_list[0])

    def _callback(self, input_stream_desc, output_pic_desc, user_data):
        acl.media.dvpp_destroy_stream_desc(input_stream_desc)
        buffer = acl.media.dvpp_get_pic_desc_data(output_pic_desc)
        ret_code = acl.media.dvpp_get_pic_desc_ret_code(output_pic_desc)
        size = acl.media.dvpp_get_pic_desc_size(output_pic_desc)
        self.pictures.append({"index": user_data, "buffer": buffer, "size": size, "ret": ret_code})
        acl.media.dvpp_destroy_pic_desc(output_pic_desc)

    def init(self):
        self.thread_id, ret = acl.util.start_thread(self._thread_func, [100])
        check_ret("acl.util.start_thread", ret)
        self.desc = acl.media.vdec_create_channel_desc()
        acl.media.vdec_set_channel_desc_channel_id(self.desc, 10)
        acl.media.vdec_set_channel_desc_thread_id(self.desc, self.thread_id)
        acl.media.vdec_set_channel_desc_callback(self.desc, self._callback)
        acl.media.vdec_set_channel_desc_entype(self.desc, H264_MAIN_LEVEL)
        acl.media.vdec_set_channel_desc_out_pic_format(self.desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        out_mode = acl.media.vdec_get_channel_desc_out_mode(self.desc)
        check_ret("out mode", out_mode)
        check_ret("acl.media.vdec_create_channel", acl.media.vdec_create_channel(self.desc))
        self.frame_config = acl.media.vdec_create_frame_config()
        self.input_size = self.width * self.height * 3
        self.input_buffer, ret = acl.media.dvpp_malloc(self.input_size)
        check_ret("acl.media.dvpp_malloc", ret)

    def send(self, packet_bytes):
        data = np.frombuffer(packet_bytes, np.byte)
        ret = acl.rt.memcpy(
            self.input_buffer, self.input_size, acl.util.numpy_to_ptr(data), data.size, ACL_MEMCPY_HOST_TO_DEVICE
        )
        check_ret("acl.rt.memcpy", ret)
        stream_desc = acl.media.dvpp_create_stream_desc()
        acl.media.dvpp_set_stream_desc_data(stream_desc, self.input_buffer)
        acl.media.dvpp_set_stream_desc_size(stream_desc, data.size)
        out_size = self.width * self.height * 3 // 2
        out_buffer, ret = acl.media.dvpp_malloc(out_size)
        check_ret("acl.media.dvpp_malloc", ret)
        pic_desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(pic_desc, out_buffer)
        acl.media.dvpp_set_pic_desc_size(pic_desc, out_size)
        acl.media.dvpp_set_pic_desc_format(pic_desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        ret = acl.media.vdec_send_frame(self.desc, stream_desc, pic_desc, self.frame_config, self.sent)
        check_ret("acl.media.vdec_send_frame", ret)
        self.sent += 1

    def destroy(self):
        check_ret("acl.media.vdec_destroy_channel", acl.media.vdec_destroy_channel(self.desc))
        self.running = False
        check_ret("acl.util.stop_thread", acl.util.stop_thread(self.thread_id))
        check_ret("acl.media.vdec_destroy_channel_desc", acl.media.vdec_destroy_channel_desc(self.desc))
        check_ret("acl.media.vdec_destroy_frame_config", acl.media.vdec_destroy_frame_config(self.frame_config))
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(self.input_buffer))


def nv12_to_model_input(nv12, width, height):
    """BT.601 full-range NV12 -> RGB, nearest-neighbour resize to 64x64, CHW float32 in [0, 1]."""
    y = nv12[: width * height].reshape(height, width).astype(np.float32)
    uv = nv12[width * height :].reshape(height // 2, width // 2, 2).astype(np.float32) - 128.0
    u = uv[:, :, 0].repeat(2, 0).repeat(2, 1)
    v = uv[:, :, 1].repeat(2, 0).repeat(2, 1)
    rgb = np.stack([y + 1.402 * v, y - 0.344 * u - 0.714 * v, y + 1.772 * u]).clip(0, 255)
    rows = np.arange(MODEL_SIZE) * height // MODEL_SIZE
    cols = np.arange(MODEL_SIZE) * width // MODEL_SIZE
    return np.ascontiguousarray(rgb[:, rows][:, :, cols][None] / 255.0, dtype=np.float32)


class Classifier:
    def __init__(self, model_path):
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check_ret("acl.mdl.load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.input_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.output_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.buffers = []
        self.inputs = self._dataset([self.input_size])
        self.outputs = self._dataset(
            [acl.mdl.get_output_size_by_index(self.desc, i) for i in range(acl.mdl.get_num_outputs(self.desc))]
        )

    def _dataset(self, sizes):
        dataset = acl.mdl.create_dataset()
        for size in sizes:
            ptr, ret = acl.rt.malloc(size, 0)
            check_ret("acl.rt.malloc", ret)
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
            check_ret("acl.mdl.add_dataset_buffer", ret)
            self.buffers.append(ptr)
        return dataset

    def classify(self, tensor):
        data = tensor.tobytes()
        in_ptr = acl.mdl.get_dataset_buffer(self.inputs, 0)
        check_ret(
            "memcpy",
            acl.rt.memcpy(acl.get_data_buffer_addr(in_ptr), self.input_size, acl.util.bytes_to_ptr(data), len(data), 1),
        )
        check_ret("acl.mdl.execute", acl.mdl.execute(self.model_id, self.inputs, self.outputs))
        out = acl.get_data_buffer_addr(acl.mdl.get_dataset_buffer(self.outputs, 0))
        host = bytes(self.output_size)
        check_ret(
            "memcpy",
            acl.rt.memcpy(acl.util.bytes_to_ptr(host), self.output_size, out, self.output_size, 2),
        )
        probabilities = np.frombuffer(host, np.float32)
        return int(probabilities.argmax()), float(probabilities.max())

    def release(self):
        check_ret("acl.mdl.unload", acl.mdl.unload(self.model_id))
        for dataset in (self.inputs, self.outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
            acl.mdl.destroy_dataset(dataset)
        for ptr in self.buffers:
            acl.rt.free(ptr)
        acl.mdl.destroy_desc(self.desc)


def main(clip_path, model_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)

    container = av.open(clip_path)
    stream = container.streams.video[0]
    width, height = stream.codec_context.width, stream.codec_context.height
    vdec = Vdec(context, width, height)
    vdec.init()
    for packet in container.demux(stream):
        if packet.size:
            vdec.send(bytes(packet))
    container.close()
    vdec.destroy()
    order = [p["index"] for p in vdec.pictures]
    print(f"decoded {len(vdec.pictures)} of {vdec.sent} frames, order {'kept' if order == sorted(order) else order}")

    classifier = Classifier(model_path)
    for picture in vdec.pictures:
        host = bytes(picture["size"])
        check_ret(
            "memcpy D2H",
            acl.rt.memcpy(
                acl.util.bytes_to_ptr(host), picture["size"], picture["buffer"], picture["size"],
                ACL_MEMCPY_DEVICE_TO_HOST,
            ),
        )  # fmt: skip
        acl.media.dvpp_free(picture["buffer"])
        nv12 = np.frombuffer(host, np.uint8)
        crc = zlib.crc32(nv12[: width * height].tobytes())
        label, probability = classifier.classify(nv12_to_model_input(nv12, width, height))
        print(f"frame {picture['index']} ret {picture['ret']} luma crc {crc:08x} class {label} p {probability:.3f}")
    classifier.release()
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
