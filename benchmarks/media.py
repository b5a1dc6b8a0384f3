"""DVPP (acl.media): JPEG decode + resize through JPEGD and VPC vs Pillow doing the same to a numpy array.

(a) dvpp_jpeg_decode_async (to NV12) + dvpp_vpc_resize_async (to 224x224) + synchronize_stream, per picture, vs
    Pillow decoding the same JPEG to RGB and resizing it (bilinear) to a 224x224 numpy array.   target ratio <= 1.2
(a0) the floor of (a): the codec and filter work openacl cannot avoid, done directly: FFmpeg's mjpeg decoder
    (PyAV) to the JPEG's own 4:2:0 planes and Pillow resizing each plane; what (a) adds is descriptors, checks,
    writing and reading DVPP memory, and the two stream tasks.

The pictures are photo-like (tests/media/images.py), in two sizes. ``ROWS`` lists the row functions; each takes
the run's settings and returns its rows, so other DVPP figures (video) are added as functions of their own.

Usage: python benchmarks/media.py [--quick] [--json]
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import av
import numpy as np
from _common import ROOT, Row, argument_parser, print_rows
from PIL import Image

import openacl

openacl.install()
import acl  # noqa: E402

sys.path.insert(0, str(ROOT))
from tests.media.images import jpeg_bytes, photo  # noqa: E402

NV12, H2D = 1, 1
OUT_W, OUT_H = 224, 224


@dataclass
class Settings:
    quick: bool
    stream: int
    channel: int


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def pic_desc(ptr: int, size: int, width: int = 0, height: int = 0, ws: int = 0, hs: int = 0) -> int:
    desc = acl.media.dvpp_create_pic_desc()
    for name, value in (("data", ptr), ("size", size), ("format", NV12), ("width", width), ("height", height)):
        getattr(acl.media, f"dvpp_set_pic_desc_{name}")(desc, value)
    acl.media.dvpp_set_pic_desc_width_stride(desc, ws)
    acl.media.dvpp_set_pic_desc_height_stride(desc, hs)
    return desc


class DecodeResize:
    """One JPEG in DVPP memory, and the output pictures of its decode and its resize."""

    def __init__(self, data: bytes, settings: Settings) -> None:
        self.data, self.settings = data, settings
        host = acl.util.bytes_to_ptr(data)
        self.jpeg, _ = acl.media.dvpp_malloc(len(data))
        acl.rt.memcpy(self.jpeg, len(data), host, len(data), H2D)
        size, ret = acl.media.dvpp_jpeg_predict_dec_size(host, len(data), NV12)
        assert ret == 0
        self.decoded_ptr, _ = acl.media.dvpp_malloc(size)
        self.decoded = pic_desc(self.decoded_ptr, size)
        out_size = OUT_W * OUT_H * 3 // 2
        self.out_ptr, _ = acl.media.dvpp_malloc(out_size)
        self.out = pic_desc(self.out_ptr, out_size, OUT_W, OUT_H, OUT_W, OUT_H)
        self.resize_config = acl.media.dvpp_create_resize_config()
        self.result = acl.util.ptr_to_numpy(self.out_ptr, (out_size,), 2)  # a view: the picture, no copy

    def call(self) -> np.ndarray:
        media, s = acl.media, self.settings
        assert media.dvpp_jpeg_decode_async(s.channel, self.jpeg, len(self.data), self.decoded, s.stream) == 0
        assert acl.rt.synchronize_stream(s.stream) == 0
        assert media.dvpp_vpc_resize_async(s.channel, self.decoded, self.out, self.resize_config, s.stream) == 0
        assert acl.rt.synchronize_stream(s.stream) == 0
        return self.result

    def release(self) -> None:
        for desc in (self.decoded, self.out):
            acl.media.dvpp_destroy_pic_desc(desc)
        for ptr in (self.jpeg, self.decoded_ptr, self.out_ptr):
            acl.media.dvpp_free(ptr)
        acl.media.dvpp_destroy_resize_config(self.resize_config)


def pillow_rgb(data: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(data))
    return np.asarray(image.convert("RGB").resize((OUT_W, OUT_H), Image.Resampling.BILINEAR))


def codec_planes(data: bytes) -> tuple[np.ndarray, ...]:
    """The floor: the codec and filter work of openacl's JPEGD + VPC, without descriptors, checks or the stream
    (FFmpeg's mjpeg decoder through PyAV to the JPEG's own 4:2:0 planes, then Pillow resizing each plane)."""
    context = av.CodecContext.create("mjpeg", "r")
    context.thread_count = 1
    frame = context.decode(av.Packet(data))[0]
    bilinear = Image.Resampling.BILINEAR
    sizes = ((OUT_W, OUT_H), (OUT_W // 2, OUT_H // 2), (OUT_W // 2, OUT_H // 2))
    out = []
    for plane, size, (w, h) in zip(
        frame.planes, sizes, ((frame.width, frame.height),) + ((frame.width // 2, frame.height // 2),) * 2, strict=True
    ):
        pixels = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)[:h, :w]
        out.append(np.asarray(Image.fromarray(np.ascontiguousarray(pixels)).resize(size, bilinear)))
    return tuple(out)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def jpeg_decode_resize_rows(settings: Settings) -> list[Row]:
    rows: list[Row] = []
    for width, height in ((640, 480), (1920, 1080)):
        data = jpeg_bytes(photo(width, height, seed=7), quality=90)
        ours = DecodeResize(data, settings)
        n = 10 if settings.quick else (200 if width < 1000 else 60)
        ours.call()  # warm: first-call costs (imports, the engine thread)
        a, b, floor = [], [], []
        for _ in range(n):  # interleaved picture by picture: drift on a noisy machine hits all three alike
            a.append(timed(ours.call))
            b.append(timed(lambda data=data: pillow_rgb(data)))
            floor.append(timed(lambda data=data: codec_planes(data)))
        ours.release()
        a_s, b_s, f_s = statistics.median(a), statistics.median(b), statistics.median(floor)
        label = f"{width}x{height} -> {OUT_W}x{OUT_H}"
        rows.append(
            (f"(a) JPEGD + VPC resize {label}", f"{a_s * 1e3:.2f} ms", f"{b_s * 1e3:.2f} ms", a_s / b_s, "<= 1.2")
        )
        rows.append(
            (f"(a0) the same vs its floor {label}", f"{a_s * 1e3:.2f} ms", f"{f_s * 1e3:.2f} ms", a_s / f_s, "")
        )
    return rows


#: The figures this script prints, in order: each a function of the run's settings returning its rows.
ROWS: list[Callable[[Settings], list[Row]]] = [jpeg_decode_resize_rows]


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    acl.init()
    acl.rt.set_device(0)
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    channel = acl.media.dvpp_create_channel_desc()
    acl.media.dvpp_create_channel(channel)
    rows: list[Row] = []
    try:
        settings = Settings(args.quick, stream, channel)
        for row_function in ROWS:
            rows.extend(row_function(settings))
    finally:
        acl.media.dvpp_destroy_channel(channel)
        acl.media.dvpp_destroy_channel_desc(channel)
        acl.rt.destroy_stream(stream)
        acl.rt.destroy_context(context)
        acl.rt.reset_device(0)
        acl.finalize()
    notes = [
        "baseline (a): Pillow, decode to RGB + bilinear resize to a numpy array; floor (a0): PyAV + Pillow, the planes",
        f"SoC {acl.get_soc_name()}; medians of interleaved runs",
    ]
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
