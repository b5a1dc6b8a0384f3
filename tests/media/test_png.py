"""PNGD on the 310: header query, size prediction, decode to RGB/RGBA; absent on the 310P."""

from __future__ import annotations

import threading

import numpy as np

import acl
from openacl.errors import AclCode
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task
from tests.media.helpers import M, pic, to_device
from tests.media.images import photo, png_bytes


def test_png_info_predict_and_decode(channel, stream, monkeypatch):
    rgb = photo(70, 40)
    data = png_bytes(rgb)
    ptr = acl.util.bytes_to_ptr(data)
    assert M.dvpp_png_get_image_info(ptr, len(data)) == (70, 40, 3, 0)
    ws, hs = 256, 48  # align128(70 * 3), align16(40)
    assert M.dvpp_png_predict_dec_size(ptr, len(data), 12) == (ws * hs, 0)
    dev = to_device(data)
    out, _ = M.dvpp_malloc(ws * hs)
    desc = pic(out, ws * hs, 10000)
    assert M.dvpp_png_decode_async(channel, dev, len(data), desc, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert M.dvpp_get_pic_desc_format(desc) == 12 and M.dvpp_get_pic_desc_width_stride(desc) == ws
    pixels = np.frombuffer(acl.util.ptr_to_bytes(out, ws * hs), np.uint8).reshape(hs, ws)[:40, :210]
    assert np.array_equal(pixels.reshape(40, 70, 3), rgb)
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310P3")
    assert M.dvpp_png_get_image_info(ptr, len(data)) == (0, 0, 0, AclCode.ACL_ERROR_FEATURE_UNSUPPORTED)


def test_png_with_alpha_decodes_to_rgba(channel, stream):
    rgba = np.dstack([photo(40, 32), np.full((32, 40), 99, np.uint8)])
    data = png_bytes(rgba)
    assert M.dvpp_png_get_image_info(acl.util.bytes_to_ptr(data), len(data)) == (40, 32, 4, 0)
    size, _ = M.dvpp_png_predict_dec_size(acl.util.bytes_to_ptr(data), len(data), 10000)
    assert size == 256 * 32
    out, _ = M.dvpp_malloc(size)
    desc = pic(out, size, 10000)
    assert M.dvpp_png_decode_async(channel, to_device(data), len(data), desc, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert M.dvpp_get_pic_desc_format(desc) == 16
    pixels = np.frombuffer(acl.util.ptr_to_bytes(out, size), np.uint8).reshape(32, 256)[:, :160]
    assert np.array_equal(pixels.reshape(32, 40, 4), rgba)


def test_regression_pngd_decoded_a_queued_picture_with_the_previous_pictures_geometry(channel, stream):
    first, second = photo(64, 32, seed=1), photo(32, 64, seed=2)  # same pixel count, same output size
    first_png, second_png = png_bytes(first), png_bytes(second)
    capacity = max(len(first_png), len(second_png))
    dev, _ = M.dvpp_malloc(capacity)  # one input buffer, reused as acllite reuses its own
    assert acl.rt.memcpy(dev, len(first_png), acl.util.bytes_to_ptr(first_png), len(first_png), 1) == 0
    size = 256 * 32  # align128(64 * 3) x align16(32) == align128(32 * 3) x align16(64)
    out, _ = M.dvpp_malloc(size)
    desc = pic(out, size, 12)
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", gate.wait))
    src = acl.util.bytes_to_ptr(second_png)
    assert acl.rt.memcpy_async(dev, len(second_png), src, len(second_png), 1, stream) == 0  # arrives later
    assert M.dvpp_png_decode_async(channel, dev, len(second_png), desc, stream) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    geometry = [getattr(M, f"dvpp_get_pic_desc_{name}")(desc) for name in ("width", "height", "width_stride")]
    assert geometry == [32, 64, 128]
    pixels = np.frombuffer(acl.util.ptr_to_bytes(out, 128 * 64), np.uint8).reshape(64, 128)[:, :96]
    assert np.array_equal(pixels.reshape(64, 32, 3), second)
