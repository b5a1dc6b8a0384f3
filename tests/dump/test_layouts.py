"""openacl.dump.layouts: NC1HWC0, NDC1HWC0, FRACTAL_Z and FRACTAL_NZ back to the model's layout, and forth."""

from __future__ import annotations

import numpy as np
import pytest

from openacl.dump import layouts

NCHW, NHWC, ND, NC1HWC0, FRACTAL_Z, HWCN, FRACTAL_NZ, NCDHW, NDC1HWC0 = 0, 1, 2, 3, 4, 16, 29, 30, 32
NC1HWC0_C04, FRACTAL_Z_3D = 12, 33


def _values(shape, dtype=np.float16):
    return (np.arange(np.prod(shape)) % 251 - 125).astype(dtype).reshape(shape)


@pytest.mark.parametrize(
    ("shape", "stored_format", "stored_shape"),
    [
        ((2, 19, 3, 5), NC1HWC0, (2, 2, 3, 5, 16)),  # C padded from 19 to 32
        ((1, 16, 4, 4), NC1HWC0, (1, 1, 4, 4, 16)),
        ((2, 19, 2, 3, 5), NDC1HWC0, (2, 2, 2, 3, 5, 16)),
        ((2, 3, 5, 7), NC1HWC0_C04, (2, 1, 5, 7, 4)),  # C padded from 3 to 4
        ((40, 3, 2, 3, 3), FRACTAL_Z_3D, (18, 3, 16, 16)),  # D*C1*H*W = 2*1*3*3
        ((40, 3, 3, 3), FRACTAL_Z, (9, 3, 16, 16)),  # N padded to 48, C to 16
        ((16, 32, 1, 1), FRACTAL_Z, (2, 1, 16, 16)),
        ((17, 33), FRACTAL_NZ, (3, 2, 16, 16)),  # (W1, H1, H0, W0)
        ((3, 4, 17, 33), FRACTAL_NZ, (3, 4, 3, 2, 16, 16)),
        ((7,), FRACTAL_NZ, (1, 1, 16, 16)),
    ],
)
def test_round_trip_with_padding(shape, stored_format, stored_shape):
    array = _values(shape)
    stored = layouts.from_original(array, stored_format)
    assert stored.shape == stored_shape
    assert stored.size > array.size or stored.size == array.size
    back = layouts.to_original(stored, stored_format, shape)
    assert back.shape == shape and back.dtype == array.dtype
    np.testing.assert_array_equal(back, array)
    assert np.count_nonzero(stored) == np.count_nonzero(array)  # the padding is zeros


def test_nc1hwc0_element_positions():
    array = _values((1, 20, 2, 3))
    stored = layouts.from_original(array, NC1HWC0)
    for n, c, h, w in [(0, 0, 0, 0), (0, 17, 1, 2), (0, 15, 0, 1), (0, 16, 1, 0)]:
        assert stored[n, c // 16, h, w, c % 16] == array[n, c, h, w]


def test_fractal_z_element_positions():
    n_, c_, h_, w_ = 20, 18, 3, 2
    array = _values((n_, c_, h_, w_))
    stored = layouts.from_original(array, FRACTAL_Z)
    for n, c, h, w in [(0, 0, 0, 0), (19, 17, 2, 1), (16, 3, 1, 0), (5, 16, 0, 1)]:
        assert stored[(c // 16) * h_ * w_ + h * w_ + w, n // 16, n % 16, c % 16] == array[n, c, h, w]


def test_fractal_z_3d_element_positions():
    n_, c_, d_, h_, w_ = 20, 18, 2, 3, 2
    array = _values((n_, c_, d_, h_, w_))
    stored = layouts.from_original(array, FRACTAL_Z_3D)
    c1 = 2
    for n, c, d, h, w in [(0, 0, 0, 0, 0), (19, 17, 1, 2, 1), (16, 3, 1, 1, 0), (5, 16, 0, 0, 1)]:
        row = d * c1 * h_ * w_ + (c // 16) * h_ * w_ + h * w_ + w
        assert stored[row, n // 16, n % 16, c % 16] == array[n, c, d, h, w]


def test_nc1hwc0_c04_element_positions():
    array = _values((1, 6, 2, 3))
    stored = layouts.from_original(array, NC1HWC0_C04)
    assert stored.shape == (1, 2, 2, 3, 4)
    for n, c, h, w in [(0, 0, 0, 0), (0, 5, 1, 2), (0, 3, 0, 1), (0, 4, 1, 0)]:
        assert stored[n, c // 4, h, w, c % 4] == array[n, c, h, w]


def test_fractal_nz_element_positions():
    array = _values((2, 20, 35))
    stored = layouts.from_original(array, FRACTAL_NZ)
    for b, r, c in [(0, 0, 0), (1, 19, 34), (0, 16, 3), (1, 5, 32)]:
        assert stored[b, c // 16, r // 16, r % 16, c % 16] == array[b, r, c]


def test_c0_per_dtype():
    assert layouts.default_c0(np.float16) == layouts.default_c0(np.float32) == 16
    assert layouts.default_c0(np.int8) == layouts.default_c0(np.uint8) == 32
    int8 = layouts.from_original(np.ones((1, 40, 2, 2), np.int8), NC1HWC0)
    assert int8.shape == (1, 2, 2, 2, 32)
    # the reader takes C0 from the stored shape, whatever it is
    fp32_c0_8 = layouts.from_original(_values((1, 12, 2, 2), np.float32), NC1HWC0, c0=8)
    assert fp32_c0_8.shape == (1, 2, 2, 2, 8)
    np.testing.assert_array_equal(
        layouts.to_original(fp32_c0_8, NC1HWC0, (1, 12, 2, 2)), _values((1, 12, 2, 2), np.float32)
    )


def test_plain_formats_permute_and_nd_reshapes():
    array = _values((2, 3, 4, 5))
    nhwc = array.transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(layouts.to_original(nhwc, NHWC, None, NCHW), array)
    np.testing.assert_array_equal(layouts.to_layout(array, "NCHW", "HWCN"), array.transpose(2, 3, 1, 0))
    assert layouts.to_layout(array, "NCHW", "ND") is array
    assert layouts.to_original(array.reshape(-1), ND, (2, 3, 4, 5)).shape == (2, 3, 4, 5)
    assert layouts.original_layout(NC1HWC0) == "NCHW" and layouts.original_layout(FRACTAL_NZ) == "ND"
    assert layouts.original_layout(NC1HWC0, NHWC) == "NHWC"


def test_nc1hwc0_of_an_nhwc_original():
    array = _values((1, 4, 5, 19))  # NHWC
    stored = layouts.from_original(array.transpose(0, 3, 1, 2), NC1HWC0)
    np.testing.assert_array_equal(layouts.to_original(stored, NC1HWC0, array.shape, NHWC), array)


@pytest.mark.parametrize(
    ("stored", "stored_format", "original", "match"),
    [
        (np.zeros((1, 1, 2, 2, 16)), NC1HWC0, (1, 40, 2, 2), "does not fit"),
        (np.zeros((1, 1, 2, 2, 16)), NC1HWC0, None, "needs its original shape"),
        (np.zeros((2, 2)), NC1HWC0, (1, 2, 2), "5-D"),
        (np.zeros((9, 3, 16, 16)), FRACTAL_Z, (80, 3, 3, 3), "does not fit"),
        (np.zeros((3, 2, 16, 16)), FRACTAL_NZ, (40, 33), "does not fit"),
        (np.zeros(6), 13, (1, 6), "cannot be converted"),  # FRACTAL_Z_C04
        (np.zeros(6), ND, (4, 2), "does not hold"),
    ],
)
def test_layouts_that_do_not_fit_are_layout_errors(stored, stored_format, original, match):
    with pytest.raises(layouts.LayoutError, match=match):
        layouts.to_original(stored, stored_format, original)
    assert issubclass(layouts.LayoutError, ValueError)


def test_format_numbers_and_unknown_names():
    assert layouts.format_number("FORMAT_NC1HWC0") == 3 and layouts.format_number("fractal_nz") == 29
    with pytest.raises(layouts.LayoutError):
        layouts.format_number("FRACTAL_ZZZ")
    with pytest.raises(layouts.LayoutError):
        layouts.from_original(np.zeros(4), 13)
