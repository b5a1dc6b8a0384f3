"""DVPP's enumerations and buffer-size formulas, in one place (acl_dvpp.h's numbers; spec dvpp.md §4-§5).

A picture in DVPP memory is described by its format, its size in pixels and its strides: ``width_stride`` is
the bytes of one row of the first plane (packed formats include the bytes per pixel), ``height_stride`` the
rows allocated per plane. Semi-planar formats put the interleaved chroma plane right after the luma plane, at
``width_stride * height_stride``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PixelFormat(enum.IntEnum):
    """``acldvppPixelFormat`` (the values the samples and the emulated operations use)."""

    YUV_400 = 0
    YUV_SEMIPLANAR_420 = 1  # NV12
    YVU_SEMIPLANAR_420 = 2  # NV21
    YUV_SEMIPLANAR_422 = 3
    YVU_SEMIPLANAR_422 = 4
    YUV_SEMIPLANAR_444 = 5
    YVU_SEMIPLANAR_444 = 6
    YUYV_PACKED_422 = 7
    UYVY_PACKED_422 = 8
    YVYU_PACKED_422 = 9
    VYUY_PACKED_422 = 10
    YUV_PACKED_444 = 11
    RGB_888 = 12
    BGR_888 = 13
    ARGB_8888 = 14
    ABGR_8888 = 15
    RGBA_8888 = 16
    BGRA_8888 = 17
    YUV_SEMI_PLANNER_420_10BIT = 18
    YVU_SEMI_PLANNER_420_10BIT = 19
    YVU_PLANAR_420 = 20
    YVU_PLANAR_422 = 21
    YVU_PLANAR_444 = 22
    YUV_SEMIPLANAR_440 = 1000
    YVU_SEMIPLANAR_440 = 1001
    FLOAT32 = 1002
    BUTT = 1003
    UNKNOWN = 10000


class StreamFormat(enum.IntEnum):
    """``acldvppStreamFormat``."""

    H265_MAIN_LEVEL = 0
    H264_BASELINE_LEVEL = 1
    H264_MAIN_LEVEL = 2
    H264_HIGH_LEVEL = 3


class JpegFormat(enum.IntEnum):
    """``acldvppJpegFormat``: a JPEG's chroma subsampling."""

    YUV444 = 0
    YUV422 = 1
    YUV420 = 2
    YUV400 = 3
    YUV440 = 4
    YUV411 = 5
    UNKNOWN = 1000


class ChannelMode(enum.IntFlag):
    """``acldvppChannelMode``; a channel desc whose mode was never set serves all of them."""

    VPC = 1
    JPEGD = 2
    JPEGE = 4
    PNGD = 8


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class Layout:
    """How one pixel format lies in memory.

    ``kind``: "sp" semi-planar (luma plane + interleaved chroma plane), "y" luma only, "packed422" (2 bytes a
    pixel, two pixels share a chroma pair), "packed" (``bpp`` interleaved channels a pixel).
    ``sub``: chroma subsampling (horizontal, vertical) of semi-planar formats. ``order``: the channel order
    (``"uv"``/``"vu"`` for semi-planar, ``"yuyv"`` style for packed 4:2:2, ``"rgb"`` style for packed).
    """

    kind: str
    sub: tuple[int, int] = (1, 1)
    order: str = ""
    bpp: int = 1

    @property
    def is_yuv(self) -> bool:
        return self.kind in ("sp", "y", "packed422") or self.order == "yuv"


LAYOUTS: dict[int, Layout] = {
    PixelFormat.YUV_400: Layout("y"),
    PixelFormat.YUV_SEMIPLANAR_420: Layout("sp", (2, 2), "uv"),
    PixelFormat.YVU_SEMIPLANAR_420: Layout("sp", (2, 2), "vu"),
    PixelFormat.YUV_SEMIPLANAR_422: Layout("sp", (2, 1), "uv"),
    PixelFormat.YVU_SEMIPLANAR_422: Layout("sp", (2, 1), "vu"),
    PixelFormat.YUV_SEMIPLANAR_444: Layout("sp", (1, 1), "uv"),
    PixelFormat.YVU_SEMIPLANAR_444: Layout("sp", (1, 1), "vu"),
    PixelFormat.YUV_SEMIPLANAR_440: Layout("sp", (1, 2), "uv"),
    PixelFormat.YVU_SEMIPLANAR_440: Layout("sp", (1, 2), "vu"),
    PixelFormat.YUYV_PACKED_422: Layout("packed422", (2, 1), "yuyv", 2),
    PixelFormat.UYVY_PACKED_422: Layout("packed422", (2, 1), "uyvy", 2),
    PixelFormat.YVYU_PACKED_422: Layout("packed422", (2, 1), "yvyu", 2),
    PixelFormat.VYUY_PACKED_422: Layout("packed422", (2, 1), "vyuy", 2),
    PixelFormat.YUV_PACKED_444: Layout("packed", order="yuv", bpp=3),
    PixelFormat.RGB_888: Layout("packed", order="rgb", bpp=3),
    PixelFormat.BGR_888: Layout("packed", order="bgr", bpp=3),
    PixelFormat.ARGB_8888: Layout("packed", order="argb", bpp=4),
    PixelFormat.ABGR_8888: Layout("packed", order="abgr", bpp=4),
    PixelFormat.RGBA_8888: Layout("packed", order="rgba", bpp=4),
    PixelFormat.BGRA_8888: Layout("packed", order="bgra", bpp=4),
}

NV12_NV21 = frozenset({PixelFormat.YUV_SEMIPLANAR_420, PixelFormat.YVU_SEMIPLANAR_420})
PACKED_422 = frozenset(
    {PixelFormat.YUYV_PACKED_422, PixelFormat.UYVY_PACKED_422, PixelFormat.YVYU_PACKED_422, PixelFormat.VYUY_PACKED_422}
)

# Bytes per (width_stride * height_stride) of each semi-planar / luma-only format, as a fraction (num, den).
# YUV400 is sized like 4:2:0 on the 310 (spec §5.3: VPC reads it so), which the chip rules may override.
_SP_FACTORS: dict[tuple[int, int], tuple[int, int]] = {(2, 2): (3, 2), (2, 1): (2, 1), (1, 2): (2, 1), (1, 1): (3, 1)}


def layout(fmt: int) -> Layout | None:
    return LAYOUTS.get(fmt)


def buffer_size(fmt: int, width_stride: int, height_stride: int, *, yuv400_as_420: bool = True) -> int:
    """Bytes a picture of ``fmt`` with these strides occupies (spec §5.3); 0 for a format with no layout."""
    lay = LAYOUTS.get(fmt)
    if lay is None:
        return 0
    plane = width_stride * height_stride
    if lay.kind == "y":
        return plane * 3 // 2 if yuv400_as_420 else plane
    if lay.kind == "sp":
        num, den = _SP_FACTORS[lay.sub]
        return plane * num // den
    return plane  # packed: the stride already holds the bytes per pixel


def nv12_size(width_stride: int, height_stride: int) -> int:
    return width_stride * height_stride * 3 // 2


def format_for_sampling(jpeg_format: int) -> int:
    """The semi-planar format that keeps a JPEG's own subsampling (JPEGD's ``PIXEL_FORMAT_UNKNOWN`` output)."""
    return {
        JpegFormat.YUV444: PixelFormat.YUV_SEMIPLANAR_444,
        JpegFormat.YUV422: PixelFormat.YUV_SEMIPLANAR_422,
        JpegFormat.YUV440: PixelFormat.YUV_SEMIPLANAR_440,
    }.get(jpeg_format, PixelFormat.YUV_SEMIPLANAR_420)
