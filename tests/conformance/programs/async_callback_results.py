"""Asynchronous inference with stream callbacks in the manner of Ascend's resnet50_async sample: each picture is
uploaded from its own pinned staging buffer, run with ``execute_async``, and a BLOCK callback reads the result
while the next picture's tasks wait behind it; a NO_BLOCK callback queued after each upload frees its staging
buffer (the stream is done with it). Only ``import acl`` and numpy are used, so it runs unchanged on an NPU.

    python async_callback_results.py MODEL [PICTURES]
"""

import sys

import numpy as np

import acl

DEVICE_ID = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_CALLBACK_NO_BLOCK, ACL_CALLBACK_BLOCK = 0, 1


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class AsyncNet:
    def __init__(self, model_path):
        self.exit_flag = False
        self.tops = []
        check_ret("acl.init", acl.init())
        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check_ret("acl.rt.create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check_ret("acl.mdl.load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.in_ptr, ret = acl.rt.malloc(self.in_size, 0)
        check_ret("acl.rt.malloc", ret)
        self.inputs = acl.mdl.create_dataset()
        _, ret = acl.mdl.add_dataset_buffer(self.inputs, acl.create_data_buffer(self.in_ptr, self.in_size))
        check_ret("acl.mdl.add_dataset_buffer", ret)
        self.outputs = acl.mdl.create_dataset()
        self.out_buffers = []
        for i in range(acl.mdl.get_num_outputs(self.desc)):
            size = acl.mdl.get_output_size_by_index(self.desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            check_ret("acl.rt.malloc", ret)
            _, ret = acl.mdl.add_dataset_buffer(self.outputs, acl.create_data_buffer(ptr, size))
            check_ret("acl.mdl.add_dataset_buffer", ret)
            self.out_buffers.append((ptr, size))

    def _process_callback(self, args_list):
        context, timeout = args_list
        acl.rt.set_context(context)
        while not self.exit_flag:
            acl.rt.process_report(timeout)

    def free_staging(self, staging):
        check_ret("acl.rt.free_host", acl.rt.free_host(staging))

    def read_result(self, index):
        ptr, size = self.out_buffers[0]
        probabilities = np.frombuffer(acl.util.ptr_to_bytes(ptr, size), np.float32)
        self.tops.append((index, int(np.argmax(probabilities))))

    def run(self, pictures):
        tid, ret = acl.util.start_thread(self._process_callback, [self.context, 50])
        check_ret("acl.util.start_thread", ret)
        check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(tid, self.stream))
        rng = np.random.default_rng(0)
        for index in range(pictures):
            staging, ret = acl.rt.malloc_host(self.in_size)
            check_ret("acl.rt.malloc_host", ret)
            picture = acl.util.ptr_to_numpy(staging, (self.in_size // 4,), 11)  # NPY_FLOAT
            picture[:] = rng.random(self.in_size // 4, dtype=np.float32)
            ret = acl.rt.memcpy_async(
                self.in_ptr, self.in_size, staging, self.in_size, ACL_MEMCPY_HOST_TO_DEVICE, self.stream
            )
            check_ret("acl.rt.memcpy_async", ret)
            ret = acl.rt.launch_callback(self.free_staging, staging, ACL_CALLBACK_NO_BLOCK, self.stream)
            check_ret("acl.rt.launch_callback", ret)
            check_ret(
                "acl.mdl.execute_async", acl.mdl.execute_async(self.model_id, self.inputs, self.outputs, self.stream)
            )
            ret = acl.rt.launch_callback(self.read_result, index, ACL_CALLBACK_BLOCK, self.stream)
            check_ret("acl.rt.launch_callback", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, self.stream))
        self.exit_flag = True
        check_ret("acl.util.stop_thread", acl.util.stop_thread(tid))

    def release(self):
        for dataset in (self.inputs, self.outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                check_ret("acl.destroy_data_buffer", acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i)))
            check_ret("acl.mdl.destroy_dataset", acl.mdl.destroy_dataset(dataset))
        for ptr in [self.in_ptr, *(ptr for ptr, _ in self.out_buffers)]:
            check_ret("acl.rt.free", acl.rt.free(ptr))
        check_ret("acl.mdl.unload", acl.mdl.unload(self.model_id))
        check_ret("acl.mdl.destroy_desc", acl.mdl.destroy_desc(self.desc))
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(self.stream))
        check_ret("acl.rt.destroy_context", acl.rt.destroy_context(self.context))
        check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
        check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    pictures = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    net = AsyncNet(sys.argv[1])
    net.run(pictures)
    net.release()
    assert [index for index, _ in net.tops] == list(range(pictures)), net.tops
    for index, top in net.tops:
        print(f"picture {index}: top class {top}")
