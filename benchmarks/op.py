"""Single operators: acl.op.execute_v2 against a bare onnxruntime run of the same one-node model, side by side.

(a) execute_v2 of a float32 Add on a stream, then synchronize_stream, per call after the first (the compiled-op
    cache makes repeated calls cheap), vs onnxruntime's own run of the same ONNX model with the same inputs.
    Measured for a small tensor (fixed costs dominate) and a medium one.                target ratio <= 1.5
(a0) the floor of (a): the same model run through an onnxruntime session made with openacl's own session
    options (no thread spinning after a run, as for models), which is the least execute_v2 could cost; a bare
    default session spins its threads between runs, which makes back-to-back runs of a large op cheaper.
(b) the first call: lowering, ONNX shape inference and the onnxruntime session (the compile cost), vs creating
    an onnxruntime session of the same model. No target: it is paid once per signature.

Usage: python benchmarks/op.py [--quick] [--json]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import onnxruntime as ort
from _common import argument_parser, print_rows

import openacl
from openacl.onnxrt import session_options
from openacl.op import compiled

openacl.install()
import acl  # noqa: E402

ACL_FLOAT, ND, H2D = 0, 2, 1


class DeviceAdd:
    """x1 + x2 of one shape, with device buffers, through acl.op."""

    def __init__(self, shape: tuple[int, ...], stream: int) -> None:
        rng = np.random.default_rng(0)
        self.x1, self.x2 = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        self.stream = stream
        self.desc = acl.create_tensor_desc(ACL_FLOAT, list(shape), ND)
        self.ptrs, self.buffers = [], []
        for array in (self.x1, self.x2, np.zeros(shape, np.float32)):
            ptr, _ = acl.rt.malloc(array.nbytes, 0)
            host = array.tobytes()
            acl.rt.memcpy(ptr, array.nbytes, acl.util.bytes_to_ptr(host), array.nbytes, H2D)
            self.ptrs.append(ptr)
            self.buffers.append(acl.create_data_buffer(ptr, array.nbytes))
        self.attr = acl.op.create_attr()

    def call(self) -> None:
        descs, bufs = [self.desc, self.desc], self.buffers
        ret = acl.op.execute_v2("Add", descs, bufs[:2], [self.desc], bufs[2:], self.attr, self.stream)
        assert ret == 0, ret
        assert acl.rt.synchronize_stream(self.stream) == 0

    def release(self) -> None:
        for buffer in self.buffers:
            acl.destroy_data_buffer(buffer)
        for ptr in self.ptrs:
            acl.rt.free(ptr)
        acl.destroy_tensor_desc(self.desc)
        acl.op.destroy_attr(self.attr)


def bench_calls(shape: tuple[int, ...], stream: int, n: int) -> tuple[float, float, float, float, float]:
    """(ours per call, baseline per call, floor per call, first call, baseline session creation) in seconds."""
    op = DeviceAdd(shape, stream)
    compiled.cache.clear()
    start = time.perf_counter()
    op.call()  # compiles
    first = time.perf_counter() - start
    model = next(iter(compiled.cache._entries.values())).model.SerializeToString()
    start = time.perf_counter()
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    create = time.perf_counter() - start
    floor_session = ort.InferenceSession(model, session_options(), providers=["CPUExecutionProvider"])
    feeds = {"x0": op.x1, "x1": op.x2}
    np.testing.assert_allclose(session.run(None, feeds)[0], op.x1 + op.x2)
    ours, base, floor = [], [], []
    for _ in range(n):  # alternate call by call: drift on a noisy machine hits all alike
        t0 = time.perf_counter()
        op.call()
        t1 = time.perf_counter()
        session.run(["y0"], feeds)
        t2 = time.perf_counter()
        floor_session.run(["y0"], feeds)
        floor.append(time.perf_counter() - t2)
        base.append(t2 - t1)
        ours.append(t1 - t0)
    op.release()
    return statistics.median(ours), statistics.median(base), statistics.median(floor), first, create


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    n = 200 if args.quick else 3000
    import onnx  # noqa: F401  (imported once here, so no first call below pays for the import)

    acl.init()
    acl.rt.set_device(0)
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    rows = []
    try:
        for label, shape in (("[16]", (16,)), ("[256, 1024]", (256, 1024))):
            ours, base, floor, first, create = bench_calls(shape, stream, n if shape == (16,) else max(n // 10, 50))
            rows.append(
                (
                    f"(a) Add {label} execute_v2 + sync",
                    f"{ours * 1e6:.1f} us",
                    f"{base * 1e6:.1f} us",
                    ours / base,
                    "<= 1.5",
                )
            )
            rows.append(
                (
                    f"(a0) Add {label} vs its floor",
                    f"{ours * 1e6:.1f} us",
                    f"{floor * 1e6:.1f} us",
                    ours / floor,
                    "",
                )
            )
            rows.append(
                (
                    f"(b) Add {label} first call (compile)",
                    f"{first * 1e3:.2f} ms",
                    f"{create * 1e3:.2f} ms",
                    first / create,
                    "-",
                )
            )
    finally:
        acl.rt.destroy_stream(stream)
        acl.rt.destroy_context(context)
        acl.rt.reset_device(0)
        acl.finalize()
    print_rows(rows, args.json, ["baseline (b): creating an onnxruntime session of the same model"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
