"""A program in the style of Ascend's samples: classify a few input files with a model while the ``"dump"``
section of the acl.json handed to ``acl.init`` dumps every operator, as a precision engineer does on an NPU.

    python dump_classify.py MODEL ACL_JSON INPUT.bin [INPUT.bin ...]

Each input file holds the model's float32 input tensor (``np.tofile``). Prints one ``top1`` line per input.
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_SUCCESS = 0


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed, ret={ret}")


class Classifier:
    def __init__(self, model_path, config_path):
        check(acl.init(config_path), "acl.init")
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check(ret, "acl.rt.create_context")
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check(ret, "acl.mdl.load_from_file")
        self.model_desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.model_desc, self.model_id), "acl.mdl.get_desc")
        self.input_size = acl.mdl.get_input_size_by_index(self.model_desc, 0)
        self.output_size = acl.mdl.get_output_size_by_index(self.model_desc, 0)
        self.output_dataset, self.output_buffer = self._dataset(self.output_size)

    def _dataset(self, size):
        buffer, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        dataset = acl.mdl.create_dataset()
        data = acl.create_data_buffer(buffer, size)
        _, ret = acl.mdl.add_dataset_buffer(dataset, data)
        check(ret, "acl.mdl.add_dataset_buffer")
        return dataset, buffer

    def _release_dataset(self, dataset):
        for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
            data = acl.mdl.get_dataset_buffer(dataset, i)
            check(acl.rt.free(acl.get_data_buffer_addr(data)), "acl.rt.free")
            check(acl.destroy_data_buffer(data), "acl.destroy_data_buffer")
        check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")

    def classify(self, path):
        image = np.fromfile(path, dtype=np.float32)
        if image.nbytes != self.input_size:
            raise RuntimeError(f"{path}: {image.nbytes} bytes, the model takes {self.input_size}")
        input_dataset, input_buffer = self._dataset(self.input_size)
        host = acl.util.numpy_to_ptr(image)
        check(acl.rt.memcpy(input_buffer, self.input_size, host, image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
        check(acl.mdl.execute(self.model_id, input_dataset, self.output_dataset), "acl.mdl.execute")
        host_output, ret = acl.rt.malloc_host(self.output_size)
        check(ret, "acl.rt.malloc_host")
        check(
            acl.rt.memcpy(host_output, self.output_size, self.output_buffer, self.output_size,
                          ACL_MEMCPY_DEVICE_TO_HOST),
            "memcpy",
        )  # fmt: skip
        scores = np.frombuffer(acl.util.ptr_to_bytes(host_output, self.output_size), dtype=np.float32)
        check(acl.rt.free_host(host_output), "acl.rt.free_host")
        self._release_dataset(input_dataset)
        return int(np.argmax(scores))

    def release(self):
        self._release_dataset(self.output_dataset)
        check(acl.mdl.destroy_desc(self.model_desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")  # the dump's files are all on disk once this returns


def main():
    model_path, config_path, *inputs = sys.argv[1:]
    classifier = Classifier(model_path, config_path)
    try:
        for path in inputs:
            print(f"{path}: top1 {classifier.classify(path)}")
    finally:
        classifier.release()


if __name__ == "__main__":
    main()
