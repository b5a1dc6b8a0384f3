"""Pixel formats and DVPP's buffer-size formulas (spec §4-§5)."""

from __future__ import annotations

import pytest

from openacl.media.formats import PixelFormat as P
from openacl.media.formats import align_up, buffer_size


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (P.YUV_SEMIPLANAR_420, 128 * 16 * 3 // 2),
        (P.YVU_SEMIPLANAR_420, 128 * 16 * 3 // 2),
        (P.YUV_400, 128 * 16 * 3 // 2),
        (P.YUV_SEMIPLANAR_422, 128 * 16 * 2),
        (P.YUV_SEMIPLANAR_440, 128 * 16 * 2),
        (P.YUV_SEMIPLANAR_444, 128 * 16 * 3),
        (P.YUYV_PACKED_422, 128 * 16),
        (P.RGB_888, 128 * 16),
        (P.UNKNOWN, 0),
    ],
)
def test_buffer_sizes(fmt, expected):
    assert buffer_size(fmt, 128, 16) == expected


def test_align_up():
    assert [align_up(v, 16) for v in (0, 1, 16, 17)] == [0, 16, 16, 32]
