"""VPC make-border: border configs, the single make-border and the batch crop-resize-make-border, checked against
numpy's own padding of the planes they should produce."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.media import descs, picture
from tests.media.helpers import M, nv12_pic, planes_of, read_nv12
from tests.media.images import photo
from tests.media.test_vpc import fill_member, pillow

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
CONSTANT, REPLICATE, REFLECT, REFLECT_101 = 0, 1, 2, 3


def border(kind=CONSTANT, top=4, bottom=4, left=8, right=8, values=(16, 128, 128)) -> int:
    cfg = M.dvpp_create_border_config()
    assert cfg != 0
    assert M.dvpp_set_border_config_border_type(cfg, kind) == 0
    for side, value in (("top", top), ("bottom", bottom), ("left", left), ("right", right)):
        assert getattr(M, f"dvpp_set_border_config_{side}")(cfg, value) == 0
    for index, value in enumerate(values):
        assert M.dvpp_set_border_config_value(cfg, index, value) == 0
    return cfg


def test_a_border_config_reads_back_what_was_set():
    cfg = border(REFLECT, 2, 4, 6, 8, (1.5, 2.0, 3.25, 4.0))
    assert M.dvpp_get_border_config_border_type(cfg) == REFLECT
    assert [getattr(M, f"dvpp_get_border_config_{s}")(cfg) for s in ("top", "bottom", "left", "right")] == [2, 4, 6, 8]
    assert [M.dvpp_get_border_config_value(cfg, i) for i in range(4)] == [1.5, 2.0, 3.25, 4.0]
    assert M.dvpp_destroy_border_config(cfg) == 0
    assert M.dvpp_destroy_border_config(cfg) == INVALID


def test_border_config_setters_refuse_what_the_struct_cannot_hold(acl_log):
    cfg = M.dvpp_create_border_config()
    assert M.dvpp_set_border_config_border_type(cfg, 4) == INVALID
    assert M.dvpp_set_border_config_top(cfg, 1 << 16) == INVALID
    assert M.dvpp_set_border_config_value(cfg, 4, 1.0) == INVALID
    assert M.dvpp_get_border_config_value(cfg, 4) == 0.0
    assert M.dvpp_get_border_config_top(0xBAD0) == 0
    assert M.dvpp_set_border_config_left(0xBAD0, 2) == INVALID
    assert M.dvpp_get_border_config_border_type(cfg) == CONSTANT  # a refused value leaves the config as it was
    with pytest.raises(TypeError):
        M.dvpp_set_border_config_value(cfg, 0, "1")


@pytest.mark.parametrize(("kind", "mode"), [(REPLICATE, "edge"), (REFLECT, "symmetric"), (REFLECT_101, "reflect")])
def test_make_border_pads_the_picture_as_its_border_type_says(channel, stream, kind, mode):
    y, u, v = planes_of(photo(64, 32))
    src, _ = nv12_pic(64, 32, fill=(y, u, v))
    dst, _ = nv12_pic(80, 40)
    cfg = border(kind, top=4, bottom=4, left=8, right=8)
    assert M.dvpp_vpc_make_border_async(channel, src, dst, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    oy, ou, ov = read_nv12(dst)
    assert np.array_equal(oy, np.pad(y, ((4, 4), (8, 8)), mode=mode))
    assert np.array_equal(ou, np.pad(u, ((2, 2), (4, 4)), mode=mode))
    assert np.array_equal(ov, np.pad(v, ((2, 2), (4, 4)), mode=mode))
    assert M.dvpp_get_pic_desc_ret_code(dst) == 0


def test_a_constant_border_takes_the_configs_yuv_values(channel, stream):
    y, u, v = planes_of(photo(64, 32))
    src, _ = nv12_pic(64, 32, fill=(y, u, v))
    dst, _ = nv12_pic(64, 40)
    assert M.dvpp_vpc_make_border_async(channel, src, dst, border(CONSTANT, 2, 6, 0, 0, (20, 90, 200)), stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    oy, ou, ov = read_nv12(dst)
    assert (oy[:2] == 20).all() and (oy[34:] == 20).all() and np.array_equal(oy[2:34], y)
    assert (ou[:1] == 90).all() and (ov[17:] == 200).all() and np.array_equal(ou[1:17], u)


def test_batch_crop_resize_make_border_scales_each_crop_into_its_output_less_its_border(channel, stream):
    y, u, v = planes_of(photo(128, 64, seed=3))
    srcs = M.dvpp_create_batch_pic_desc(1)
    fill_member(srcs, 0, 128, 64, (y, u, v))
    dsts = M.dvpp_create_batch_pic_desc(2)
    outs = [fill_member(dsts, 0, 96, 64), fill_member(dsts, 1, 64, 64)]
    crops = [M.dvpp_create_roi_config(0, 63, 0, 31), M.dvpp_create_roi_config(64, 127, 32, 63)]
    borders = [border(CONSTANT, 16, 16, 16, 16, (0, 128, 128)), border(REPLICATE, 0, 0, 0, 0)]
    cfg = M.dvpp_create_resize_config()
    ret = M.dvpp_vpc_batch_crop_resize_make_border_async(channel, srcs, [2], dsts, crops, borders, cfg, stream)
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    first = read_nv12(outs[0])[0]
    assert np.array_equal(first[16:48, 16:80], pillow(y[0:32, 0:64], 64, 32))
    assert (first[:16] == 0).all() and (first[:, :16] == 0).all() and (first[48:] == 0).all()
    assert np.array_equal(read_nv12(outs[1])[0], pillow(y[32:64, 64:128], 64, 64))
    assert [M.dvpp_get_pic_desc_ret_code(o) for o in outs] == [0, 0]


def test_make_border_refuses_mismatched_sizes_odd_borders_and_a_missing_config(channel, stream, acl_log):
    src, _ = nv12_pic(64, 32)
    dst, _ = nv12_pic(80, 40)
    assert M.dvpp_vpc_make_border_async(channel, src, dst, border(top=2, bottom=2), stream) == INVALID  # 64x36
    assert M.dvpp_vpc_make_border_async(channel, src, dst, border(top=3, bottom=5), stream) == INVALID  # odd
    assert M.dvpp_vpc_make_border_async(channel, src, dst, 0, stream) == INVALID
    assert M.dvpp_vpc_make_border_async(channel, src, dst, 0xBAD0, stream) == INVALID
    lines = [r.getMessage() for r in acl_log.records if "dvpp_vpc_make_border_async" in r.getMessage()]
    assert len(lines) == 4 and "does not scale" in lines[0] and "not multiples of 2x2" in lines[1]


def test_batch_make_border_list_rules(channel, stream):
    srcs = M.dvpp_create_batch_pic_desc(1)
    fill_member(srcs, 0, 64, 32)
    dsts = M.dvpp_create_batch_pic_desc(1)
    fill_member(dsts, 0, 64, 32)
    crop = M.dvpp_create_roi_config(0, 63, 0, 31)
    call = M.dvpp_vpc_batch_crop_resize_make_border_async
    with pytest.raises(ValueError, match="border configs"):
        call(channel, srcs, [1], dsts, [crop], [border(), border()], 0, stream)
    with pytest.raises(TypeError, match="is not list"):
        call(channel, srcs, [1], dsts, [crop], (border(),), 0, stream)
    assert call(channel, srcs, [1], dsts, [crop], [0], 0, stream) == INVALID
    too_big = border(top=16, bottom=16)  # leaves 64x0
    assert call(channel, srcs, [1], dsts, [crop], [too_big], 0, stream) == INVALID


def test_pad_keeps_a_one_pixel_picture_for_reflect_101():
    planes = picture.Planes(np.full((1, 1), 9, np.uint8), None, None)
    out = picture.pad(planes, 1, 1, 1, 1, REFLECT_101, (0, 0, 0))
    assert out.y.shape == (3, 3) and (out.y == 9).all()


def test_border_fill_of_an_rgb_output_is_its_yuv():
    from openacl.media.formats import LAYOUTS

    rgb_layout = LAYOUTS[12]  # PIXEL_FORMAT_RGB_888
    assert picture.border_fill(rgb_layout, [255.0, 255.0, 255.0, 0.0]) == (255, 128, 128)
    assert descs.BorderConfig().value == [0.0, 0.0, 0.0, 0.0]
