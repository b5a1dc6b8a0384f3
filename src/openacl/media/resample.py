"""Scaling one 8-bit plane: the filters behind VPC's interpolation values (spec §10.1).

| value | 310 | 310P | openacl |
|---|---|---|---|
| 0 | Huawei's high-order filter (undocumented) | bilinear | ``bilinear`` |
| 1 | bilinear (OpenCV-like) | bilinear | ``bilinear`` |
| 2 | nearest (OpenCV-like) | nearest | ``nearest`` |
| 3 | bilinear, TensorFlow-1 style | unsupported | ``tf_bilinear`` |
| 4 | nearest, TensorFlow-1 style | unsupported | ``tf_nearest`` |

``bilinear`` is Pillow's BILINEAR (a triangle filter on pixel centres that widens with the scale when shrinking,
so downscales are anti-aliased; OpenCV's INTER_LINEAR samples only 2x2 pixels and aliases); ``nearest`` is
Pillow's NEAREST (pixel centres). The TensorFlow-1 modes map ``src = dst * in / out`` with no half-pixel shift:
``tf_nearest`` takes ``floor(src)``, ``tf_bilinear`` blends the two neighbours, rounding half up.
"""

from __future__ import annotations

import numpy as np

from openacl import lazy

Image = lazy.module("PIL.Image")

FILTERS = {0: "bilinear", 1: "bilinear", 2: "nearest", 3: "tf_bilinear", 4: "tf_nearest"}

_PIL = {"bilinear": "BILINEAR", "nearest": "NEAREST"}  # Image.Resampling members by name: PIL loads at a resize


def resize(plane: np.ndarray, width: int, height: int, method: str) -> np.ndarray:
    """``plane`` (h, w) uint8 scaled to (height, width)."""
    h, w = plane.shape
    if (w, h) == (width, height):
        return plane
    if method in _PIL:
        image = Image.fromarray(np.ascontiguousarray(plane))
        return np.asarray(image.resize((width, height), Image.Resampling[_PIL[method]]))
    ys = np.arange(height, dtype=np.float64) * (h / height)
    xs = np.arange(width, dtype=np.float64) * (w / width)
    if method == "tf_nearest":
        return plane[np.minimum(ys.astype(np.intp), h - 1)[:, None], np.minimum(xs.astype(np.intp), w - 1)]
    y0 = np.minimum(ys.astype(np.intp), h - 1)
    x0 = np.minimum(xs.astype(np.intp), w - 1)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    p = plane.astype(np.float64)
    top = p[y0][:, x0] * (1 - fx) + p[y0][:, x1] * fx
    bottom = p[y1][:, x0] * (1 - fx) + p[y1][:, x1] * fx
    return np.clip(np.floor(top * (1 - fy) + bottom * fy + 0.5), 0, 255).astype(np.uint8)
