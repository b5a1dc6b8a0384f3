"""Bad input: each case gets DVPP's code and one log line, the interpreter survives and the stream goes on."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from tests.conftest import hold_stream
from tests.media.helpers import M, nv12_pic, pic, planes_of, to_device
from tests.media.images import jpeg_bytes, photo, png_bytes

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
FORMAT = AclCode.ACL_ERROR_FORMAT_NOT_MATCH
FAILURE = AclCode.ACL_ERROR_FAILURE


def errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def task_failures(caplog, task: str) -> int:
    """The one line a failed task logs (the stream's); the only other error line is the synchronize's return."""
    lines = errors(caplog)
    failed = [line for line in lines if f"dvpp {task} failed" in line]
    assert all(line in failed or line.startswith("acl.rt.synchronize_stream") for line in lines), lines
    return len(failed)


def stream_still_works(stream) -> None:
    data = b"still alive"
    dev, _ = M.dvpp_malloc(len(data))
    assert acl.rt.memcpy_async(dev, len(data), acl.util.bytes_to_ptr(data), len(data), 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(dev, len(data)) == data


def decode(channel, stream, data: bytes, size: int = 1 << 20, fmt: int = 1) -> tuple[int, int]:
    out, _ = M.dvpp_malloc(size)
    desc = pic(out, size, fmt)
    return M.dvpp_jpeg_decode_async(channel, to_device(data), len(data), desc, stream), desc


GOOD = jpeg_bytes(photo(96, 64))


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("truncated", GOOD[: len(GOOD) // 2], FAILURE),
        ("scan cut off", GOOD[:-300], FAILURE),
        ("not a jpeg", b"GIF89a" + bytes(200), FAILURE),
        ("header cut short", GOOD[:100], FAILURE),
        ("progressive", jpeg_bytes(photo(96, 64), progressive=True), AclCode.ACL_ERROR_UNSUPPORTED_JPEG),
        ("too small", jpeg_bytes(photo(16, 64)), INVALID),
        ("too large for the buffer", GOOD, INVALID),
    ],
)
def test_a_jpeg_that_does_not_decode_fails_its_task_with_one_line(channel, stream, acl_log, name, data, code):
    acl_log.clear()
    ret, desc = decode(channel, stream, data, size=4096 if name == "too large for the buffer" else 1 << 20)
    assert ret == 0  # the data is device memory: DVPP reads it when the task runs
    assert acl.rt.synchronize_stream(stream) == code
    assert M.dvpp_get_pic_desc_ret_code(desc) == 1
    assert task_failures(acl_log, "jpeg_decode") == 1
    stream_still_works(stream)


@pytest.mark.parametrize(
    ("data", "code"),
    [(GOOD[:100], FAILURE), (b"\x00" * 64, FAILURE), (jpeg_bytes(photo(8000, 8))[:2000], 0)],
)
def test_header_queries_on_bad_bytes(data, code):
    result = M.dvpp_jpeg_get_image_info(acl.util.bytes_to_ptr(data), len(data))
    assert result[-1] == code
    assert M.dvpp_jpeg_get_image_info(0, 10) == (0, 0, 0, INVALID)
    assert M.dvpp_jpeg_get_image_info(acl.util.bytes_to_ptr(data), len(data) + 4096) == (0, 0, 0, INVALID)


def test_corrupt_and_truncated_png(channel, stream, acl_log):
    data = png_bytes(photo(64, 64))
    bad = M.dvpp_png_get_image_info(acl.util.bytes_to_ptr(data[:20]), 20)
    assert bad == (0, 0, 0, FAILURE)
    cut = data[: len(data) // 2]
    out, _ = M.dvpp_malloc(1 << 16)
    desc = pic(out, 1 << 16, 12)
    acl_log.clear()
    assert M.dvpp_png_decode_async(channel, to_device(cut), len(cut), desc, stream) == 0
    assert acl.rt.synchronize_stream(stream) == FAILURE
    assert task_failures(acl_log, "png_decode") == 1 and M.dvpp_get_pic_desc_ret_code(desc) == 1
    stream_still_works(stream)


def vpc_pair(src_w=64, src_h=32, **dst):
    src, _ = nv12_pic(src_w, src_h, fill=planes_of(photo(src_w, src_h)))
    out, _ = nv12_pic(dst.get("w", 32), dst.get("h", 16))
    return src, out


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("width", 8, INVALID),
        ("height", 4, INVALID),
        ("width", 4097, INVALID),
        ("width_stride", 72, INVALID),  # not a multiple of 16
        ("width_stride", 48, INVALID),  # less than the width
        ("height_stride", 33, INVALID),
        ("size", 100, INVALID),
        ("format", 12, 0),  # RGB888 input is fine (its stride check follows)
        ("format", 18, FORMAT),
        ("data", 0, INVALID),
        ("data", 12345, INVALID),
    ],
)
def test_bad_input_pictures_are_refused_at_the_call(channel, stream, acl_log, field, value, code):
    src, out = vpc_pair()
    assert getattr(M, f"dvpp_set_pic_desc_{field}")(src, value) == 0
    cfg = M.dvpp_create_resize_config()
    acl_log.clear()
    ret = M.dvpp_vpc_resize_async(channel, src, out, cfg, stream)
    if field == "format" and value == 12:
        assert ret == INVALID  # a 64-byte stride cannot hold 64 RGB pixels
    else:
        assert ret == code
    assert len(errors(acl_log)) == 1 and "acl.media.dvpp_vpc_resize_async" in errors(acl_log)[0]
    stream_still_works(stream)


def test_310_output_formats_and_scale_limits(channel, stream):
    src, out = vpc_pair()
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_set_pic_desc_format(out, 0) == 0
    assert M.dvpp_vpc_resize_async(channel, src, out, cfg, stream) == FORMAT
    big, _ = nv12_pic(1040, 16)
    assert M.dvpp_vpc_resize_async(channel, src, big, cfg, stream) == INVALID  # 64 -> 1040 is more than 16x


@pytest.mark.parametrize(
    ("roi", "code"),
    [
        ((1, 31, 0, 15), INVALID),  # odd left
        ((0, 30, 0, 15), INVALID),  # even right
        ((0, 31, 1, 15), INVALID),  # odd top
        ((0, 31, 0, 14), INVALID),  # even bottom
        ((0, 65, 0, 15), INVALID),  # outside the 64-wide input
        ((0, 31, 0, 33), INVALID),  # outside the 32-high input
        ((0, 5, 0, 15), INVALID),  # narrower than 10
        ((30, 11, 0, 15), INVALID),  # empty
        ((0, 31, 0, 15), 0),
    ],
)
def test_crop_rois_on_the_310(channel, stream, roi, code):
    src, out = vpc_pair()
    handle = M.dvpp_create_roi_config(*roi)
    assert M.dvpp_vpc_crop_async(channel, src, out, handle, stream) == code
    assert acl.rt.synchronize_stream(stream) == 0


def test_odd_rois_are_fine_on_the_310P(channel, stream, monkeypatch):
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310P3")
    src, out = vpc_pair()
    handle = M.dvpp_create_roi_config(1, 30, 1, 14)
    assert M.dvpp_vpc_crop_async(channel, src, out, handle, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0


def test_paste_rules(channel, stream):
    src, out = vpc_pair(w=64, h=32)
    crop = M.dvpp_create_roi_config(0, 31, 0, 15)
    for paste, code in [((8, 39, 0, 15), INVALID), ((16, 47, 0, 15), 0), ((48, 79, 0, 15), INVALID)]:
        roi = M.dvpp_create_roi_config(*paste)
        assert M.dvpp_vpc_crop_and_paste_async(channel, src, out, crop, roi, stream) == code
    assert M.dvpp_vpc_crop_and_paste_async(channel, src, out, crop, 0, stream) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0


def test_wrong_kind_destroyed_and_missing_handles(channel, stream, acl_log):
    src, out = vpc_pair()
    cfg = M.dvpp_create_resize_config()
    roi = M.dvpp_create_roi_config(0, 31, 0, 15)
    cases = [
        (lambda: M.dvpp_vpc_resize_async(channel, roi, out, cfg, stream), INVALID),  # a ROI as a picture
        (lambda: M.dvpp_vpc_resize_async(channel, src, out, roi, stream), INVALID),  # a ROI as a resize config
        (lambda: M.dvpp_vpc_resize_async(src, src, out, cfg, stream), INVALID),  # a picture as the channel
        (lambda: M.dvpp_vpc_resize_async(channel, src, out, cfg, src), INVALID),  # a picture as the stream
        (lambda: M.dvpp_vpc_crop_async(channel, src, out, cfg, stream), INVALID),
        (lambda: M.dvpp_vpc_resize_async(channel, 0, out, cfg, stream), INVALID),
    ]
    for call, code in cases:
        acl_log.clear()
        assert call() == code
        assert len(errors(acl_log)) == 1
    assert M.dvpp_destroy_pic_desc(src) == 0
    assert M.dvpp_vpc_resize_async(channel, src, out, cfg, stream) == INVALID
    other = M.dvpp_create_channel_desc()
    assert M.dvpp_vpc_resize_async(other, out, out, cfg, stream) == INVALID  # no channel created on it
    assert M.dvpp_set_channel_desc_mode(other, 2) == 0 and M.dvpp_create_channel(other) == 0
    src2, out2 = vpc_pair()
    assert M.dvpp_vpc_resize_async(other, src2, out2, cfg, stream) == INVALID  # a JPEGD-only channel
    assert M.dvpp_destroy_channel(other) == 0 and M.dvpp_destroy_channel_desc(other) == 0
    stream_still_works(stream)


def test_memory_freed_after_the_call_cannot_crash_the_task(channel, stream, gate):
    """The task keeps the memory mapped; the output, no longer a live allocation when it runs, fails it (507053)."""
    src, out = vpc_pair()
    src_ptr, out_ptr = M.dvpp_get_pic_desc_data(src), M.dvpp_get_pic_desc_data(out)
    cfg = M.dvpp_create_resize_config()
    hold_stream(stream, gate)
    assert M.dvpp_vpc_resize_async(channel, src, out, cfg, stream) == 0
    assert M.dvpp_free(src_ptr) == 0 and M.dvpp_free(out_ptr) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR
    stream_still_works(stream)


def test_encode_refuses_bad_inputs(channel, stream):
    desc, _ = nv12_pic(64, 32, 64, 32)
    cfg = M.dvpp_create_jpege_config()
    out, _ = M.dvpp_malloc(1 << 16)
    holder = np.array([1 << 16], np.uint32).tobytes()
    size_ptr = acl.util.bytes_to_ptr(holder)
    assert M.dvpp_jpeg_encode_async(channel, desc, out, size_ptr, cfg, stream) == 0
    assert M.dvpp_jpeg_encode_async(channel, desc, out, 0, cfg, stream) == INVALID
    zero = np.zeros(1, np.uint32).tobytes()
    assert M.dvpp_jpeg_encode_async(channel, desc, out, acl.util.bytes_to_ptr(zero), cfg, stream) == INVALID
    assert M.dvpp_jpeg_encode_async(channel, desc, out, size_ptr, desc, stream) == INVALID
    assert M.dvpp_set_pic_desc_format(desc, 12) == 0
    assert M.dvpp_jpeg_encode_async(channel, desc, out, size_ptr, cfg, stream) == FORMAT
    assert M.dvpp_set_pic_desc_format(desc, 1) == 0 and M.dvpp_set_pic_desc_width(desc, 63) == 0
    assert M.dvpp_jpeg_encode_async(channel, desc, out, size_ptr, cfg, stream) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0


def two_frame_headers(width: int, height: int, claimed: int) -> bytes:
    """A JPEG of ``width`` x ``height`` whose first frame header claims ``claimed`` x ``claimed``: the codec obeys
    the second, the real one."""
    good = jpeg_bytes(photo(width, height))
    at = good.index(b"\xff\xc0")
    length = int.from_bytes(good[at + 2 : at + 4], "big")
    fake = bytearray(good[at : at + 2 + length])
    fake[5:9] = claimed.to_bytes(2, "big") * 2
    return good[:at] + bytes(fake) + good[at:]


def test_regression_jpegd_first_frame_header_larger_than_the_decoded_picture_left_stale_bytes(channel, stream, acl_log):
    data = two_frame_headers(32, 32, 64)
    assert M.dvpp_jpeg_get_image_info(acl.util.bytes_to_ptr(data), len(data)) == (64, 64, 3, 0)
    size = 128 * 64 * 3 // 2
    out, _ = M.dvpp_malloc(size)
    assert acl.rt.memset(out, size, 0xAB, size) == 0
    desc = pic(out, size, 1)
    acl_log.clear()
    assert M.dvpp_jpeg_decode_async(channel, to_device(data), len(data), desc, stream) == 0
    assert acl.rt.synchronize_stream(stream) == FAILURE  # not success over a quarter of a picture
    assert M.dvpp_get_pic_desc_ret_code(desc) == 1
    assert task_failures(acl_log, "jpeg_decode") == 1
    assert "frame header says 64x64, its data decodes to 32x32" in "\n".join(errors(acl_log))
    assert M.dvpp_get_pic_desc_width(desc) == 0  # no geometry written back for a picture that was not
    stream_still_works(stream)


def test_pngd_checks_the_picture_when_its_task_runs(channel, stream, acl_log):
    out, _ = M.dvpp_malloc(1 << 16)
    for data, size in [(png_bytes(photo(16, 64)), 1 << 16), (png_bytes(photo(64, 64)), 4096)]:  # too small; no room
        desc = pic(out, size, 12)
        acl_log.clear()
        assert M.dvpp_png_decode_async(channel, to_device(data), len(data), desc, stream) == 0
        assert acl.rt.synchronize_stream(stream) == INVALID
        assert task_failures(acl_log, "png_decode") == 1 and M.dvpp_get_pic_desc_ret_code(desc) == 1
    desc = pic(out, 1 << 16, 1)  # a format PNGD never writes is refused at the call
    assert M.dvpp_png_decode_async(channel, to_device(png_bytes(photo(64, 64))), 100, desc, stream) == FORMAT
    stream_still_works(stream)
