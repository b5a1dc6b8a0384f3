"""Descriptors and configs: defaults, getters and setters as pyACL returns them, one handle table per kind."""

from __future__ import annotations

import pytest

import acl
from openacl.errors import AclCode
from openacl.media import descs

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
M = acl.media

PIC_FIELDS = ["data", "size", "format", "width", "height", "width_stride", "height_stride", "ret_code"]
STREAM_FIELDS = ["data", "size", "format", "timestamp", "ret_code", "eos"]


def test_a_new_pic_desc_is_all_zero_and_setters_round_trip():
    pic = M.dvpp_create_pic_desc()
    assert type(pic) is int and pic != 0
    for name in PIC_FIELDS:
        assert getattr(M, f"dvpp_get_pic_desc_{name}")(pic) == 0
    for value, name in enumerate(PIC_FIELDS, start=7):
        assert getattr(M, f"dvpp_set_pic_desc_{name}")(pic, value) == 0
    for value, name in enumerate(PIC_FIELDS, start=7):
        assert getattr(M, f"dvpp_get_pic_desc_{name}")(pic) == value
    assert M.dvpp_destroy_pic_desc(pic) == 0


def test_stream_desc_fields_and_formats():
    sd = M.dvpp_create_stream_desc()
    for name in STREAM_FIELDS:
        assert getattr(M, f"dvpp_get_stream_desc_{name}")(sd) == 0
    assert M.dvpp_set_stream_desc_timestamp(sd, (1 << 64) - 1) == 0  # K: uint64
    assert M.dvpp_get_stream_desc_timestamp(sd) == (1 << 64) - 1
    assert M.dvpp_set_stream_desc_eos(sd, 257) == 0  # B truncates, as CPython does
    assert M.dvpp_get_stream_desc_eos(sd) == 1
    assert M.dvpp_set_stream_desc_size(sd, -1) == 0  # I: no overflow check
    assert M.dvpp_get_stream_desc_size(sd) == (1 << 32) - 1
    with pytest.raises(TypeError):
        M.dvpp_set_stream_desc_format(sd, 1 << 40)  # i: overflow-checked
    assert M.dvpp_destroy_stream_desc(sd) == 0


def test_destroyed_and_wrong_kind_handles(acl_log):
    pic = M.dvpp_create_pic_desc()
    sd = M.dvpp_create_stream_desc()
    assert M.dvpp_set_pic_desc_width(sd, 4) == INVALID  # a stream desc is not a pic desc
    assert M.dvpp_get_pic_desc_width(sd) == 0
    assert M.dvpp_destroy_pic_desc(pic) == 0
    assert M.dvpp_destroy_pic_desc(pic) == INVALID
    assert M.dvpp_set_pic_desc_size(pic, 1) == INVALID
    assert M.dvpp_get_pic_desc_size(pic) == 0
    assert M.dvpp_destroy_stream_desc(pic) == INVALID
    assert M.dvpp_destroy_roi_config(sd) == INVALID
    lines = [r.getMessage() for r in acl_log.records if "acl.media" in r.getMessage()]
    assert len(lines) == 7 and all("does not exist" in line for line in lines)


def test_batch_pic_desc_owns_its_members():
    batch = M.dvpp_create_batch_pic_desc(3)
    members = [M.dvpp_get_pic_desc(batch, i) for i in range(3)]
    assert len(set(members)) == 3 and all(members)
    assert M.dvpp_get_pic_desc(batch, 3) == 0
    assert M.dvpp_set_pic_desc_width(members[0], 64) == 0
    assert M.dvpp_destroy_pic_desc(members[0]) == INVALID
    assert M.dvpp_destroy_batch_pic_desc(batch) == 0
    assert M.dvpp_get_pic_desc_width(members[0]) == 0 and M.dvpp_set_pic_desc_width(members[0], 1) == INVALID
    assert M.dvpp_create_batch_pic_desc(0) == 0
    assert M.dvpp_create_batch_pic_desc(257) == 0


def test_channel_lifetime():
    ch = M.dvpp_create_channel_desc()
    assert M.dvpp_destroy_channel(ch) == INVALID
    assert M.dvpp_create_channel(ch) == 0
    assert M.dvpp_create_channel(ch) == INVALID
    assert M.dvpp_destroy_channel_desc(ch) == AclCode.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED
    assert M.dvpp_set_channel_desc_mode(ch, 1) == INVALID
    assert M.dvpp_destroy_channel(ch) == 0
    assert M.dvpp_set_channel_desc_mode(ch, 0) == INVALID
    assert M.dvpp_set_channel_desc_mode(ch, 2 | 4) == 0
    assert M.dvpp_destroy_channel_desc(ch) == 0
    assert M.dvpp_create_channel(ch) == INVALID


def test_roi_config_is_inclusive_and_settable():
    roi = M.dvpp_create_roi_config(0, 99, 10, 59)
    cfg = descs.roi_configs.get(roi)
    assert (cfg.width, cfg.height) == (100, 50)
    assert M.dvpp_set_roi_config(roi, 2, 11, 4, 9) == 0
    assert M.dvpp_set_roi_config_left(roi, 4) == 0 and M.dvpp_set_roi_config_bottom(roi, 15) == 0
    assert (cfg.left, cfg.right, cfg.top, cfg.bottom) == (4, 11, 4, 15)
    assert M.dvpp_destroy_roi_config(roi) == 0


def test_resize_and_jpege_config_defaults_and_ranges(monkeypatch):
    monkeypatch.delenv("OPENACL_SOC_NAME", raising=False)
    cfg = M.dvpp_create_resize_config()
    assert M.dvpp_get_resize_config_interpolation(cfg) == 0
    assert M.dvpp_set_resize_config_interpolation(cfg, 4) == 0
    assert M.dvpp_set_resize_config_interpolation(cfg, 5) == INVALID
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310P3")
    assert M.dvpp_set_resize_config_interpolation(cfg, 3) == INVALID
    assert M.dvpp_get_resize_config_interpolation(cfg) == 4
    jcfg = M.dvpp_create_jpege_config()
    assert M.dvpp_get_jpege_config_level(jcfg) == 100
    assert M.dvpp_set_jpege_config_level(jcfg, 0) == 0 and M.dvpp_get_jpege_config_level(jcfg) == 0
    assert M.dvpp_set_jpege_config_level(jcfg, 101) == INVALID
    assert M.dvpp_destroy_jpege_config(jcfg) == 0 and M.dvpp_destroy_resize_config(cfg) == 0


def test_creators_and_getters_parse_like_pyacl():
    assert M.dvpp_create_pic_desc("ignored") != 0  # no-argument wrappers ignore arguments
    with pytest.raises(TypeError):
        M.dvpp_get_pic_desc_width("x")
    with pytest.raises(TypeError):
        M.dvpp_create_roi_config(1, 2, 3)


def test_channel_desc_param_is_the_csc_matrix_and_only_bt601_wide_is_computed(acl_log):
    desc = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_get_channel_desc_param(desc, 0) == (4, 0, 0)  # DVPP's default, BT.601 wide
    assert acl.media.dvpp_set_channel_desc_param(desc, 0, 0) == (desc, 0)
    assert acl.media.dvpp_set_channel_desc_param(desc, 0, 2) == (desc, AclCode.ACL_ERROR_FEATURE_UNSUPPORTED)
    assert acl.media.dvpp_set_channel_desc_param(desc, 0, 6) == (desc, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.media.dvpp_set_channel_desc_param(desc, 1, 0) == (desc, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.media.dvpp_get_channel_desc_param(desc, 1) == (0, 0, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.media.dvpp_get_channel_desc_param(0xBAD0, 0) == (0, 0, AclCode.ACL_ERROR_INVALID_PARAM)
    with pytest.raises(TypeError, match="dvpp_set_channel_desc_param args parse failed"):
        acl.media.dvpp_set_channel_desc_param(desc, 0, "BT601")


def test_vdec_channel_desc_param_is_the_csc_matrix_with_dvpps_rules(acl_log):
    desc = acl.media.vdec_create_channel_desc()
    assert acl.media.vdec_get_channel_desc_param(desc, 0) == (4, 0, 0)
    assert acl.media.vdec_set_channel_desc_param(desc, 0, 0) == (desc, 0)
    assert acl.media.vdec_set_channel_desc_param(desc, 0, 3) == (desc, AclCode.ACL_ERROR_FEATURE_UNSUPPORTED)
    assert acl.media.vdec_set_channel_desc_param(desc, 2, 0) == (desc, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.media.vdec_get_channel_desc_param(desc, 2) == (0, 0, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.media.vdec_get_channel_desc_param(acl.media.dvpp_create_channel_desc(), 0)[2] == 100000  # not vdec
    with pytest.raises(TypeError):
        acl.media.vdec_get_channel_desc_param(desc)


def test_venc_channel_desc_param_reaches_each_field_by_its_type(acl_log):
    desc = acl.media.venc_create_channel_desc()

    def callback(*args):
        return None

    assert acl.media.venc_set_channel_desc_param(desc, 1, callback) == 0
    assert acl.media.venc_get_channel_desc_param(desc, 1) == (callback, 0)
    assert acl.media.venc_set_channel_desc_param(desc, 0, 1 << 40) == 0  # the thread id is a uint64
    assert acl.media.venc_get_channel_desc_thread_id(desc) == 1 << 40
    for param_type, getter, value in [(4, "pic_width", 1280), (5, "pic_height", 720), (6, "key_frame_interval", 8)]:
        assert acl.media.venc_set_channel_desc_param(desc, param_type, value) == 0
        assert getattr(acl.media, f"venc_get_channel_desc_{getter}")(desc) == value
        assert acl.media.venc_get_channel_desc_param(desc, param_type) == (value, 0)
    buf, _ = acl.media.dvpp_malloc(4096)
    assert acl.media.venc_set_channel_desc_param(desc, 7, buf) == 0
    assert acl.media.venc_get_channel_desc_param(desc, 7) == (buf, 0)


def test_venc_channel_desc_param_refuses_what_its_setters_refuse(acl_log):
    desc = acl.media.venc_create_channel_desc()
    assert acl.media.venc_set_channel_desc_param(desc, 2, 12) == AclCode.ACL_ERROR_FORMAT_NOT_MATCH  # not NV12/21
    assert acl.media.venc_set_channel_desc_param(desc, 12, 5) == AclCode.ACL_ERROR_FEATURE_UNSUPPORTED
    assert acl.media.venc_get_channel_desc_param(desc, 12) == (0, AclCode.ACL_ERROR_FEATURE_UNSUPPORTED)
    assert acl.media.venc_set_channel_desc_param(desc, 13, 1) == AclCode.ACL_ERROR_INVALID_PARAM
    assert acl.media.venc_set_channel_desc_param(0xBAD0, 4, 1) == AclCode.ACL_ERROR_INVALID_PARAM
    with pytest.raises(RuntimeError, match="did not set callback"):
        acl.media.venc_get_channel_desc_param(desc, 1)
    with pytest.raises(TypeError):
        acl.media.venc_set_channel_desc_param(desc, 1, 5)  # not callable
    with pytest.raises(TypeError):
        acl.media.venc_set_channel_desc_param(desc, 4, "wide")
