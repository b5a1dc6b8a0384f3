"""What ``openacl check`` costs: the same workloads with checking off and on, side by side in one run.

(a) NO_BLOCK stream callbacks: launch N on one stream served by a report thread, then synchronize.
(b) a model execution loop: per step a copy in, ``execute_async``, synchronize, a copy out (the shipped model).
(c) the DVPP pipeline: per step a JPEG copied in, JPEGD, VPC resize to 224x224, synchronize, a copy out.

Each row is seconds per step under check against the same without it (ratio = check / off); the target is a
ratio of at most 2.

Usage: python benchmarks/check.py [--quick] [--json]
"""

from __future__ import annotations

import io
import threading
import time

import numpy as np
from _common import argument_parser, interleaved, print_rows
from PIL import Image

import openacl
from openacl.model.model import DEMO_MODEL
from openacl.runtime import checker

openacl.install()
import acl  # noqa: E402

NO_BLOCK, NV12 = 0, 1


def ok(ret: int) -> None:
    assert ret == 0, ret


def align(value: int, to: int) -> int:
    return (value + to - 1) // to * to


def timed(checking: bool, body, n: int) -> float:
    """Seconds per step of ``body`` run ``n`` times, with checking as asked (findings and records dropped)."""
    checker.enable(checking)
    try:
        start = time.perf_counter()
        for _ in range(n):
            body()
        return (time.perf_counter() - start) / n
    finally:
        checker.enable(False)
        checker.take_findings()


class Callbacks:
    def __init__(self, stream: int) -> None:
        self.stream = stream
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        ok(acl.rt.subscribe_report(self.thread.ident, stream))

    def _serve(self) -> None:
        while not self.stop:
            acl.rt.process_report(100)

    def step(self, n: int = 100) -> None:
        for _ in range(n):
            ok(acl.rt.launch_callback(lambda _data: None, None, NO_BLOCK, self.stream))
        ok(acl.rt.synchronize_stream(self.stream))

    def close(self) -> None:
        ok(acl.rt.unsubscribe_report(self.thread.ident, self.stream))
        self.stop = True
        self.thread.join()


class ModelLoop:
    def __init__(self, stream: int) -> None:
        self.stream = stream
        self.model, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
        ok(ret)
        self.desc = acl.mdl.create_desc()
        ok(acl.mdl.get_desc(self.desc, self.model))
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.inputs, self.outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        self.memory = []
        for dataset, sizes in (
            (self.inputs, [self.in_size]),
            (self.outputs, [acl.mdl.get_output_size_by_index(self.desc, i) for i in range(2)]),
        ):
            for size in sizes:
                ptr, _ = acl.rt.malloc(size, 0)
                self.memory.append(ptr)
                acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        self.host_in = np.random.default_rng(0).random(self.in_size // 4, dtype=np.float32)
        self.host_out = np.zeros(self.out_size // 4, np.float32)

    def step(self) -> None:
        ok(acl.rt.memcpy(self.memory[0], self.in_size, acl.util.bytes_to_ptr(self.host_in.tobytes()), self.in_size, 1))
        ok(acl.mdl.execute_async(self.model, self.inputs, self.outputs, self.stream))
        ok(acl.rt.synchronize_stream(self.stream))
        out = acl.util.numpy_to_ptr(self.host_out)
        ok(acl.rt.memcpy(out, self.out_size, self.memory[1], self.out_size, 2))


class DvppLoop:
    def __init__(self, stream: int) -> None:
        self.stream = stream
        rng = np.random.default_rng(1)
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (480, 640, 3), np.uint8)).save(buf, "JPEG")
        self.jpeg = buf.getvalue()
        self.channel = acl.media.dvpp_create_channel_desc()
        ok(acl.media.dvpp_create_channel(self.channel))
        self.resize = acl.media.dvpp_create_resize_config()
        self.in_dev, _ = acl.media.dvpp_malloc(len(self.jpeg))
        self.dec_size = align(640, 128) * align(480, 16) * 3 // 2
        self.dec_dev, _ = acl.media.dvpp_malloc(self.dec_size)
        self.out_size = 224 * 224 * 3 // 2
        self.out_dev, _ = acl.media.dvpp_malloc(self.out_size)
        self.dec_desc = self._desc(self.dec_dev, self.dec_size, 640, 480, 128, 16)
        self.out_desc = self._desc(self.out_dev, self.out_size, 224, 224, 16, 2)
        self.host_out = np.zeros(self.out_size, np.uint8)

    @staticmethod
    def _desc(ptr: int, size: int, width: int, height: int, wa: int, ha: int) -> int:
        desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(desc, ptr)
        acl.media.dvpp_set_pic_desc_size(desc, size)
        acl.media.dvpp_set_pic_desc_format(desc, NV12)
        acl.media.dvpp_set_pic_desc_width(desc, width)
        acl.media.dvpp_set_pic_desc_height(desc, height)
        acl.media.dvpp_set_pic_desc_width_stride(desc, align(width, wa))
        acl.media.dvpp_set_pic_desc_height_stride(desc, align(height, ha))
        return desc

    def step(self) -> None:
        size = len(self.jpeg)
        ok(acl.rt.memcpy(self.in_dev, size, acl.util.bytes_to_ptr(self.jpeg), size, 1))
        ok(acl.media.dvpp_jpeg_decode_async(self.channel, self.in_dev, size, self.dec_desc, self.stream))
        ok(acl.media.dvpp_vpc_resize_async(self.channel, self.dec_desc, self.out_desc, self.resize, self.stream))
        ok(acl.rt.synchronize_stream(self.stream))
        ok(acl.rt.memcpy(acl.util.numpy_to_ptr(self.host_out), self.out_size, self.out_dev, self.out_size, 2))


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    scale = 10 if args.quick else 1
    ok(acl.init())
    ok(acl.rt.set_device(0))
    stream, _ = acl.rt.create_stream()
    callbacks, model, dvpp = Callbacks(stream), ModelLoop(stream), DvppLoop(stream)
    rows = []
    for name, body, n in (
        ("(a) 100 NO_BLOCK callbacks + synchronize", callbacks.step, 200 // scale),
        ("(b) model step: copy in, execute_async, out", model.step, 500 // scale),
        ("(c) DVPP step: JPEGD + VPC resize + copy out", dvpp.step, 100 // scale),
    ):
        checked, off = interleaved(3, lambda b=body, n=n: timed(True, b, n), lambda b=body, n=n: timed(False, b, n))
        rows.append((name, f"{checked * 1e6:,.0f} µs", f"{off * 1e6:,.0f} µs", checked / off, "<= 2.0"))
    callbacks.close()
    print_rows(rows, args.json, ["openacl: with openacl check on; baseline: the same, off"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
