"""Pictures in memory <-> planes: the one place that knows where each pixel format keeps its bytes.

``Planes`` holds a picture as a luma plane and two chroma planes at some subsampling (gray pictures have
chroma None, read as 0x80). Every operation reads its input into Planes, crops and scales them, and writes them
in its output format (``to_layout`` + ``write``). Only the rectangle a picture covers is written: padding
columns and rows, and the output outside a paste area, keep what they held.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from openacl.media import color, resample
from openacl.media.formats import Layout

NEUTRAL = 128


@dataclass
class Planes:
    y: np.ndarray  # (h, w)
    u: np.ndarray | None  # (ceil(h / sub_y), ceil(w / sub_x)), None for a gray picture
    v: np.ndarray | None
    sub: tuple[int, int] = (2, 2)

    @property
    def width(self) -> int:
        return self.y.shape[1]

    @property
    def height(self) -> int:
        return self.y.shape[0]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def chroma_shape(width: int, height: int, sub: tuple[int, int]) -> tuple[int, int]:
    return _ceil_div(height, sub[1]), _ceil_div(width, sub[0])


def _plane(buf: np.ndarray, offset: int, ws: int, rows: int) -> np.ndarray:
    return buf[offset : offset + ws * rows].reshape(rows, ws)


def read(buf: np.ndarray, lay: Layout, width: int, height: int, ws: int, hs: int) -> Planes:
    """The picture of ``width`` x ``height`` pixels in ``buf`` (the bytes from the desc's data address)."""
    first = _plane(buf, 0, ws, hs)
    if lay.kind == "y":
        return Planes(first[:height, :width], None, None)
    if lay.kind == "sp":
        ch, cw = chroma_shape(width, height, lay.sub)
        chroma = _plane(buf, ws * hs, ws, hs // lay.sub[1])[:ch, : 2 * cw]
        a, b = chroma[:, 0::2], chroma[:, 1::2]
        u, v = (a, b) if lay.order == "uv" else (b, a)
        return Planes(first[:height, :width], u, v, lay.sub)
    rows = first[:height, : width * lay.bpp]
    if lay.kind == "packed422":
        at = {c: i for i, c in enumerate(lay.order)}  # yuyv: y at 0 and 2, u at 1, v at 3
        y = rows[:, 0::2] if lay.order[0] == "y" else rows[:, 1::2]
        return Planes(y, rows[:, at["u"] :: 4], rows[:, at["v"] :: 4], (2, 1))
    pixels = rows.reshape(height, width, lay.bpp)
    if lay.order == "yuv":
        return Planes(pixels[..., 0], pixels[..., 1], pixels[..., 2], (1, 1))
    rgb = pixels[..., [lay.order.index(c) for c in "rgb"]]
    y, u, v = color.rgb_to_yuv(rgb)
    return Planes(y, u, v, (1, 1))


def crop(planes: Planes, left: int, top: int, width: int, height: int) -> Planes:
    y = planes.y[top : top + height, left : left + width]
    if planes.u is None:
        return Planes(y, None, None, planes.sub)
    sx, sy = planes.sub
    rows = slice(top // sy, _ceil_div(top + height, sy))
    cols = slice(left // sx, _ceil_div(left + width, sx))
    return Planes(y, planes.u[rows, cols], planes.v[rows, cols], planes.sub)  # type: ignore[index]


def scale(planes: Planes, width: int, height: int, sub: tuple[int, int], method: str) -> Planes:
    """Planes of ``width`` x ``height`` with chroma at ``sub``, each plane scaled with ``method``."""
    y = resample.resize(planes.y, width, height, method)
    ch, cw = chroma_shape(width, height, sub)
    if planes.u is None:
        gray = np.full((ch, cw), NEUTRAL, np.uint8)
        return Planes(y, gray, gray, sub)
    u = resample.resize(planes.u, cw, ch, method)
    v = resample.resize(planes.v, cw, ch, method)  # type: ignore[arg-type]
    return Planes(y, u, v, sub)


def target_sub(lay: Layout) -> tuple[int, int]:
    return lay.sub if lay.kind in ("sp", "packed422") else (1, 1)


def write(buf: np.ndarray, lay: Layout, ws: int, hs: int, planes: Planes, left: int = 0, top: int = 0) -> None:
    """Write ``planes`` (already at the output's subsampling) at (left, top) of the picture in ``buf``."""
    h, w = planes.y.shape
    first = _plane(buf, 0, ws, hs)
    if lay.kind == "y":
        first[top : top + h, left : left + w] = planes.y
        return
    if lay.kind == "sp":
        first[top : top + h, left : left + w] = planes.y
        sx, sy = lay.sub
        ch, cw = planes.u.shape  # type: ignore[union-attr]
        chroma = _plane(buf, ws * hs, ws, hs // sy)[top // sy : top // sy + ch]
        x0 = left // sx * 2
        a, b = (planes.u, planes.v) if lay.order == "uv" else (planes.v, planes.u)
        interleave(a, b, chroma[:, x0 : x0 + 2 * cw])
        return
    rows = first[top : top + h, left * lay.bpp : (left + w) * lay.bpp]
    if lay.kind == "packed422":
        at = {c: i for i, c in enumerate(lay.order)}
        ystart = 0 if lay.order[0] == "y" else 1
        rows[:, ystart::2] = planes.y
        rows[:, at["u"] :: 4] = planes.u
        rows[:, at["v"] :: 4] = planes.v
        return
    pixels = rows.reshape(h, w, lay.bpp)
    if lay.order == "yuv":
        pixels[..., 0], pixels[..., 1], pixels[..., 2] = planes.y, planes.u, planes.v
        return
    rgb = color.yuv_to_rgb(planes.y, planes.u, planes.v)  # type: ignore[arg-type]
    for i, c in enumerate(lay.order):
        pixels[..., i] = 255 if c == "a" else rgb[..., "rgb".index(c)]


def interleave(first: np.ndarray, second: np.ndarray, out: np.ndarray) -> None:
    """``out[:, 0::2] = first`` and ``out[:, 1::2] = second`` (a semi-planar picture's chroma pairs), as
    16-bit words on a little-endian machine: ``second`` shifted into a scratch array of words, then one
    contiguous pass that adds ``first`` into ``out``, instead of two byte-strided copies (a 720p frame's chroma
    in 46 us instead of 118, warm). ``out`` is touched once: a decoded picture's output buffer is cold, and
    a second pass over it cost 85 us a frame where this costs 66 (a VDEC frame, cold).

    The words pass writes both bytes of a pair before it reads ``first``: where ``first`` or ``second`` may be
    ``out``'s own bytes (a VPC crop onto its own picture), the byte-strided copies, which leave each other's
    bytes alone, serve instead."""
    if (
        sys.byteorder != "little"
        or out.strides[-1] != 1
        or not first.dtype == second.dtype == np.uint8
        or np.may_share_memory(out, first)
        or np.may_share_memory(out, second)
    ):
        out[:, 0::2] = first
        out[:, 1::2] = second
        return
    words = out.view(np.uint16)  # word i of a row: bytes 2i (low) and 2i + 1 (high)
    np.bitwise_or(np.left_shift(second, 8, dtype=np.uint16), first, out=words)


# acldvppBorderType -> numpy's pad mode: CONSTANT, REPLICATE (aaa|abc), REFLECT (cba|abc), REFLECT_101 (cb|abc)
_PAD_MODES = ("constant", "edge", "symmetric", "reflect")


def pad(planes: Planes, top: int, bottom: int, left: int, right: int, border_type: int, fill: tuple) -> Planes:
    """``planes`` with a border around them (chroma borders scaled by its subsampling); ``fill`` is the (Y, U, V)
    of a CONSTANT border. The caller keeps the borders multiples of the subsampling."""
    mode = _PAD_MODES[border_type]

    def padded(plane: np.ndarray, widths: tuple[tuple[int, int], tuple[int, int]], value: int) -> np.ndarray:
        if mode == "reflect" and min(plane.shape) < 2:
            return np.pad(plane, widths, mode="edge")  # reflect-101 of one row or column is the row itself
        if mode == "constant":
            return np.pad(plane, widths, mode=mode, constant_values=value)
        return np.pad(plane, widths, mode=mode)

    y = padded(planes.y, ((top, bottom), (left, right)), fill[0])
    if planes.u is None:
        return Planes(y, None, None, planes.sub)
    sx, sy = planes.sub
    widths = ((top // sy, bottom // sy), (left // sx, right // sx))
    u = padded(planes.u, widths, fill[1])
    v = padded(planes.v, widths, fill[2])  # type: ignore[arg-type]
    return Planes(y, u, v, planes.sub)


def border_fill(lay: Layout, value: list[float]) -> tuple[int, int, int]:
    """A CONSTANT border's (Y, U, V) from acldvppBorderConfig's values, which are the output's channels: Y, U, V
    for YUV outputs (semi-planar, packed), in the format's own order for RGB outputs."""
    clipped = [int(min(max(round(v), 0), 255)) for v in value]
    if lay.kind in ("y", "sp", "packed422") or lay.order == "yuv":
        return clipped[0], clipped[1], clipped[2]
    channels = {c: clipped[i] for i, c in enumerate(lay.order[:3])}
    rgb = np.array([[[channels.get(c, 0) for c in "rgb"]]], np.uint8)
    y, u, v = color.rgb_to_yuv(rgb)
    return int(y[0, 0]), int(u[0, 0]), int(v[0, 0])
