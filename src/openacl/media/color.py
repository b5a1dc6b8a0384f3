"""YUV <-> RGB with the BT.601 full-range ("wide") matrix DVPP documents as its default (spec §10.2).

    R = Y + 1.402 (V-128)          Y = 0.299 R + 0.587 G + 0.114 B
    G = Y - 0.344 (U-128) - 0.714 (V-128)    U = -0.168 R - 0.331 G + 0.5 B + 128
    B = Y + 1.772 (U-128)          V = 0.5 R - 0.419 G - 0.081 B + 128

Results are rounded half up and clamped to 0..255. The 310's own matrix is undocumented; openacl uses this one
on every generation. JFIF JPEGs hold the same full-range BT.601 YCbCr, so decoding needs no conversion.
(The vendor's RGB->YUV offsets "-0.5" / "+127.5" are the same formula written before a round-half-up step.)
"""

from __future__ import annotations

import numpy as np

_TO_RGB = np.array([[1.0, 0.0, 1.402], [1.0, -0.344, -0.714], [1.0, 1.772, 0.0]], dtype=np.float32)
_TO_YUV = np.array([[0.299, 0.587, 0.114], [-0.168, -0.331, 0.5], [0.5, -0.419, -0.081]], dtype=np.float32)
_YUV_OFFSET = np.array([0.0, 128.0, 128.0], dtype=np.float32)


def _to_u8(values: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(values + 0.5), 0, 255).astype(np.uint8)


def yuv_to_rgb(y: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Full-resolution Y, U, V planes (h, w) -> an (h, w, 3) RGB array."""
    yuv = np.stack([y, u, v], axis=-1).astype(np.float32) - _YUV_OFFSET
    return _to_u8(yuv @ _TO_RGB.T)


def rgb_to_yuv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An (h, w, 3) RGB array -> full-resolution Y, U, V planes."""
    yuv = _to_u8(rgb.astype(np.float32) @ _TO_YUV.T + _YUV_OFFSET)
    return yuv[..., 0], yuv[..., 1], yuv[..., 2]
