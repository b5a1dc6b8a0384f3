"""VPC: resize, crop, crop-and-paste and the batch forms, checked against the planes they should produce."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import acl
from openacl.errors import AclCode
from openacl.media import color
from tests.media.helpers import M, nv12_pic, pic, planes_of, read_nv12
from tests.media.images import photo

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def pillow(plane: np.ndarray, width: int, height: int, method=Image.Resampling.BILINEAR) -> np.ndarray:
    return np.asarray(Image.fromarray(np.ascontiguousarray(plane)).resize((width, height), method))


def source(width=320, height=240, ws=None, hs=None):
    planes = planes_of(photo(width, height))
    desc, _ = nv12_pic(width, height, ws, hs, fill=planes)
    return desc, planes


def test_resize_scales_each_plane_with_the_bilinear_filter(channel, stream):
    src, (y, u, v) = source(320, 240, ws=384, hs=256)  # strides larger than needed (a JPEGD output's)
    dst, _ = nv12_pic(224, 224)
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_vpc_resize_async(channel, src, dst, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    out = read_nv12(dst)
    assert np.array_equal(out[0], pillow(y, 224, 224))
    assert np.array_equal(out[1], pillow(u, 112, 112)) and np.array_equal(out[2], pillow(v, 112, 112))
    assert M.dvpp_get_pic_desc_ret_code(dst) == 0


@pytest.mark.parametrize(("mode", "check"), [(2, "nearest"), (4, "tf_nearest"), (3, "tf_bilinear")])
def test_other_interpolations(channel, stream, mode, check):
    src, (y, _u, _v) = source(64, 32)
    dst, _ = nv12_pic(128, 64)
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_set_resize_config_interpolation(cfg, mode) == 0
    assert M.dvpp_vpc_resize_async(channel, src, dst, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    out = read_nv12(dst)[0].astype(int)
    if check == "nearest":
        assert np.array_equal(out, pillow(y, 128, 64, Image.Resampling.NEAREST))
    elif check == "tf_nearest":
        assert np.array_equal(out, y.repeat(2, 0).repeat(2, 1))  # an exact 2x: floor(dst / 2)
    else:
        assert np.array_equal(out[::2, ::2], y)  # src = dst * in / out: even outputs sit on input pixels
        assert np.abs(out[0, 1:-1:2] - (y[0, :-1].astype(int) + y[0, 1:]) / 2).max() <= 0.5


def test_crop_of_the_same_size_copies_the_area(channel, stream):
    src, (y, u, v) = source()
    dst, _ = nv12_pic(100, 60)
    roi = M.dvpp_create_roi_config(20, 119, 10, 69)
    assert M.dvpp_vpc_crop_async(channel, src, dst, roi, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    oy, ou, ov = read_nv12(dst)
    assert np.array_equal(oy, y[10:70, 20:120])
    assert np.array_equal(ou, u[5:35, 10:60]) and np.array_equal(ov, v[5:35, 10:60])


def test_regression_a_crop_of_a_whole_picture_onto_itself_keeps_its_chroma(channel, stream):
    """The input desc as the output desc: the crop reads views of the very bytes it writes, and U and V come out
    as they went in (a word-wise chroma write had zeroed U)."""
    src, (y, u, v) = source(64, 32)
    roi = M.dvpp_create_roi_config(0, 63, 0, 31)
    assert M.dvpp_vpc_crop_async(channel, src, src, roi, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    oy, ou, ov = read_nv12(src)
    assert np.array_equal(oy, y) and np.array_equal(ou, u) and np.array_equal(ov, v)


def test_crop_and_paste_writes_only_the_paste_area(channel, stream):
    src, (y, _u, _v) = source()
    dst, ptr = nv12_pic(256, 128)
    size = M.dvpp_get_pic_desc_size(dst)
    assert acl.rt.memset(ptr, size, 7, size) == 0
    crop = M.dvpp_create_roi_config(0, 319, 0, 239)
    paste = M.dvpp_create_roi_config(32, 191, 16, 135 - 16)
    assert M.dvpp_vpc_crop_and_paste_async(channel, src, dst, crop, paste, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    oy, ou, _ov = read_nv12(dst)
    assert np.array_equal(oy[16:120, 32:192], pillow(y, 160, 104))
    outside = np.ones(oy.shape, bool)
    outside[16:120, 32:192] = False
    assert (oy[outside] == 7).all()
    assert (ou[:8] == 7).all() and (ou[8:60, 16:96] != 7).any()


def test_crop_resize_paste_uses_its_resize_config(channel, stream):
    src, (y, _u, _v) = source(64, 32)
    dst, _ = nv12_pic(128, 64)
    crop = M.dvpp_create_roi_config(0, 63, 0, 31)
    paste = M.dvpp_create_roi_config(0, 127, 0, 63)
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_set_resize_config_interpolation(cfg, 4) == 0
    assert M.dvpp_vpc_crop_resize_paste_async(channel, src, dst, crop, paste, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(read_nv12(dst)[0], y.repeat(2, 0).repeat(2, 1))


def fill_member(batch: int, index: int, width: int, height: int, planes=None) -> int:
    member = M.dvpp_get_pic_desc(batch, index)
    desc, _ptr = nv12_pic(width, height, fill=planes)
    for name in ("data", "size", "format", "width", "height", "width_stride", "height_stride"):
        getattr(M, f"dvpp_set_pic_desc_{name}")(member, getattr(M, f"dvpp_get_pic_desc_{name}")(desc))
    M.dvpp_destroy_pic_desc(desc)
    return member


def test_batch_crop_takes_roi_nums_crops_from_each_source_in_order(channel, stream):
    srcs = M.dvpp_create_batch_pic_desc(2)
    first, second = planes_of(photo(128, 64, seed=1)), planes_of(photo(128, 64, seed=2))
    fill_member(srcs, 0, 128, 64, first)
    fill_member(srcs, 1, 128, 64, second)
    dsts = M.dvpp_create_batch_pic_desc(3)
    outs = [fill_member(dsts, i, 32, 16) for i in range(3)]
    rois = [M.dvpp_create_roi_config(0, 31, 0, 15), M.dvpp_create_roi_config(32, 63, 16, 31)]
    rois.append(M.dvpp_create_roi_config(64, 95, 48, 63))
    assert M.dvpp_vpc_batch_crop_async(channel, srcs, [2, 1], dsts, rois, stream) == (dsts, 0)
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(read_nv12(outs[0])[0], first[0][0:16, 0:32])
    assert np.array_equal(read_nv12(outs[1])[0], first[0][16:32, 32:64])
    assert np.array_equal(read_nv12(outs[2])[0], second[0][48:64, 64:96])
    assert [M.dvpp_get_pic_desc_ret_code(o) for o in outs] == [0, 0, 0]


def test_batch_crop_and_paste_and_list_rules(channel, stream):
    srcs = M.dvpp_create_batch_pic_desc(1)
    fill_member(srcs, 0, 128, 64, planes_of(photo(128, 64)))
    dsts = M.dvpp_create_batch_pic_desc(1)
    fill_member(dsts, 0, 64, 32)
    crop, paste = M.dvpp_create_roi_config(0, 31, 0, 15), M.dvpp_create_roi_config(16, 47, 0, 15)
    assert M.dvpp_vpc_batch_crop_and_paste_async(channel, srcs, [1], dsts, [crop], [paste], stream) == (dsts, 0)
    assert acl.rt.synchronize_stream(stream) == 0
    with pytest.raises(ValueError, match="between 1 and 256"):
        M.dvpp_vpc_batch_crop_async(channel, srcs, [1], dsts, [], stream)
    with pytest.raises(TypeError):
        M.dvpp_vpc_batch_crop_async(channel, srcs, (1,), dsts, [crop], stream)
    with pytest.raises(ValueError):
        M.dvpp_vpc_batch_crop_and_paste_async(channel, srcs, [1], dsts, [crop], [], stream)
    assert M.dvpp_vpc_batch_crop_async(channel, srcs, [2], dsts, [crop], stream) == (dsts, INVALID)
    assert M.dvpp_vpc_batch_crop_resize_async(channel, srcs, [1], dsts, [crop], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0


def test_regression_a_failed_batch_call_returned_0_instead_of_the_batch_desc_it_was_given(channel, stream):
    """pyACL returns ``(dst_batch_desc, ret)`` whatever ``ret`` is; the failure paths returned ``(0, ret)``."""
    srcs = M.dvpp_create_batch_pic_desc(1)
    fill_member(srcs, 0, 128, 64, planes_of(photo(128, 64)))
    dsts = M.dvpp_create_batch_pic_desc(1)
    fill_member(dsts, 0, 64, 32)
    crop, paste = M.dvpp_create_roi_config(0, 31, 0, 15), M.dvpp_create_roi_config(16, 47, 0, 15)
    bad_crop = M.dvpp_create_roi_config(0, 31, 0, 15)
    M.dvpp_destroy_roi_config(bad_crop)
    failures = [
        (channel, srcs, [2], dsts, [crop]),  # roi_nums do not add up to the destination batch
        (channel, srcs, [1], dsts, [bad_crop]),  # a destroyed roi config
        (channel, dsts + 12345, [1], dsts, [crop]),  # not a batch desc
    ]
    for args in failures:
        assert M.dvpp_vpc_batch_crop_async(*args, stream) == (dsts, INVALID)
        assert M.dvpp_vpc_batch_crop_and_paste_async(*args, [paste], stream) == (dsts, INVALID)
    assert acl.rt.synchronize_stream(stream) == 0


def test_rgb_output_is_the_310Ps_and_follows_bt601(channel, stream, monkeypatch):
    src, (y, u, v) = source(64, 32)
    ptr, _ = M.dvpp_malloc(64 * 3 * 32)
    dst = pic(ptr, 64 * 3 * 32, 12, 64, 32, 64 * 3, 32)
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_vpc_resize_async(channel, src, dst, cfg, stream) == AclCode.ACL_ERROR_FORMAT_NOT_MATCH
    assert M.dvpp_vpc_convert_color_async(channel, src, dst, stream) == AclCode.ACL_ERROR_FEATURE_UNSUPPORTED
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310P3")
    assert M.dvpp_vpc_convert_color_async(channel, src, dst, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    rgb = np.frombuffer(acl.util.ptr_to_bytes(ptr, 64 * 3 * 32), np.uint8).reshape(32, 64, 3)
    up = [pillow(c, 64, 32) for c in (u, v)]
    assert np.array_equal(rgb, color.yuv_to_rgb(y, *up))


def test_bt601_round_trip_is_within_one_level():
    rgb = photo(64, 64)
    back = color.yuv_to_rgb(*color.rgb_to_yuv(rgb))
    assert np.abs(back.astype(int) - rgb).max() <= 2
    assert color.rgb_to_yuv(np.array([[[255, 255, 255]]], np.uint8))[0][0, 0] == 255
