"""A dynamic-AIPP inference program in the shape of Ascend's dynamic-AIPP samples, using only ``acl``.

    openacl run tests/conformance/dynamic_aipp_sample.py MODEL IMAGE WIDTH HEIGHT OUT_DIR

It loads MODEL through a load config, finds the ``ascend_dynamic_aipp_data`` input and the input AIPP feeds
(``get_aipp_type``), allocates every input at ``get_input_size_by_index``, copies the YUV420SP image IMAGE
(WIDTH x HEIGHT) into the image input, sets the dynamic AIPP (YUV420SP to RGB, a centre crop to the model's
size, mean subtraction and scaling), executes with ``execute_v2`` on a stream, reads the output's dims from the
output dataset's tensor desc and saves the output as OUT_DIR/out0.npy.
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MDL_PRIORITY_INT32 = 0
ACL_MDL_LOAD_TYPE_SIZET = 1
ACL_MDL_PATH_PTR = 2
ACL_MDL_LOAD_FROM_FILE = 1
ACL_MDL_STREAM_SYNC_TIMEOUT = 0
ACL_YUV420SP_U8 = 1
ACL_DATA_WITH_DYNAMIC_AIPP = 2
AIPP_TENSOR = "ascend_dynamic_aipp_data"


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} failed, ret {ret}")


class AippNet:
    def __init__(self, model_path):
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check(ret, "acl.rt.create_context")
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        config = acl.mdl.create_config_handle()
        check(acl.mdl.set_config_opt(config, ACL_MDL_LOAD_TYPE_SIZET, ACL_MDL_LOAD_FROM_FILE), "set_config_opt")
        check(acl.mdl.set_config_opt(config, ACL_MDL_PATH_PTR, model_path), "set_config_opt path")
        check(acl.mdl.set_config_opt(config, ACL_MDL_PRIORITY_INT32, 0), "set_config_opt priority")
        self.model_id, ret = acl.mdl.load_with_config(config)
        check(ret, "acl.mdl.load_with_config")
        check(acl.mdl.destroy_config_handle(config), "acl.mdl.destroy_config_handle")
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.aipp_index, ret = acl.mdl.get_input_index_by_name(self.desc, AIPP_TENSOR)
        check(ret, "acl.mdl.get_input_index_by_name")
        self.image_index = None
        for index in range(acl.mdl.get_num_inputs(self.desc)):
            kind, attached, ret = acl.mdl.get_aipp_type(self.model_id, index)
            check(ret, "acl.mdl.get_aipp_type")
            if kind == ACL_DATA_WITH_DYNAMIC_AIPP and attached == self.aipp_index:
                self.image_index = index
        if self.image_index is None:
            raise RuntimeError("no input with dynamic AIPP")
        dims, ret = acl.mdl.get_input_dims(self.desc, self.image_index)
        check(ret, "acl.mdl.get_input_dims")
        self.batch, _, self.height, self.width = dims["dims"]
        self.input_dataset, self.input_buffers = self._dataset(
            acl.mdl.get_num_inputs(self.desc), acl.mdl.get_input_size_by_index
        )
        self.output_dataset, self.output_buffers = self._dataset(
            acl.mdl.get_num_outputs(self.desc), acl.mdl.get_output_size_by_index
        )

    def _dataset(self, count, size_of):
        dataset = acl.mdl.create_dataset()
        buffers = []
        for index in range(count):
            size = size_of(self.desc, index)
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "acl.rt.malloc")
            data = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, data)
            check(ret, "acl.mdl.add_dataset_buffer")
            buffers.append((ptr, size, data))
        return dataset, buffers

    def set_aipp(self, src_width, src_height):
        aipp = acl.mdl.create_aipp(self.batch)
        check(acl.mdl.set_aipp_input_format(aipp, ACL_YUV420SP_U8), "set_aipp_input_format")
        check(acl.mdl.set_aipp_src_image_size(aipp, src_width, src_height), "set_aipp_src_image_size")
        check(
            acl.mdl.set_aipp_csc_params(aipp, 1, 256, 0, 359, 256, -88, -183, 256, 454, 0, 0, 0, 0, 0, 128, 128),
            "set_aipp_csc_params",
        )
        check(acl.mdl.set_aipp_rbuv_swap_switch(aipp, 0), "set_aipp_rbuv_swap_switch")
        start_w = (src_width - self.width) // 2 // 2 * 2
        start_h = (src_height - self.height) // 2 // 2 * 2
        for batch in range(self.batch):
            check(
                acl.mdl.set_aipp_crop_params(aipp, 1, start_w, start_h, self.width, self.height, batch),
                "set_aipp_crop_params",
            )
            check(acl.mdl.set_aipp_dtc_pixel_mean(aipp, 104, 117, 123, 0, batch), "set_aipp_dtc_pixel_mean")
            check(acl.mdl.set_aipp_dtc_pixel_min(aipp, 0, 0, 0, 0, batch), "set_aipp_dtc_pixel_min")
            check(acl.mdl.set_aipp_pixel_var_reci(aipp, 0.5, 0.5, 0.5, 1.0, batch), "set_aipp_pixel_var_reci")
        check(acl.mdl.set_input_aipp(self.model_id, self.input_dataset, self.aipp_index, aipp), "set_input_aipp")
        check(acl.mdl.destroy_aipp(aipp), "acl.mdl.destroy_aipp")

    def run(self, image_bytes):
        ptr, size, _ = self.input_buffers[self.image_index]
        host = acl.util.bytes_to_ptr(image_bytes)
        check(acl.rt.memcpy(ptr, size, host, len(image_bytes), ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy")
        config = acl.mdl.create_exec_config_handle()
        check(acl.mdl.set_exec_config_opt(config, ACL_MDL_STREAM_SYNC_TIMEOUT, 60000), "set_exec_config_opt")
        check(
            acl.mdl.execute_v2(self.model_id, self.input_dataset, self.output_dataset, self.stream, config),
            "acl.mdl.execute_v2",
        )
        check(acl.mdl.destroy_exec_config_handle(config), "acl.mdl.destroy_exec_config_handle")
        tensor = acl.mdl.get_dataset_tensor_desc(self.output_dataset, 0)
        dims = [acl.get_tensor_desc_dim_v2(tensor, i)[0] for i in range(acl.get_tensor_desc_num_dims(tensor))]
        out_ptr, out_size, _ = self.output_buffers[0]
        data = acl.util.ptr_to_bytes(out_ptr, out_size)
        return np.frombuffer(data, np.float32)[: int(np.prod(dims))].reshape(dims).copy()

    def release(self):
        for dataset, buffers in ((self.input_dataset, self.input_buffers), (self.output_dataset, self.output_buffers)):
            for ptr, _, data in buffers:
                check(acl.destroy_data_buffer(data), "acl.destroy_data_buffer")
                check(acl.rt.free(ptr), "acl.rt.free")
            check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")
        check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        check(acl.rt.destroy_stream(self.stream), "acl.rt.destroy_stream")
        check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")


def main():
    model_path, image_path, width, height, out_dir = sys.argv[1:6]
    with open(image_path, "rb") as f:
        image = f.read()
    net = AippNet(model_path)
    net.set_aipp(int(width), int(height))
    output = net.run(image)
    np.save(os.path.join(out_dir, "out0.npy"), output)
    net.release()
    print("execute sample success")


if __name__ == "__main__":
    main()
