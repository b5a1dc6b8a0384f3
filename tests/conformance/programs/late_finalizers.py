"""A program shaped like an acllite application: resources and a model held by objects whose ``__del__``
methods free them, and no explicit cleanup, so the frees run while the interpreter shuts down.

Usage: late_finalizers.py MODEL.onnx [--finalize-in-del]
"""

import sys

import numpy as np

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


class Resource:
    """Device, context and stream, given back in ``__del__`` (as acllite's resource class does)."""

    def __init__(self, finalize_in_del: bool) -> None:
        self.finalize_in_del = finalize_in_del
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        self.context, ret = acl.rt.create_context(0)
        assert ret == 0
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0

    def __del__(self) -> None:
        for ret in (
            acl.rt.destroy_stream(self.stream),
            acl.rt.destroy_context(self.context),
            acl.rt.reset_device(0),
        ):
            if ret != 0:
                print("resource cleanup failed:", ret)
        if self.finalize_in_del and acl.finalize() != 0:
            print("finalize failed")


class Model:
    """A model with its own datasets and device buffers, all freed in ``__del__``."""

    def __init__(self, path: str, stream: int) -> None:
        self.stream = stream
        self.model_id, ret = acl.mdl.load_from_file(path)
        assert ret == 0
        self.desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, self.model_id) == 0
        self.inputs = self._dataset(acl.mdl.get_num_inputs(self.desc), acl.mdl.get_input_size_by_index)
        self.outputs = self._dataset(acl.mdl.get_num_outputs(self.desc), acl.mdl.get_output_size_by_index)

    def _dataset(self, count: int, size_of) -> tuple[int, list[tuple[int, int, int]]]:
        dataset = acl.mdl.create_dataset()
        buffers = []
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == 0
            buf = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
            assert ret == 0
            buffers.append((ptr, size, buf))
        return dataset, buffers

    def run(self, image: np.ndarray) -> None:
        ptr, size, _ = self.inputs[1][0]
        data = np.ascontiguousarray(image).tobytes()
        host = acl.util.bytes_to_ptr(data)
        assert acl.rt.memcpy(ptr, size, host, image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert acl.mdl.execute_async(self.model_id, self.inputs[0], self.outputs[0], self.stream) == 0
        # Left queued on purpose: the program exits without synchronizing, as a crashed or interrupted one does.

    def __del__(self) -> None:
        codes = []
        for dataset, buffers in (self.inputs, self.outputs):
            for ptr, _, buf in buffers:
                codes.append(acl.destroy_data_buffer(buf))
                codes.append(acl.rt.free(ptr))
            codes.append(acl.mdl.destroy_dataset(dataset))
        codes.append(acl.mdl.unload(self.model_id))
        codes.append(acl.mdl.destroy_desc(self.desc))
        if any(codes):
            print("model cleanup failed:", codes)


resource = Resource("--finalize-in-del" in sys.argv)
model = Model(sys.argv[1], resource.stream)
model.run(np.zeros((1, 3, 64, 64), np.float32))
print("ran; exiting with everything open")
