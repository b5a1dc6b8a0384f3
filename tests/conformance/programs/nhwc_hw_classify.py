"""A dynamic-image-size classifier in the manner of Ascend's samples, its model converted from TensorFlow with
``--input_format=NHWC --input_shape="image:1,-1,-1,3" --dynamic_image_size="..."``.

    python nhwc_hw_classify.py MODEL.om OUT_DIR

Only ``import acl`` and numpy. For each gear ``get_dynamic_hw`` lists it makes an NHWC float image of that size
(``(h * 31 + w * 17 + c * 7) % 255 / 255`` at each pixel), copies it into the input buffer (sized for the largest
gear), chooses the gear with ``set_dynamic_hw_size``, executes and saves the probabilities as
OUT_DIR/gear<h>x<w>.npy.
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
ACL_FORMAT_NHWC = 1
GEAR_TENSOR = "ascend_mbatch_shape_data"


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def image(height, width):
    h, w, c = np.meshgrid(np.arange(height), np.arange(width), np.arange(3), indexing="ij")
    return (((h * 31 + w * 17 + c * 7) % 255) / 255.0).astype(np.float32)[None]


def main(model_path, out_dir):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    dims, ret = acl.mdl.get_input_dims(desc, 0)
    check_ret("acl.mdl.get_input_dims", ret)
    fmt = acl.mdl.get_input_format(desc, 0)
    print(f"input dims {dims['dims']} format {fmt}")
    if fmt != ACL_FORMAT_NHWC:
        raise Exception(f"input format {fmt}, not NHWC")
    hw, ret = acl.mdl.get_dynamic_hw(desc, -1)
    check_ret("acl.mdl.get_dynamic_hw", ret)
    gear_index, ret = acl.mdl.get_input_index_by_name(desc, GEAR_TENSOR)
    check_ret("acl.mdl.get_input_index_by_name", ret)

    inputs, outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    buffers = []
    for dataset, count, size_of in (
        (inputs, acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index),
        (outputs, acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index),
    ):
        for i in range(count):
            size = size_of(desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            check_ret("acl.rt.malloc", ret)
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
            check_ret("acl.mdl.add_dataset_buffer", ret)
            buffers.append((ptr, size))
    (image_ptr, image_size), (prob_ptr, prob_size) = buffers[0], buffers[-1]

    for height, width in hw["hw"]:
        data = image(height, width).tobytes()
        ret = acl.rt.memcpy(image_ptr, image_size, acl.util.bytes_to_ptr(data), len(data), ACL_MEMCPY_HOST_TO_DEVICE)
        check_ret("acl.rt.memcpy", ret)
        check_ret(
            "acl.mdl.set_dynamic_hw_size", acl.mdl.set_dynamic_hw_size(model_id, inputs, gear_index, height, width)
        )
        check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))
        out_dims, ret = acl.mdl.get_cur_output_dims(desc, 0)
        check_ret("acl.mdl.get_cur_output_dims", ret)
        prob = np.frombuffer(acl.util.ptr_to_bytes(prob_ptr, prob_size), np.float32).reshape(out_dims["dims"])
        np.save(os.path.join(out_dir, f"gear{height}x{width}.npy"), prob)
        print(f"gear {height}x{width}: class {int(prob.argmax())}")

    for dataset in (inputs, outputs):
        for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
            acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
        acl.mdl.destroy_dataset(dataset)
    for ptr, _ in buffers:
        acl.rt.free(ptr)
    check_ret("acl.mdl.unload", acl.mdl.unload(model_id))
    acl.mdl.destroy_desc(desc)
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print("nhwc dynamic image size sample passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
