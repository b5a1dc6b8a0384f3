"""Every integer a DVPP, VDEC or VENC desc setter takes, at the boundaries (0, -1, 2**31, 2**32, 2**63, 2**64):
the setter stores it or refuses it, and the operations that read it answer a documented code, never an internal
error (500000 / 507000) or a traceback. (VENC's own settings: tests/media/test_venc.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import acl
from tests.media.helpers import M, nv12_pic, planes_of, to_device
from tests.media.images import jpeg_bytes, photo, png_bytes
from tests.media.video_clips import ReportThread, encode_clip

BOUNDARIES = [0, -1, 2**31, 2**32, 2**63, 2**64, 2**31 - 1, 2**32 - 1]
INTERNAL = ("500000", "507000", "Traceback")


def parsed_code(setter, handle: int, value: int) -> int | None:
    """The setter's code, None if its parse refused the value (pyACL's TypeError, for 2**64 and above)."""
    try:
        return setter(handle, value)
    except TypeError:
        return None


def set_or_parse_error(setter, handle: int, value: int) -> bool:
    """True if the setter stored the value."""
    code = parsed_code(setter, handle, value)
    assert code in (None, 0, 100000), code
    return code == 0


def no_internal_error(acl_log) -> None:
    assert not [r.getMessage() for r in acl_log.records if any(s in r.getMessage() for s in INTERNAL)]


def picture_operations(channel: int, stream: int, src: int, dst: int) -> list[int]:
    jpeg, png = jpeg_bytes(photo(64, 64)), png_bytes(photo(64, 64))
    size = np.array([1 << 20], np.uint32).tobytes()
    out, _ = M.dvpp_malloc(1 << 20)
    config = M.dvpp_create_jpege_config()
    return [
        M.dvpp_vpc_resize_async(channel, src, dst, M.dvpp_create_resize_config(), stream),
        M.dvpp_vpc_crop_async(channel, src, dst, M.dvpp_create_roi_config(0, 31, 0, 31), stream),
        M.dvpp_jpeg_decode_async(channel, to_device(jpeg), len(jpeg), dst, stream),
        M.dvpp_png_decode_async(channel, to_device(png), len(png), dst, stream),
        M.dvpp_jpeg_predict_enc_size(src, config)[-1],
        M.dvpp_jpeg_encode_async(channel, src, out, acl.util.bytes_to_ptr(size), config, stream),
        acl.rt.synchronize_stream(stream),
    ]


@pytest.mark.parametrize("field", ["data", "size", "format", "width", "height", "width_stride", "height_stride"])
def test_every_pic_desc_field_at_the_integer_boundaries(channel, stream, acl_log, field):
    setter = getattr(M, f"dvpp_set_pic_desc_{field}")
    for value in BOUNDARIES:
        for side in ("input", "output"):
            src, _ = nv12_pic(64, 64, fill=planes_of(photo(64, 64)))
            dst, _ = nv12_pic(64, 64)
            if not set_or_parse_error(setter, src if side == "input" else dst, value):
                continue
            acl_log.clear()
            codes = picture_operations(channel, stream, src, dst)
            assert set(codes) <= {0, 100000, 100027, 500001, 148052}, (value, side, codes)
            no_internal_error(acl_log)
            assert acl.rt.synchronize_stream(stream) == 0  # the stream goes on


def test_roi_resize_jpege_and_channel_settings_at_the_integer_boundaries(channel, stream, acl_log):
    for value in BOUNDARIES:
        acl_log.clear()
        for corners in [(value, 31, 0, 31), (0, value, 0, value), (0, 31, value, 31)]:
            try:
                roi = M.dvpp_create_roi_config(*corners)
            except TypeError:
                continue
            src, _ = nv12_pic(64, 64, fill=planes_of(photo(64, 64)))
            dst, _ = nv12_pic(64, 64)
            assert M.dvpp_vpc_crop_async(channel, src, dst, roi, stream) in (0, 100000)
            assert acl.rt.synchronize_stream(stream) == 0
        for make, setter in [
            (M.dvpp_create_resize_config, M.dvpp_set_resize_config_interpolation),
            (M.dvpp_create_jpege_config, M.dvpp_set_jpege_config_level),
            (M.dvpp_create_channel_desc, M.dvpp_set_channel_desc_mode),
        ]:
            assert parsed_code(setter, make(), value) in (None, 0, 100000)
        no_internal_error(acl_log)


@pytest.fixture(scope="module")
def h264_frame() -> bytes:
    return encode_clip("libx264", 1)[0]


def _vdec_desc(thread: ReportThread) -> int:
    desc = M.vdec_create_channel_desc()
    M.vdec_set_channel_desc_thread_id(desc, thread.tid)
    M.vdec_set_channel_desc_callback(desc, lambda *args: None)
    M.vdec_set_channel_desc_entype(desc, 2)
    M.vdec_set_channel_desc_out_pic_format(desc, 1)
    return desc


def _send(desc: int, frame: bytes, stream_field: str | None = None, value: int = 0) -> int:
    stream_desc = M.dvpp_create_stream_desc()
    M.dvpp_set_stream_desc_data(stream_desc, to_device(frame))
    M.dvpp_set_stream_desc_size(stream_desc, len(frame))
    if stream_field is not None and not set_or_parse_error(
        getattr(M, f"dvpp_set_stream_desc_{stream_field}"), stream_desc, value
    ):
        return 0
    out = M.dvpp_create_pic_desc()
    buffer, _ = M.dvpp_malloc(1 << 17)
    M.dvpp_set_pic_desc_data(out, buffer)
    M.dvpp_set_pic_desc_size(out, 1 << 17)
    return M.vdec_send_frame(desc, stream_desc, out, M.vdec_create_frame_config(), None)


@pytest.mark.parametrize(
    "field", ["channel_id", "out_pic_width", "out_pic_height", "ref_frame_num", "out_mode", "bit_depth"]
)
def test_every_vdec_channel_setting_at_the_integer_boundaries(ctx, acl_log, h264_frame, field):
    thread = ReportThread(ctx)
    for value in BOUNDARIES:
        desc = _vdec_desc(thread)
        acl_log.clear()
        if set_or_parse_error(getattr(M, f"vdec_set_channel_desc_{field}"), desc, value):
            ret = M.vdec_create_channel(desc)
            assert ret in (0, 100000), (value, ret)
            if ret == 0:
                assert _send(desc, h264_frame) in (0, 100000)
                assert M.vdec_destroy_channel(desc) == 0
        no_internal_error(acl_log)
        assert M.vdec_destroy_channel_desc(desc) == 0
    thread.close()


@pytest.mark.parametrize("field", ["data", "size", "format", "timestamp", "eos"])
def test_every_vdec_stream_desc_field_at_the_integer_boundaries(ctx, acl_log, h264_frame, field):
    thread = ReportThread(ctx)
    for value in BOUNDARIES:
        desc = _vdec_desc(thread)
        assert M.vdec_create_channel(desc) == 0
        acl_log.clear()
        assert _send(desc, h264_frame, field, value) in (0, 100000)
        assert M.vdec_destroy_channel(desc) == 0
        no_internal_error(acl_log)
        assert M.vdec_destroy_channel_desc(desc) == 0
    thread.close()
