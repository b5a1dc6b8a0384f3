"""Pictures in memory <-> planes, for every layout the operations read and write."""

from __future__ import annotations

import numpy as np
import pytest

from openacl.media import picture
from openacl.media.formats import LAYOUTS, buffer_size
from openacl.media.formats import PixelFormat as P

RNG = np.random.default_rng(5)


def planes(width: int, height: int, sub: tuple[int, int]) -> picture.Planes:
    y = RNG.integers(0, 256, (height, width), dtype=np.uint8)
    shape = picture.chroma_shape(width, height, sub)
    u, v = (RNG.integers(0, 256, shape, dtype=np.uint8) for _ in range(2))
    return picture.Planes(y, u, v, sub)


@pytest.mark.parametrize(
    "fmt",
    [
        *(P.YUV_SEMIPLANAR_420, P.YVU_SEMIPLANAR_420, P.YUV_SEMIPLANAR_422, P.YVU_SEMIPLANAR_444, P.YUV_SEMIPLANAR_440),
        *(P.YUYV_PACKED_422, P.UYVY_PACKED_422, P.YVYU_PACKED_422, P.VYUY_PACKED_422, P.YUV_PACKED_444),
    ],
)
def test_yuv_layouts_round_trip_exactly(fmt):
    lay = LAYOUTS[fmt]
    width, height = 20, 12
    ws, hs = 64 * lay.bpp, 16
    buf = np.full(buffer_size(fmt, ws, hs), 7, np.uint8)
    original = planes(width, height, picture.target_sub(lay))
    picture.write(buf, lay, ws, hs, original)
    back = picture.read(buf, lay, width, height, ws, hs)
    for a, b in zip((original.y, original.u, original.v), (back.y, back.u, back.v), strict=True):
        assert np.array_equal(a, b)
    assert buf[ws * hs - 1] == 7  # padding is left alone


def test_packed_yuyv_byte_order():
    lay = LAYOUTS[P.YUYV_PACKED_422]
    buf = np.zeros(32 * 2, np.uint8)
    picture.write(
        buf,
        lay,
        32,
        2,
        picture.Planes(
            np.full((2, 2), 1, np.uint8), np.full((2, 1), 2, np.uint8), np.full((2, 1), 3, np.uint8), (2, 1)
        ),
    )
    assert buf[:4].tolist() == [1, 2, 1, 3]


@pytest.mark.parametrize("fmt", [P.RGB_888, P.BGR_888, P.RGBA_8888, P.ARGB_8888])
def test_packed_rgb_round_trips_through_bt601_within_two_levels(fmt):
    lay = LAYOUTS[fmt]
    width, height = 16, 4
    rgb = RNG.integers(30, 220, (height, width, 3), dtype=np.uint8)
    ws = width * lay.bpp
    buf = np.zeros(ws * height, np.uint8)
    pixels = buf.reshape(height, width, lay.bpp)
    for i, c in enumerate(lay.order):
        pixels[..., i] = 255 if c == "a" else rgb[..., "rgb".index(c)]
    read = picture.read(buf, lay, width, height, ws, height)
    out = np.zeros_like(buf)
    picture.write(out, lay, ws, height, read)
    assert np.abs(out.astype(int) - buf).max() <= 2
    if "a" in lay.order:
        assert (out.reshape(height, width, lay.bpp)[..., lay.order.index("a")] == 255).all()


def test_crop_and_write_at_an_offset():
    original = planes(16, 8, (2, 2))
    part = picture.crop(original, 4, 2, 8, 4)
    assert np.array_equal(part.y, original.y[2:6, 4:12]) and np.array_equal(part.u, original.u[1:3, 2:6])
    lay = LAYOUTS[P.YUV_SEMIPLANAR_420]
    buf = np.zeros(32 * 8 * 3 // 2, np.uint8)
    picture.write(buf, lay, 32, 8, part, left=16, top=2)
    back = picture.read(buf, lay, 32, 8, 32, 8)
    assert np.array_equal(back.y[2:6, 16:24], part.y) and np.array_equal(back.v[1:3, 8:12], part.v)
    assert (back.y[:2] == 0).all()


def test_gray_scales_to_neutral_chroma():
    gray = picture.Planes(np.full((4, 4), 50, np.uint8), None, None)
    out = picture.scale(gray, 8, 8, (2, 2), "bilinear")
    assert (out.y == 50).all() and out.u.shape == (4, 4) and (out.u == 128).all()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_interleave_writes_the_chroma_pairs_as_byte_strided_copies_do(dtype, offset):
    """The 16-bit fast path (and the fallback, for other dtypes or an odd start) writes exactly ``out[:, 0::2] =
    first`` and ``out[:, 1::2] = second``, into a strided view of a larger buffer, leaving the padding alone."""
    rng = np.random.default_rng(offset)
    first, second = (rng.integers(0, 256, (5, 7)).astype(dtype) for _ in range(2))
    buf = np.full((5, 32), 0xAB, dtype if dtype is not np.uint8 else np.uint8)
    expected = buf.copy()
    expected[:, offset : offset + 14 : 2] = first
    expected[:, offset + 1 : offset + 14 : 2] = second
    picture.interleave(first, second, buf[:, offset : offset + 14])
    np.testing.assert_array_equal(buf, expected)


def test_regression_interleave_onto_its_own_chroma_keeps_both_components():
    """A VPC crop (or same-format conversion) whose output is its input passes ``interleave`` views of its own
    output: the words pass would have zeroed U before reading it. The pairs come out as they went in."""
    rng = np.random.default_rng(7)
    chroma = rng.integers(1, 256, (4, 16)).astype(np.uint8)
    expected = chroma.copy()
    picture.interleave(chroma[:, 0::2], chroma[:, 1::2], chroma)
    np.testing.assert_array_equal(chroma, expected)
