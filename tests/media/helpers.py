"""Small helpers the DVPP tests share: device buffers, pic descs, reading pictures back."""

from __future__ import annotations

import numpy as np

import acl
from openacl.media import color

M = acl.media


def to_device(data: bytes) -> int:
    ptr, ret = M.dvpp_malloc(len(data))
    assert ret == 0
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
    return ptr


def pic(data=0, size=0, fmt=1, width=0, height=0, ws=0, hs=0) -> int:
    desc = M.dvpp_create_pic_desc()
    for name, value in [
        ("data", data),
        ("size", size),
        ("format", fmt),
        ("width", width),
        ("height", height),
        ("width_stride", ws),
        ("height_stride", hs),
    ]:
        assert getattr(M, f"dvpp_set_pic_desc_{name}")(desc, value) == 0
    return desc


def nv12_pic(width: int, height: int, ws: int | None = None, hs: int | None = None, fmt: int = 1, fill=None):
    """A pic desc over fresh DVPP memory holding an NV12 picture (filled with ``fill`` planes if given)."""
    ws = ws if ws is not None else (width + 15) // 16 * 16
    hs = hs if hs is not None else (height + 1) // 2 * 2
    size = ws * hs * 3 // 2
    ptr, ret = M.dvpp_malloc(size)
    assert ret == 0
    if fill is not None:
        buf = acl.util.ptr_to_numpy(ptr, (size,), 2)
        write_nv12(buf, fill, ws, hs)
    return pic(ptr, size, fmt, width, height, ws, hs), ptr


def write_nv12(buf: np.ndarray, planes, ws: int, hs: int) -> None:
    y, u, v = planes
    h, w = y.shape
    buf[: ws * hs].reshape(hs, ws)[:h, :w] = y
    uv = buf[ws * hs : ws * hs * 3 // 2].reshape(hs // 2, ws)
    uv[: h // 2, 0:w:2] = u
    uv[: h // 2, 1:w:2] = v


def read_nv12(desc: int, nv21: bool = False):
    """(y, u, v) of the picture a pic desc describes (its width, height and strides)."""
    w, h = M.dvpp_get_pic_desc_width(desc), M.dvpp_get_pic_desc_height(desc)
    ws, hs = M.dvpp_get_pic_desc_width_stride(desc), M.dvpp_get_pic_desc_height_stride(desc)
    buf = np.frombuffer(acl.util.ptr_to_bytes(M.dvpp_get_pic_desc_data(desc), ws * hs * 3 // 2), np.uint8)
    y = buf[: ws * hs].reshape(hs, ws)[:h, :w]
    uv = buf[ws * hs :].reshape(hs // 2, ws)[: h // 2, :w]
    u, v = uv[:, 0::2], uv[:, 1::2]
    return (y, v, u) if nv21 else (y, u, v)


def nv12_to_rgb(y, u, v) -> np.ndarray:
    """RGB of NV12 planes, chroma brought to full size bilinearly (for comparisons with Pillow's RGB)."""
    from PIL import Image

    h, w = y.shape
    up = [
        np.asarray(Image.fromarray(np.ascontiguousarray(c)).resize((w, h), Image.Resampling.BILINEAR)) for c in (u, v)
    ]
    return color.yuv_to_rgb(y, *up)


def planes_of(rgb: np.ndarray):
    """NV12 planes of an RGB picture (chroma box-averaged 2x2)."""
    y, u, v = color.rgb_to_yuv(rgb)
    h, w = y.shape
    sub = [c.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)).round().astype(np.uint8) for c in (u, v)]
    return y, sub[0], sub[1]
