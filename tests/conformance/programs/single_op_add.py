"""A single-operator program in the manner of Ascend's samples: Add two float16 vectors, then ArgMaxV2 them.

Only ``import acl`` and numpy: it would run unchanged under pyACL on an Ascend device (with the operators
compiled into op_models/ by atc). Prints the results and exits non-zero if they are wrong.
"""

import os
import sys

import numpy as np

import acl

ACL_FLOAT16, ACL_INT32 = 1, 3
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
DEVICE_ID = 0
LENGTH = 16


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class OperatorRunner:
    """Owns the device, a stream, and the descs and buffers of two operators."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.context = None
        self.stream = None
        self.descs = []
        self.buffers = []
        self.device_ptrs = []

    def init_resource(self):
        check_ret("acl.init", acl.init())
        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check_ret("acl.rt.create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)
        check_ret("acl.op.set_model_dir", acl.op.set_model_dir(self.model_dir))

    def new_desc(self, dtype, dims):
        desc = acl.create_tensor_desc(dtype, dims, ACL_FORMAT_ND)
        if desc == 0:
            raise Exception("acl.create_tensor_desc failed")
        self.descs.append(desc)
        return desc

    def device_buffer(self, desc, host_bytes=None):
        size = acl.get_tensor_desc_size(desc)
        ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        self.device_ptrs.append(ptr)
        if host_bytes is not None:
            host_ptr = acl.util.bytes_to_ptr(host_bytes)
            ret = acl.rt.memcpy(ptr, size, host_ptr, len(host_bytes), ACL_MEMCPY_HOST_TO_DEVICE)
            check_ret("acl.rt.memcpy", ret)
        buffer = acl.create_data_buffer(ptr, size)
        self.buffers.append(buffer)
        return ptr, buffer

    def read_back(self, ptr, size, dtype):
        host = bytes(size)
        ret = acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST)
        check_ret("acl.rt.memcpy", ret)
        return np.frombuffer(host, dtype=dtype)

    def run_add(self, x1, x2):
        desc = self.new_desc(ACL_FLOAT16, [LENGTH])
        _, buffer_x1 = self.device_buffer(desc, x1.tobytes())
        _, buffer_x2 = self.device_buffer(desc, x2.tobytes())
        y_ptr, buffer_y = self.device_buffer(desc)
        attr = acl.op.create_attr()
        ret = acl.op.execute_v2("Add", [desc, desc], [buffer_x1, buffer_x2], [desc], [buffer_y], attr, self.stream)
        check_ret("acl.op.execute_v2", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        acl.op.destroy_attr(attr)
        print("[SingleOp] Add success")
        return y_ptr, buffer_y, desc

    def run_arg_max(self, buffer_in, desc_in):
        dimension_desc = self.new_desc(ACL_INT32, [1])
        dimension = np.array([0], dtype=np.int32).tobytes()
        ret = acl.set_tensor_const(dimension_desc, acl.util.bytes_to_ptr(dimension), len(dimension))
        check_ret("acl.set_tensor_const", ret)
        dimension_buffer = acl.create_data_buffer(0, 0)
        self.buffers.append(dimension_buffer)
        out_desc = self.new_desc(ACL_INT32, [1])
        out_ptr, out_buffer = self.device_buffer(out_desc)
        attr = acl.op.create_attr()
        handle, ret = acl.op.create_handle("ArgMaxV2", [desc_in, dimension_desc], [out_desc], attr)
        check_ret("acl.op.create_handle", ret)
        ret = acl.op.execute_with_handle(handle, [buffer_in, dimension_buffer], [out_buffer], self.stream)
        check_ret("acl.op.execute_with_handle", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(self.stream))
        acl.op.destroy_handle(handle)
        acl.op.destroy_attr(attr)
        print("[SingleOp] ArgMaxV2 success")
        return self.read_back(out_ptr, acl.get_tensor_desc_size(out_desc), np.int32)[0]

    def release_resource(self):
        for buffer in self.buffers:
            acl.destroy_data_buffer(buffer)
        for desc in self.descs:
            acl.destroy_tensor_desc(desc)
        for ptr in self.device_ptrs:
            acl.rt.free(ptr)
        acl.rt.destroy_stream(self.stream)
        acl.rt.destroy_context(self.context)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), ".")
    x1 = (-((np.arange(LENGTH) - 10) ** 2) / 4).astype(np.float16)  # peaks at index 10
    x2 = np.linspace(0, 1, LENGTH).astype(np.float16)
    runner = OperatorRunner(model_dir)
    runner.init_resource()
    try:
        y_ptr, y_buffer, y_desc = runner.run_add(x1, x2)
        y = runner.read_back(y_ptr, acl.get_tensor_desc_size(y_desc), np.float16)
        print("add result:", y.tolist())
        label = runner.run_arg_max(y_buffer, y_desc)
        print("argmax of the sum:", label)
    finally:
        runner.release_resource()
    expected = x1 + x2
    if not np.array_equal(y, expected) or label != int(np.argmax(expected)):
        print("MISMATCH, expected", expected.tolist())
        return 1
    print("single operator sample passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
