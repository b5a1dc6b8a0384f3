"""Test pictures: a deterministic photo-like image (smooth shading, texture, hard edges) and its files."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw, ImageFilter


def photo(width: int = 640, height: int = 480, seed: int = 0) -> np.ndarray:
    """An (h, w, 3) RGB picture with what photos have: gradients, blurred shapes, fine texture, sharp edges."""
    rng = np.random.default_rng(seed)
    yy = np.mgrid[0:height, 0:width][0].astype(np.float32)
    sky = np.stack([90 + 80 * yy / height, 140 + 60 * yy / height, 230 - 40 * yy / height], axis=-1)
    image = Image.fromarray(sky.astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(25):
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        r = int(rng.integers(10, max(11, width // 5)))
        fill = tuple(int(c) for c in rng.integers(0, 256, 3))
        if rng.random() < 0.5:
            draw.ellipse((x0 - r, y0 - r, x0 + r, y0 + r), fill=fill)
        else:
            draw.rectangle((x0, y0, x0 + r, y0 + r // 2), fill=fill)
    image = image.filter(ImageFilter.GaussianBlur(1.2))
    pixels = np.asarray(image).astype(np.int16)
    pixels += rng.normal(0, 6, pixels.shape).astype(np.int16)  # sensor noise / texture
    pixels[height // 2 :, : width // 3] = np.array((40, 120, 40)) + rng.integers(
        -30, 30, (height - height // 2, width // 3, 3)
    )
    return np.clip(pixels, 0, 255).astype(np.uint8)


def jpeg_bytes(rgb: np.ndarray, quality: int = 90, subsampling: int | str = "4:2:0", **kwargs) -> bytes:
    out = io.BytesIO()
    mode = "L" if rgb.ndim == 2 else "RGB"
    Image.fromarray(rgb, mode).save(out, "JPEG", quality=quality, subsampling=subsampling, **kwargs)
    return out.getvalue()


def png_bytes(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()
