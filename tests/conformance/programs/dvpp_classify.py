"""An image classification program in the manner of Ascend's DVPP samples: JPEGD, VPC resize, then the model.

    python dvpp_classify.py MODEL IMAGE.jpg

Only ``import acl`` and numpy. The JPEG is decoded by JPEGD to NV12 (width stride aligned to 128, height to 16;
the real size read back from the output desc), resized by VPC to the model's 64x64, converted to planar RGB
on the host (the model has no AIPP) and classified. Prints the top class and the probabilities.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
MODEL_W, MODEL_H = 64, 64


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

    def jpegd(self, jpeg_bytes):
        data_ptr = acl.util.bytes_to_ptr(jpeg_bytes)
        width, height, components, ret = acl.media.dvpp_jpeg_get_image_info(data_ptr, len(jpeg_bytes))
        check_ret("acl.media.dvpp_jpeg_get_image_info", ret)
        print(f"[Dvpp] jpeg {width}x{height}, {components} components")
        dev_in, ret = acl.media.dvpp_malloc(len(jpeg_bytes))
        check_ret("acl.media.dvpp_malloc", ret)
        check_ret(
            "acl.rt.memcpy",
            acl.rt.memcpy(dev_in, len(jpeg_bytes), data_ptr, len(jpeg_bytes), ACL_MEMCPY_HOST_TO_DEVICE),
        )
        out_size, ret = acl.media.dvpp_jpeg_predict_dec_size(data_ptr, len(jpeg_bytes), PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        check_ret("acl.media.dvpp_jpeg_predict_dec_size", ret)
        dev_out, ret = acl.media.dvpp_malloc(out_size)
        check_ret("acl.media.dvpp_malloc", ret)
        desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(desc, dev_out)
        acl.media.dvpp_set_pic_desc_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        acl.media.dvpp_set_pic_desc_width(desc, width)
        acl.media.dvpp_set_pic_desc_height(desc, height)
        acl.media.dvpp_set_pic_desc_width_stride(desc, align_up(width, 128))
        acl.media.dvpp_set_pic_desc_height_stride(desc, align_up(height, 16))
        acl.media.dvpp_set_pic_desc_size(desc, out_size)
        ret = acl.media.dvpp_jpeg_decode_async(self.channel_desc, dev_in, len(jpeg_bytes), desc, self.stream)
        check_ret("acl.media.dvpp_jpeg_decode_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(dev_in))
        decoded = (acl.media.dvpp_get_pic_desc_width(desc), acl.media.dvpp_get_pic_desc_height(desc))
        print(f"[Dvpp] jpegd output {decoded[0]}x{decoded[1]}")
        return desc, dev_out

    def resize(self, in_desc, width, height):
        ws, hs = align_up(width, 16), align_up(height, 2)
        size = ws * hs * 3 // 2
        dev_out, ret = acl.media.dvpp_malloc(size)
        check_ret("acl.media.dvpp_malloc", ret)
        in_w, in_h = acl.media.dvpp_get_pic_desc_width(in_desc), acl.media.dvpp_get_pic_desc_height(in_desc)
        acl.media.dvpp_set_pic_desc_width_stride(in_desc, align_up(in_w, 128))
        acl.media.dvpp_set_pic_desc_height_stride(in_desc, align_up(in_h, 16))
        desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(desc, dev_out)
        acl.media.dvpp_set_pic_desc_format(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420)
        acl.media.dvpp_set_pic_desc_width(desc, width)
        acl.media.dvpp_set_pic_desc_height(desc, height)
        acl.media.dvpp_set_pic_desc_width_stride(desc, ws)
        acl.media.dvpp_set_pic_desc_height_stride(desc, hs)
        acl.media.dvpp_set_pic_desc_size(desc, size)
        ret = acl.media.dvpp_vpc_resize_async(self.channel_desc, in_desc, desc, self.resize_config, self.stream)
        check_ret("acl.media.dvpp_vpc_resize_async", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        acl.media.dvpp_destroy_pic_desc(desc)
        return dev_out, size

    def destroy(self):
        acl.media.dvpp_destroy_resize_config(self.resize_config)
        check_ret("acl.media.dvpp_destroy_channel", acl.media.dvpp_destroy_channel(self.channel_desc))
        check_ret("acl.media.dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(self.channel_desc))


def nv12_to_rgb_planar(nv12, width, height):
    """BT.601 full range, as the hardware's colour-space conversion; returns [3, h, w] floats in 0..1."""
    y = nv12[: width * height].reshape(height, width).astype(np.float32)
    uv = nv12[width * height : width * height * 3 // 2].reshape(height // 2, width // 2, 2).astype(np.float32)
    u = uv[..., 0].repeat(2, axis=0).repeat(2, axis=1) - 128.0
    v = uv[..., 1].repeat(2, axis=0).repeat(2, axis=1) - 128.0
    rgb = np.stack([y + 1.402 * v, y - 0.344 * u - 0.714 * v, y + 1.772 * u])
    return np.clip(rgb, 0, 255) / 255.0


class Classifier:
    def __init__(self, model_path):
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check_ret("acl.mdl.load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.in_dev, ret = acl.rt.malloc(self.in_size, 0)
        check_ret("acl.rt.malloc", ret)
        self.out_dev, ret = acl.rt.malloc(self.out_size, 0)
        check_ret("acl.rt.malloc", ret)
        self.inputs = self._dataset(self.in_dev, self.in_size)
        self.outputs = acl.mdl.create_dataset()
        self.extra = []  # device memory of the outputs after the first
        for i in range(acl.mdl.get_num_outputs(self.desc)):
            size = acl.mdl.get_output_size_by_index(self.desc, i)
            ptr = self.out_dev if i == 0 else acl.rt.malloc(size, 0)[0]
            if i:
                self.extra.append(ptr)
            _, ret = acl.mdl.add_dataset_buffer(self.outputs, acl.create_data_buffer(ptr, size))
            check_ret("acl.mdl.add_dataset_buffer", ret)

    @staticmethod
    def _dataset(ptr, size):
        dataset = acl.mdl.create_dataset()
        _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
        return dataset

    def run(self, chw):
        data = np.ascontiguousarray(chw[None], dtype=np.float32).tobytes()
        check_ret(
            "acl.rt.memcpy",
            acl.rt.memcpy(self.in_dev, self.in_size, acl.util.bytes_to_ptr(data), len(data), ACL_MEMCPY_HOST_TO_DEVICE),
        )
        check_ret("acl.mdl.execute", acl.mdl.execute(self.model_id, self.inputs, self.outputs))
        out = np.zeros(self.out_size // 4, np.float32)
        out_ptr = acl.util.numpy_to_ptr(out)
        check_ret(
            "acl.rt.memcpy",
            acl.rt.memcpy(out_ptr, self.out_size, self.out_dev, self.out_size, ACL_MEMCPY_DEVICE_TO_HOST),
        )
        return out

    def destroy(self):
        check_ret("acl.mdl.unload", acl.mdl.unload(self.model_id))
        for dataset in (self.inputs, self.outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                check_ret("acl.destroy_data_buffer", acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i)))
            check_ret("acl.mdl.destroy_dataset", acl.mdl.destroy_dataset(dataset))
        for ptr in (self.in_dev, self.out_dev, *self.extra):
            check_ret("acl.rt.free", acl.rt.free(ptr))
        acl.mdl.destroy_desc(self.desc)


def main(model_path, image_path):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    print(f"soc {acl.get_soc_name()}")
    dvpp = Dvpp(stream)
    classifier = Classifier(model_path)
    with open(image_path, "rb") as f:
        jpeg_bytes = f.read()
    decoded_desc, decoded = dvpp.jpegd(jpeg_bytes)
    resized, size = dvpp.resize(decoded_desc, MODEL_W, MODEL_H)
    nv12 = np.frombuffer(acl.util.ptr_to_bytes(resized, size), np.uint8)
    probabilities = classifier.run(nv12_to_rgb_planar(nv12, MODEL_W, MODEL_H))
    top = int(np.argmax(probabilities))
    print(f"top class {top} probability {probabilities[top]:.4f}")
    print("probabilities " + " ".join(f"{p:.5f}" for p in probabilities))
    acl.media.dvpp_destroy_pic_desc(decoded_desc)
    for ptr in (decoded, resized):
        check_ret("acl.media.dvpp_free", acl.media.dvpp_free(ptr))
    classifier.destroy()
    dvpp.destroy()
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print("dvpp classification sample passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
