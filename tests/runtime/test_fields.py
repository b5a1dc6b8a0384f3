"""Desc fields declared once (``runtime/fields.py``): the floor's set/get look the handle up, run the field's
check and leave a refused value unstored; the facade's generated accessors are these calls."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from openacl.errors import AclCode, AclError
from openacl.media import descs, vdec, venc
from openacl.runtime.fields import Field, Fields, only
from openacl.runtime.handles import HandleTable


@dataclass
class _Desc:
    width: int = 0
    level: int = 100


TABLE: HandleTable[_Desc] = HandleTable("test desc")
FIELDS = Fields(
    TABLE,
    width=Field("I"),
    level=Field("I", only(lambda level: level <= 100, "level {} is not in 0..100", AclCode.ACL_ERROR_FORMAT_NOT_MATCH)),
)


def test_set_stores_get_reads_and_a_refused_value_is_not_stored():
    handle = TABLE.add(_Desc())
    FIELDS.set(handle, "width", 640)
    assert FIELDS.get(handle, "width") == 640
    with pytest.raises(AclError) as refused:
        FIELDS.set(handle, "level", 101)
    assert refused.value.code == AclCode.ACL_ERROR_FORMAT_NOT_MATCH
    assert refused.value.detail == "level 101 is not in 0..100"
    assert FIELDS.get(handle, "level") == 100
    TABLE.remove(handle)


def test_an_unknown_handle_is_the_tables_code_before_any_check():
    with pytest.raises(AclError) as unknown:
        FIELDS.set(0x1234, "level", 101)
    assert unknown.value.code == AclCode.ACL_ERROR_INVALID_PARAM
    assert "test desc 0x1234 does not exist" in unknown.value.detail


@pytest.mark.parametrize(
    ("fields", "create"),
    [
        (descs.channel_desc_fields, descs.create_channel_desc),
        (descs.pic_desc_fields, descs.create_pic_desc),
        (descs.stream_desc_fields, descs.create_stream_desc),
        (descs.roi_config_fields, lambda: descs.create_roi_config(0, 0, 0, 0)),
        (descs.resize_config_fields, descs.create_resize_config),
        (descs.jpege_config_fields, descs.create_jpege_config),
        (vdec.channel_desc_fields, vdec.create_channel_desc),
        (venc.channel_desc_fields, venc.create_channel_desc),
        (venc.frame_config_fields, venc.create_frame_config),
    ],
)
def test_every_declared_field_is_an_attribute_of_its_desc_that_takes_1(fields, create):
    handle = create()
    for name, field in fields:
        assert field.kind in ("k", "K", "I", "i", "B") and field.access in ("r", "w", "rw"), name
        assert isinstance(getattr(fields.table.get(handle), name), int), name
        if "w" in field.access:
            fields.set(handle, name, 1)
            assert getattr(fields.table.get(handle), name) == 1, name
    fields.table.remove(handle)


def test_a_channel_mode_is_refused_once_the_channel_exists():
    handle = descs.create_channel_desc()
    descs.channel_desc_fields.set(handle, "mode", 3)
    descs.create_channel(handle)
    with pytest.raises(AclError) as refused:
        descs.channel_desc_fields.set(handle, "mode", 1)
    assert refused.value.code == AclCode.ACL_ERROR_INVALID_PARAM
    assert descs.channel_descs.get(handle).mode == 3
    descs.destroy_channel(handle)
    descs.destroy_channel_desc(handle)
