"""A CBLAS program in the manner of Ascend's GEMM sample: C = alpha * A @ B + beta * C with ``acl.blas.gemm_ex``,
then an int8 GEMM through its op handle, checked against numpy.

Only ``import acl`` and numpy: it would run unchanged under pyACL on an Ascend device (with the GEMM operator
compiled into op_models/ by atc). Prints the results and exits non-zero if they are wrong.
"""

import os
import sys

import numpy as np

import acl

ACL_FLOAT16, ACL_INT8, ACL_INT32 = 1, 2, 3
ACL_TRANS_N, ACL_TRANS_T = 0, 1
ACL_COMPUTE_HIGH_PRECISION = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
DEVICE_ID = 0
M, N, K = 16, 8, 32


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


class Device:
    def __init__(self):
        self.ptrs = []

    def upload(self, array):
        data = np.ascontiguousarray(array).tobytes()
        ptr, ret = acl.rt.malloc(len(data), ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        self.ptrs.append(ptr)
        ret = acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), ACL_MEMCPY_HOST_TO_DEVICE)
        check_ret("acl.rt.memcpy", ret)
        return ptr

    @staticmethod
    def download(ptr, dtype, shape):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        host = bytes(size)
        ret = acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST)
        check_ret("acl.rt.memcpy", ret)
        return np.frombuffer(host, dtype=dtype).reshape(shape)

    def free(self):
        for ptr in self.ptrs:
            acl.rt.free(ptr)


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float16)
    a8 = rng.integers(-100, 100, (K, M)).astype(np.int8)  # stored transposed
    b8 = rng.integers(-100, 100, (K, N)).astype(np.int8)
    c32 = np.zeros((M, N), np.int32)

    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    check_ret("acl.op.set_model_dir", acl.op.set_model_dir(model_dir))
    device = Device()
    try:
        dev_a, dev_b, dev_c = device.upload(a), device.upload(b), device.upload(c)
        alpha = device.upload(np.array([1.0], np.float16))
        beta = device.upload(np.array([0.5], np.float16))
        ret = acl.blas.gemm_ex(
            ACL_TRANS_N, ACL_TRANS_N, ACL_TRANS_N, M, N, K,
            alpha, dev_a, -1, ACL_FLOAT16, dev_b, -1, ACL_FLOAT16, beta, dev_c, -1, ACL_FLOAT16,
            ACL_COMPUTE_HIGH_PRECISION, stream,
        )  # fmt: skip
        check_ret("acl.blas.gemm_ex", ret)
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        result = Device.download(dev_c, np.float16, (M, N))
        print("[CBLAS] gemm_ex success, C[0, :4] =", result[0, :4].tolist())

        handle, ret = acl.blas.create_handle_for_s8gemm(
            ACL_TRANS_T, ACL_TRANS_N, ACL_TRANS_N, M, N, K, ACL_COMPUTE_HIGH_PRECISION
        )
        check_ret("acl.blas.create_handle_for_s8gemm", ret)
        pointers = [device.upload(x) for x in (a8, b8, c32, np.array([2], np.int32), np.array([0], np.int32))]
        sizes = [a8.nbytes, b8.nbytes, c32.nbytes, 4, 4]
        buffers = [acl.create_data_buffer(p, s) for p, s in zip(pointers, sizes, strict=True)]
        check_ret("acl.op.execute_with_handle", acl.op.execute_with_handle(handle, buffers, [buffers[2]], stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        result8 = Device.download(pointers[2], np.int32, (M, N))
        print("[CBLAS] s8gemm by handle success")
        for buffer in buffers:
            acl.destroy_data_buffer(buffer)
        acl.op.destroy_handle(handle)
    finally:
        device.free()
        acl.rt.destroy_stream(stream)
        acl.rt.destroy_context(context)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()

    expected = a.astype(np.float32) @ b.astype(np.float32) + 0.5 * c.astype(np.float32)
    expected8 = 2 * (a8.T.astype(np.int32) @ b8.astype(np.int32))
    if not np.allclose(result.astype(np.float32), expected, atol=0.05) or not np.array_equal(result8, expected8):
        print("MISMATCH")
        return 1
    print("cblas sample passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
