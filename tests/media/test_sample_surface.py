"""Every image-side acl.media name that Ascend's samples and acllite call exists, with pyACL's return convention.

The names are those of dvpp.md §2.2-§2.8 (what acllite's AclLiteImage / AclLiteImageProc and the JPEG/VPC samples
call); VDEC and VENC are another module's. ``ret`` is a bare code, ``value`` a (value, ret) pair, ``values`` a
longer tuple, ``bare`` the value alone.
"""

from __future__ import annotations

import pytest

import acl

RETURNS = {
    "dvpp_malloc": "value",
    "dvpp_free": "ret",
    "dvpp_create_channel_desc": "bare",
    "dvpp_create_channel": "ret",
    "dvpp_destroy_channel": "ret",
    "dvpp_destroy_channel_desc": "ret",
    "dvpp_create_pic_desc": "bare",
    "dvpp_destroy_pic_desc": "ret",
    **{f"dvpp_set_pic_desc_{f}": "ret" for f in ("data", "size", "format", "width", "height")},
    "dvpp_set_pic_desc_width_stride": "ret",
    "dvpp_set_pic_desc_height_stride": "ret",
    **{f"dvpp_get_pic_desc_{f}": "bare" for f in ("data", "size", "width", "height", "ret_code")},
    "dvpp_create_batch_pic_desc": "bare",
    "dvpp_get_pic_desc": "bare",
    "dvpp_destroy_batch_pic_desc": "ret",
    "dvpp_create_stream_desc": "bare",
    "dvpp_destroy_stream_desc": "ret",
    **{f"dvpp_set_stream_desc_{f}": "ret" for f in ("data", "size", "format", "timestamp", "ret_code", "eos")},
    **{f"dvpp_get_stream_desc_{f}": "bare" for f in ("data", "size", "ret_code")},
    "dvpp_create_roi_config": "bare",
    "dvpp_destroy_roi_config": "ret",
    "dvpp_create_resize_config": "bare",
    "dvpp_destroy_resize_config": "ret",
    "dvpp_jpeg_get_image_info": "values",
    "dvpp_jpeg_predict_dec_size": "value",
    "dvpp_jpeg_decode_async": "ret",
    "dvpp_create_jpege_config": "bare",
    "dvpp_set_jpege_config_level": "ret",
    "dvpp_destroy_jpege_config": "ret",
    "dvpp_jpeg_predict_enc_size": "value",
    "dvpp_jpeg_encode_async": "ret",
    "dvpp_vpc_resize_async": "ret",
    "dvpp_vpc_crop_async": "ret",
    "dvpp_vpc_crop_and_paste_async": "ret",
    "dvpp_vpc_batch_crop_async": "value",
    "dvpp_vpc_batch_crop_and_paste_async": "value",
}


def test_the_sample_list_is_the_specs_51_image_functions():
    assert len(RETURNS) == 51


@pytest.mark.parametrize(("name", "returns"), sorted(RETURNS.items()))
def test_each_name_exists_with_its_return_convention(name, returns):
    fn = getattr(acl.media, name)
    assert name in acl.media.__all__
    assert fn.acl_returns == returns
    assert fn.acl_name == f"acl.media.{name}"


def test_acl_media_is_importable_as_a_submodule():
    import sys

    import acl.media as media

    assert media is acl.media and sys.modules["acl.media"] is acl.media
