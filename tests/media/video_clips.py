"""Short H.264 / H.265 Annex-B clips made with PyAV for the VDEC/VENC tests, a report thread, and DVPP helpers."""

from __future__ import annotations

import contextlib
import threading
from fractions import Fraction

import av
import numpy as np

import acl

SUCCESS = 0
H265, H264_MAIN = 0, 2
NV12, NV21 = 1, 2
RT_THREAD_SUBSCRIBE = 107012


def source_frames(count: int, width: int, height: int, seed: int = 0) -> list[np.ndarray]:
    """Moving smooth gradients with some texture (yuv420p arrays of shape (h*3/2, w)): compressible, not flat."""
    rng = np.random.default_rng(seed)
    ys, xs = np.mgrid[0:height, 0:width]
    frames = []
    for index in range(count):
        luma = (xs * 1.3 + ys * 0.7 + index * 6 + 20 * np.sin((xs + index * 3) / 9.0)) % 220 + 16
        luma = luma + rng.integers(0, 3, luma.shape)
        cu = (128 + 40 * np.sin((xs[::2, ::2] + index) / 13.0)).astype(np.uint8)
        cv = (128 + 40 * np.cos((ys[::2, ::2] - index) / 11.0)).astype(np.uint8)
        frame = np.empty((height * 3 // 2, width), np.uint8)
        frame[:height] = luma.astype(np.uint8)
        flat = frame.reshape(-1)
        quarter = (height // 2) * (width // 2)
        flat[width * height : width * height + quarter] = cu.reshape(-1)
        flat[width * height + quarter :] = cv.reshape(-1)
        frames.append(frame)
    return frames


def encode_clip(codec: str, count: int = 8, width: int = 192, height: int = 128, **options: str) -> list[bytes]:
    """One Annex-B access unit per element, parameter sets in the first."""
    context = av.CodecContext.create(codec, "w")
    context.width, context.height, context.pix_fmt = width, height, "yuv420p"
    context.framerate, context.time_base = 25, Fraction(1, 25)
    if codec == "libx265":
        options.setdefault("x265-params", "log-level=error")
    context.options = options
    packets: list[bytes] = []
    for index, array in enumerate(source_frames(count, width, height)):
        frame = av.VideoFrame.from_ndarray(array, format="yuv420p")
        frame.pts = index
        packets += [bytes(packet) for packet in context.encode(frame)]
    packets += [bytes(packet) for packet in context.encode(None)]
    return packets


def reference_nv12(decoder: str, packets: list[bytes], nv21: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """PyAV's own decode of the packets, as (luma, interleaved chroma) per picture, in output order."""
    context = av.CodecContext.create(decoder, "r")
    pictures = []
    for data in packets:
        pictures += context.decode(av.Packet(data))
    pictures += context.decode(None)
    result = []
    for picture in pictures:
        w, h = picture.width, picture.height
        planes = [np.frombuffer(p, np.uint8).reshape(-1, p.line_size) for p in picture.planes]
        u, v = planes[1][: h // 2, : w // 2], planes[2][: h // 2, : w // 2]
        chroma = np.empty((h // 2, w), np.uint8)
        chroma[:, 0::2], chroma[:, 1::2] = (v, u) if nv21 else (u, v)
        result.append((planes[0][:h, :w].copy(), chroma))
    return result


def planes_nv12(picture: av.VideoFrame, nv21: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A yuv420p picture as (luma, interleaved chroma)."""
    w, h = picture.width, picture.height
    planes = [np.frombuffer(p, np.uint8).reshape(-1, p.line_size) for p in picture.planes]
    u, v = planes[1][: h // 2, : w // 2], planes[2][: h // 2, : w // 2]
    chroma = np.empty((h // 2, w), np.uint8)
    chroma[:, 0::2], chroma[:, 1::2] = (v, u) if nv21 else (u, v)
    return planes[0][:h, :w].copy(), chroma


def reference_by_frame(
    decoder: str, packets: list[bytes]
) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], list[int]]:
    """PyAV decoding the frames one by one, each packet tagged with its index: the picture of each frame that gave
    one (luma, NV12 chroma), and the frames in the order their pictures came out."""
    context = av.CodecContext.create(decoder, "r")
    pictures = []
    for index, data in enumerate(packets):
        packet = av.Packet(data)
        packet.pts = index
        with contextlib.suppress(av.FFmpegError):  # a refused packet gives no picture, as a dropped one
            pictures += context.decode(packet)
    pictures += context.decode(None)
    return {p.pts: planes_nv12(p) for p in pictures}, [p.pts for p in pictures]


def nal_units(packet: bytes) -> list[bytes]:
    """The NAL units of an Annex-B access unit, without their start codes."""
    starts = [i + 3 for i in range(len(packet) - 2) if packet[i : i + 3] == b"\x00\x00\x01"]
    ends = [i - 3 for i in starts[1:]] + [len(packet)]
    units = (packet[a:b].rstrip(b"\x00") for a, b in zip(starts, ends, strict=True))
    return [unit for unit in units if unit]


def nal_type(unit: bytes, decoder: str = "h264") -> int:
    return (unit[0] >> 1) & 0x3F if decoder == "hevc" else unit[0] & 0x1F


def nal_types(packet: bytes, decoder: str = "h264") -> list[int]:
    return [nal_type(unit, decoder) for unit in nal_units(packet)]


KEY_FRAME_TYPES = {"h264": {5}, "hevc": {19, 20}}  # IDR slices
_PARAMETER_SET_TYPES = {"h264": {7, 8}, "hevc": {32, 33, 34}}  # (VPS,) SPS, PPS


def parameter_sets(packet: bytes, decoder: str = "h264") -> bytes:
    """The parameter sets of an access unit, as a camera sends them ahead of a stream a receiver joins."""
    units = nal_units(packet)
    return b"".join(b"\x00\x00\x00\x01" + u for u in units if nal_type(u, decoder) in _PARAMETER_SET_TYPES[decoder])


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


class ReportThread:
    """The samples' callback thread: start_thread, set_context, loop on process_report until told to stop."""

    def __init__(self, context: int, timeout_ms: int = 20, hold: threading.Event | None = None) -> None:
        self.stop = threading.Event()

        def loop(args):
            acl.rt.set_context(args[0])
            if hold is not None:
                hold.wait()  # a thread that does not run process_report (yet)
            while not self.stop.is_set():
                if acl.rt.process_report(args[1]) == RT_THREAD_SUBSCRIBE:
                    self.stop.wait(0.005)

        self.tid, ret = acl.util.start_thread(loop, [context, timeout_ms])
        assert ret == SUCCESS

    def close(self) -> None:
        self.stop.set()
        assert acl.util.stop_thread(self.tid) == SUCCESS


def to_device(data: bytes, size: int | None = None) -> int:
    addr, ret = acl.media.dvpp_malloc(size or len(data))
    assert ret == SUCCESS
    assert acl.rt.memcpy(addr, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == SUCCESS
    return addr


def from_device(addr: int, size: int) -> bytes:
    host = bytes(size)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, addr, size, 2) == SUCCESS
    return host
