"""Single operators: acl.op.execute_v2 against an onnxruntime IO-binding run of the same one-node model, side by side.

(a) execute_v2 of a float32 Add on a stream, then synchronize_stream, per call after the first (the call plan
    makes repeated identical calls cheap), vs the baseline: the same ONNX model in an onnxruntime session with
    openacl's own session options (no thread spinning after a run, as for models), run through an IO binding of
    its inputs and output made once (``run_with_iobinding``): what a program that drives onnxruntime itself
    writes. Add [16] (fixed costs dominate): target ratio <= 2.5; Add [256, 1024]: target ratio <= 1.5.
(a floor) the same against its floor: onnxruntime's C entry point on that binding (``_sess.run_with_iobinding``),
    the least Python around the same run, and so the least execute_v2 could ever cost; it is also what openacl
    calls (the public method checks WebGPU graph capture on every run, about 0.2 us). No target.
    The notes give, for reference, two more ways to run the model: ``session.run`` with numpy feeds (what earlier
    versions of this benchmark compared with), and an IO binding made for each run.
(b) the first call: lowering, ONNX shape inference and the onnxruntime session (the compile cost), vs creating
    an onnxruntime session of the same model. No target: it is paid once per signature.

Each (a) figure is the median of many short interleaved rounds (a few calls of each, round after round): drift on
a noisy machine hits all alike, and a round the scheduler cut into is outvoted (a long round would be cut more
often than a short one, which would favour the faster side). A figure whose rounds spread wider than 20 % (p10-p90,
of the median) is flagged.

Usage: python benchmarks/op.py [--quick] [--json]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import onnxruntime as ort
from _common import argument_parser, per_call, print_rows

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


SPREAD_NOTE = 0.20
CALLS_PER_ROUND = 5


def spread(times: list[float]) -> float:
    """(p90 - p10) / median of the rounds."""
    if len(times) < 3:
        return 0.0
    deciles = statistics.quantiles(times, n=10)
    return (deciles[-1] - deciles[0]) / statistics.median(times)


class Bare:
    """The same model run by onnxruntime alone, in a session with openacl's options, bound to the very memory
    execute_v2 reads and writes (the same bytes: a large operator's rounds then find the same data in the caches,
    whichever side ran last)."""

    def __init__(self, model: bytes, op: DeviceAdd) -> None:
        self.session = ort.InferenceSession(model, session_options(), providers=["CPUExecutionProvider"])
        self.shape = list(op.x1.shape)
        self.ptrs = op.ptrs
        self.feeds = {"x0": op.x1, "x1": op.x2}
        self.binding = self.bind()
        self._run, self._inner = self.session._sess.run_with_iobinding, self.binding._iobinding

    def bind(self):
        binding = self.session.io_binding()
        for name, ptr in zip(("x0", "x1"), self.ptrs[:2], strict=True):
            binding.bind_input(name, "cpu", 0, np.float32, self.shape, ptr)
        binding.bind_output("y0", "cpu", 0, np.float32, self.shape, self.ptrs[2])
        return binding

    def baseline(self) -> None:
        """The baseline: the run alone, on a binding made once."""
        self.session.run_with_iobinding(self.binding)

    def floor(self) -> None:
        """The floor: the same run through onnxruntime's C entry point."""
        self._run(self._inner, None)

    def run(self) -> None:
        """For reference: ``session.run`` with numpy feeds."""
        self.session.run(["y0"], self.feeds)

    def bind_and_run(self) -> None:
        """For reference: an IO binding made for the run."""
        self.session.run_with_iobinding(self.bind())


def bench_calls(shape: tuple[int, ...], stream: int, rounds: int) -> dict:
    """Per-call seconds of each round (ours, the baseline, the floor, the two references), the first call and the
    session creation."""
    op = DeviceAdd(shape, stream)
    compiled.cache.clear()
    start = time.perf_counter()
    op.call()  # compiles
    first = time.perf_counter() - start
    model = next(iter(compiled.cache._entries.values())).model.SerializeToString()
    start = time.perf_counter()
    ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    create = time.perf_counter() - start
    bare = Bare(model, op)
    bare.baseline()
    bare.floor()
    out = np.frombuffer(acl.util.ptr_to_bytes(op.ptrs[2], op.x1.nbytes), np.float32).reshape(op.x1.shape)
    np.testing.assert_allclose(out, op.x1 + op.x2)
    runs = {
        "openacl": op.call,
        "baseline": bare.baseline,
        "floor": bare.floor,
        "session.run": bare.run,
        "binding per run": bare.bind_and_run,
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            times[name].append(per_call(fn, CALLS_PER_ROUND))
    op.release()
    return {"times": times, "first": first, "create": create}


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    import onnx  # noqa: F401  (imported once here, so no first call below pays for the import)

    acl.init()
    acl.rt.set_device(0)
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    rows, notes, noisy = [], [], []
    try:
        for label, shape, target, rounds in (
            ("[16]", (16,), "<= 2.5", 2000),
            ("[256, 1024]", (256, 1024), "<= 1.5", 200),
        ):
            found = bench_calls(shape, stream, rounds // 10 if args.quick else rounds)
            median = {name: statistics.median(times) for name, times in found["times"].items()}
            ours, base, floor = median["openacl"], median["baseline"], median["floor"]
            us = f"{ours * 1e6:.1f} us"
            rows.append((f"(a) Add {label} execute_v2 + sync", us, f"{base * 1e6:.1f} us", ours / base, target))
            rows.append((f"(a floor) Add {label} vs its floor", us, f"{floor * 1e6:.1f} us", ours / floor, ""))
            first, create = found["first"], found["create"]
            rows.append(
                (
                    f"(b) Add {label} first call (compile)",
                    f"{first * 1e3:.2f} ms",
                    f"{create * 1e3:.2f} ms",
                    first / create,
                    "-",
                )
            )
            refs = ", ".join(
                f"{name} {median[name] * 1e6:.1f} us (ratio {ours / median[name]:.2f})"
                for name in ("session.run", "binding per run")
            )
            notes.append(f"(a) Add {label} for reference: {refs}")
            for name, times in found["times"].items():
                if spread(times) > SPREAD_NOTE:
                    noisy.append(
                        f"noisy: Add {label}, the {name} rounds spread {spread(times):.0%} (p10-p90 of the median)"
                    )
    finally:
        acl.rt.destroy_stream(stream)
        acl.rt.destroy_context(context)
        acl.rt.reset_device(0)
        acl.finalize()
    notes.insert(0, "baseline (a): an onnxruntime IO-binding run of the same model on a binding made once;")
    notes.insert(1, "(a floor): the same run through onnxruntime's C entry point; (b): an onnxruntime session made")
    notes.insert(2, f"(a): per call, the median of interleaved rounds of {CALLS_PER_ROUND} calls of each")
    print_rows(rows, args.json, notes + noisy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
