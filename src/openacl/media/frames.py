"""Pictures between PyAV frames and DVPP memory: NV12/NV21 (and packed RGB) with DVPP's strides (spec dvpp.md §5.2).

A semi-planar picture of ``width`` x ``height`` in a buffer with ``width_stride`` / ``height_stride`` has its luma
rows at ``row * width_stride`` and its interleaved chroma rows from ``width_stride * height_stride`` on. Bytes
outside the picture (stride padding) are left as they are.
"""

from __future__ import annotations

import numpy as np

from openacl import lazy
from openacl.media.formats import PixelFormat
from openacl.media.picture import interleave

av = lazy.module("av")

# The FFmpeg pixel format each DVPP output format is produced in.
AV_FORMATS: dict[int, str] = {
    PixelFormat.YUV_SEMIPLANAR_420: "nv12",
    PixelFormat.YVU_SEMIPLANAR_420: "nv21",
    PixelFormat.RGB_888: "rgb24",
    PixelFormat.BGR_888: "bgr24",
}
_PLAIN_420 = frozenset({"yuv420p", "yuvj420p"})


def plane_rows(plane: av.video.plane.VideoPlane, rows: int, columns: int) -> np.ndarray:
    """A (rows, columns) view of one plane, without its line padding."""
    array = np.frombuffer(plane, np.uint8)
    return array[: rows * plane.line_size].reshape(rows, plane.line_size)[:, :columns]


def picture_bytes(av_format: str, width_stride: int, height_stride: int) -> int:
    if av_format in ("rgb24", "bgr24"):
        return width_stride * height_stride
    return width_stride * height_stride * 3 // 2


def write_frame(
    frame: av.VideoFrame,
    av_format: str,
    out: np.ndarray,
    width: int,
    height: int,
    width_stride: int,
    height_stride: int,
) -> None:
    """Write ``frame`` as ``av_format`` at ``width`` x ``height`` into ``out``, a checked view of DVPP memory.

    A plain 4:2:0 frame of that size is repacked with numpy (bit-exact); anything else (another size, another
    bit depth or subsampling, RGB) goes through FFmpeg's swscale, bilinear."""
    assert out.nbytes == picture_bytes(av_format, width_stride, height_stride)
    if av_format in ("rgb24", "bgr24"):
        rgb = frame.reformat(width=width, height=height, format=av_format, interpolation="BILINEAR")
        out.reshape(height_stride, width_stride)[:height, : width * 3] = plane_rows(rgb.planes[0], height, width * 3)
        return
    luma = out[: width_stride * height_stride].reshape(height_stride, width_stride)
    chroma = out[width_stride * height_stride :].reshape(height_stride // 2, width_stride)
    half_w, half_h = width // 2, height // 2
    if frame.format.name in _PLAIN_420 and frame.width == width and frame.height == height:
        luma[:height, :width] = plane_rows(frame.planes[0], height, width)
        first, second = (1, 2) if av_format == "nv12" else (2, 1)
        interleave(
            plane_rows(frame.planes[first], half_h, half_w),
            plane_rows(frame.planes[second], half_h, half_w),
            chroma[:half_h, : half_w * 2],
        )
        return
    converted = frame.reformat(width=width, height=height, format=av_format, interpolation="BILINEAR")
    luma[:height, :width] = plane_rows(converted.planes[0], height, width)
    chroma[:half_h, : half_w * 2] = plane_rows(converted.planes[1], half_h, half_w * 2)


def read_semiplanar(data: bytes, uv_first: bool, width: int, height: int, width_stride: int, height_stride: int):
    """An NV12/NV21 picture in ``data`` (with strides) as a yuv420p ``av.VideoFrame``."""
    buffer = np.frombuffer(data, np.uint8)
    luma = buffer[: width_stride * height].reshape(height, width_stride)[:, :width]
    start = width_stride * height_stride
    half_h, half_w = height // 2, width // 2
    pairs = buffer[start : start + width_stride * half_h].reshape(half_h, width_stride)[:, : half_w * 2]
    pairs = pairs.reshape(half_h, half_w, 2)
    u, v = (pairs[:, :, 0], pairs[:, :, 1]) if uv_first else (pairs[:, :, 1], pairs[:, :, 0])
    planar = np.empty((height * 3 // 2, width), np.uint8)
    flat = planar.reshape(-1)
    luma_size, quarter = width * height, half_h * half_w
    planar[:height] = luma
    flat[luma_size : luma_size + quarter] = u.reshape(-1)
    flat[luma_size + quarter :] = v.reshape(-1)
    return av.VideoFrame.from_ndarray(planar, format="yuv420p")
