"""A dynamic-batch / dynamic-HW inference program in the shape of Ascend's dynamic samples, using only ``acl``.

    openacl run tests/conformance/dynamic_gears_sample.py MODEL OUT_DIR

It loads MODEL, finds its gears (``get_dynamic_batch``, else ``get_dynamic_hw``), allocates every input,
the ``ascend_mbatch_shape_data`` one included, at ``get_input_size_by_index`` (the largest gear) and every
output at ``get_output_size_by_index``, then for each gear: sets it, copies a deterministic input into the
leading bytes of the data buffer, executes, reads ``get_cur_output_dims`` and saves each output under
OUT_DIR as ``gear<i>_out<j>.npy``. Each input is ``arange(n) % 7 * 0.25 - 0.5`` in the gear's shape.
"""

import os
import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_FLOAT = 0
GEAR_TENSOR = "ascend_mbatch_shape_data"


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} failed, ret {ret}")


def gear_input(shape):
    count = int(np.prod(shape))
    return (np.arange(count) % 7 * 0.25 - 0.5).astype(np.float32).reshape(shape)


class DynamicNet:
    def __init__(self, model_path):
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check(ret, "acl.rt.create_context")
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check(ret, "acl.mdl.load_from_file")
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.gear_index, ret = acl.mdl.get_input_index_by_name(self.desc, GEAR_TENSOR)
        check(ret, "acl.mdl.get_input_index_by_name")
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
            data_buffer = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, data_buffer)
            check(ret, "acl.mdl.add_dataset_buffer")
            buffers.append((ptr, size, data_buffer))
        return dataset, buffers

    def gears(self):
        batch, ret = acl.mdl.get_dynamic_batch(self.desc)
        check(ret, "acl.mdl.get_dynamic_batch")
        if batch["batchCount"] > 0:
            return "batch", [[b] for b in batch["batch"]]
        hw, ret = acl.mdl.get_dynamic_hw(self.desc, self.gear_index)
        check(ret, "acl.mdl.get_dynamic_hw")
        return "hw", hw["hw"]

    def run(self, kind, gear):
        if kind == "batch":
            ret = acl.mdl.set_dynamic_batch_size(self.model_id, self.input_dataset, self.gear_index, gear[0])
        else:
            ret = acl.mdl.set_dynamic_hw_size(self.model_id, self.input_dataset, self.gear_index, gear[0], gear[1])
        check(ret, "acl.mdl.set_dynamic_*")
        dims, ret = acl.mdl.get_input_dims(self.desc, 0)
        check(ret, "acl.mdl.get_input_dims")
        shape = list(dims["dims"])
        if kind == "batch":
            shape[0] = gear[0]
        else:
            shape[2], shape[3] = gear
        data = gear_input(shape).tobytes()
        ptr, size, _ = self.input_buffers[0]
        check(acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
        check(acl.mdl.execute(self.model_id, self.input_dataset, self.output_dataset), "acl.mdl.execute")
        results = []
        for index, (out_ptr, _out_size, _) in enumerate(self.output_buffers):
            cur, ret = acl.mdl.get_cur_output_dims(self.desc, index)
            check(ret, "acl.mdl.get_cur_output_dims")
            nbytes = int(np.prod(cur["dims"])) * 4
            host, ret = acl.rt.malloc_host(nbytes)
            check(ret, "acl.rt.malloc_host")
            check(acl.rt.memcpy(host, nbytes, out_ptr, nbytes, ACL_MEMCPY_DEVICE_TO_HOST), "memcpy")
            array = np.frombuffer(acl.util.ptr_to_bytes(host, nbytes), np.float32).reshape(cur["dims"]).copy()
            check(acl.rt.free_host(host), "acl.rt.free_host")
            results.append(array)
        return results

    def release(self):
        for dataset, buffers in ((self.input_dataset, self.input_buffers), (self.output_dataset, self.output_buffers)):
            for ptr, _size, data_buffer in buffers:
                check(acl.destroy_data_buffer(data_buffer), "acl.destroy_data_buffer")
                check(acl.rt.free(ptr), "acl.rt.free")
            check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")
        check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")


def main(model_path, out_dir):
    net = DynamicNet(model_path)
    kind, gears = net.gears()
    print(f"{kind} gears: {gears}")
    for gear_number, gear in enumerate(gears):
        outputs = net.run(kind, gear)
        for index, array in enumerate(outputs):
            np.save(os.path.join(out_dir, f"gear{gear_number}_out{index}.npy"), array)
        print(f"gear {gear}: output dims {[list(a.shape) for a in outputs]}")
    net.release()
    print("execute sample success")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
