"""A program shaped like an acllite application, for what it logs: a model class that probes the dynamic-batch
input ``ascend_mbatch_shape_data`` before each inference (a static model has none: CANN logs an error and the
program goes on), and a DVPP image whose ``__del__`` frees its memory after the resource class reset the device
(CANN logs that free as an error too). On an NPU both records go to the plog file, and the terminal shows only
what the program prints.

Usage: acllite_logs.py MODEL.onnx [--fail]   (``--fail``: exit with status 1 at the end)
"""

import sys

import numpy as np

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
INFERENCES = 3


class AclLiteResource:
    def __init__(self) -> None:
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        self.context, ret = acl.rt.create_context(0)
        assert ret == 0
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0

    def release(self) -> None:
        acl.rt.destroy_stream(self.stream)
        acl.rt.destroy_context(self.context)
        acl.rt.reset_device(0)


class AclLiteImage:
    """An image in DVPP memory, freed by ``__del__`` (after the device is reset, as acllite's order has it)."""

    def __init__(self, size: int) -> None:
        self.ptr, ret = acl.media.dvpp_malloc(size)
        assert ret == 0

    def __del__(self) -> None:
        acl.media.dvpp_free(self.ptr)  # fails: the reset freed it; acllite does not look at the code


class AclLiteModel:
    def __init__(self, path: str) -> None:
        self.model_id, ret = acl.mdl.load_from_file(path)
        assert ret == 0
        self.desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, self.model_id) == 0
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.in_ptr, _ = acl.rt.malloc(self.in_size, ACL_MEM_MALLOC_HUGE_FIRST)
        self.outs = []  # (ptr, size) of each output
        for i in range(acl.mdl.get_num_outputs(self.desc)):
            size = acl.mdl.get_output_size_by_index(self.desc, i)
            self.outs.append((acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)[0], size))

    def _is_dynamic_batch(self) -> bool:
        _, ret = acl.mdl.get_input_index_by_name(self.desc, "ascend_mbatch_shape_data")
        return ret == 0

    def execute(self, image: np.ndarray) -> np.ndarray:
        assert not self._is_dynamic_batch()
        data = np.ascontiguousarray(image, dtype=np.float32).tobytes()
        host = acl.util.bytes_to_ptr(data)
        assert acl.rt.memcpy(self.in_ptr, self.in_size, host, len(data), ACL_MEMCPY_HOST_TO_DEVICE) == 0
        inputs, outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        buffers = [acl.create_data_buffer(self.in_ptr, self.in_size)]
        acl.mdl.add_dataset_buffer(inputs, buffers[0])
        for ptr, size in self.outs:
            buffers.append(acl.create_data_buffer(ptr, size))
            acl.mdl.add_dataset_buffer(outputs, buffers[-1])
        assert acl.mdl.execute(self.model_id, inputs, outputs) == 0
        ptr, size = self.outs[0]
        result = bytes(size)
        out_host = acl.util.bytes_to_ptr(result)
        assert acl.rt.memcpy(out_host, size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST) == 0
        for buf in buffers:
            acl.destroy_data_buffer(buf)
        for dataset in (inputs, outputs):
            acl.mdl.destroy_dataset(dataset)
        return np.frombuffer(result, dtype=np.float32)

    def release(self) -> None:
        for ptr in [self.in_ptr, *(ptr for ptr, _ in self.outs)]:
            acl.rt.free(ptr)
        acl.mdl.destroy_desc(self.desc)
        acl.mdl.unload(self.model_id)


def main(model_path: str) -> None:
    resource = AclLiteResource()
    model = AclLiteModel(model_path)
    image = AclLiteImage(64 * 64 * 3 // 2)
    rng = np.random.default_rng(0)
    for i in range(INFERENCES):
        scores = model.execute(rng.standard_normal((1, 3, 64, 64), dtype=np.float32))
        print(f"inference {i}: class {int(np.argmax(scores))}")
    model.release()
    resource.release()
    del image  # its __del__ frees DVPP memory the reset already gave back
    acl.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
    print("done")
    if "--fail" in sys.argv:
        sys.exit(1)
