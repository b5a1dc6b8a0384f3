"""DVPP's descriptors and configs: plain host objects behind int handles, one table per kind (spec §2.3-§2.6, §3).

Each kind lives in its own ``HandleTable``, so a handle of another kind, or one already destroyed, is not found
and the call returns ``ACL_ERROR_INVALID_PARAM`` (getters, which have no error channel, return 0). Creating,
setting and getting are synchronous; destroying a descriptor never frees the memory it points at.

A pic desc is both input and output: the operations that write a picture write its real geometry (and
``ret_code``) back into the output desc when their task runs, so the values are visible after
``synchronize_stream``. Setters store what they are given; operations check it (``checks.py``), as DVPP does.

Decisions where CANN is silent:
- A member pic desc of a batch desc (``dvpp_get_pic_desc``) belongs to the batch: ``dvpp_destroy_pic_desc`` on it
  returns ``ACL_ERROR_INVALID_PARAM``, and destroying the batch destroys its members. A batch holds 1..256 descs.
- A channel desc whose channel exists cannot be destroyed (``ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED``, 148051);
  creating a channel twice, or destroying one never created, is ``ACL_ERROR_INVALID_PARAM``.
- A new JPEGE config has level 100; a new resize config has interpolation 0 (ACL's defaults).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.media import chip as _chip
from openacl.media.formats import ChannelMode
from openacl.runtime import checker
from openacl.runtime.fields import Field, Fields, only
from openacl.runtime.handles import HandleTable

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
_U32 = (1 << 32) - 1
BATCH_MAX = 256


@dataclass(eq=False)
class ChannelDesc:
    mode: int = 0  # 0: never set, every mode
    channel_id: int = 0
    created: bool = False
    params: dict[int, int] = field(default_factory=dict)

    def serves(self, mode: ChannelMode) -> bool:
        return self.mode == 0 or bool(self.mode & mode)


@dataclass(eq=False)
class PicDesc:
    data: int = 0
    size: int = 0
    format: int = 0  # PIXEL_FORMAT_YUV_400
    width: int = 0
    height: int = 0
    width_stride: int = 0
    height_stride: int = 0
    ret_code: int = 0
    batch: int = 0  # the batch desc that owns this member, 0 for a desc of its own


@dataclass(eq=False)
class BatchPicDesc:
    members: list[int]


@dataclass(eq=False)
class StreamDesc:
    data: int = 0
    size: int = 0
    format: int = 0  # H265_MAIN_LEVEL
    timestamp: int = 0
    ret_code: int = 0
    eos: int = 0


@dataclass(eq=False)
class RoiConfig:
    left: int
    right: int
    top: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left + 1  # inclusive (spec §2.6)

    @property
    def height(self) -> int:
        return self.bottom - self.top + 1


@dataclass(eq=False)
class ResizeConfig:
    interpolation: int = 0


@dataclass(eq=False)
class JpegeConfig:
    level: int = 100


@dataclass(eq=False)
class BorderConfig:
    """acldvppBorderConfig: how a make-border operation fills the border around the picture it places."""

    border_type: int = 0  # acldvppBorderType: CONSTANT 0, REPLICATE 1, REFLECT 2, REFLECT_101 3
    value: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0, 0.0])  # CONSTANT's value per channel
    top: int = 0
    bottom: int = 0
    left: int = 0
    right: int = 0


channel_descs: HandleTable[ChannelDesc] = HandleTable("dvpp channel desc")
pic_descs: HandleTable[PicDesc] = HandleTable("dvpp pic desc")
batch_pic_descs: HandleTable[BatchPicDesc] = HandleTable("dvpp batch pic desc")
stream_descs: HandleTable[StreamDesc] = HandleTable("dvpp stream desc")
roi_configs: HandleTable[RoiConfig] = HandleTable("dvpp roi config")
resize_configs: HandleTable[ResizeConfig] = HandleTable("dvpp resize config")
jpege_configs: HandleTable[JpegeConfig] = HandleTable("dvpp jpege config")
border_configs: HandleTable[BorderConfig] = HandleTable("dvpp border config")
BORDER_TYPES = range(0, 4)
BORDER_VALUES = 4


def _channel_mode(desc: ChannelDesc, mode: int) -> None:
    if mode == 0 or mode & ~int(ChannelMode.VPC | ChannelMode.JPEGD | ChannelMode.JPEGE | ChannelMode.PNGD):
        raise AclError(_INVALID, f"channel mode {mode} is not a combination of VPC 1, JPEGD 2, JPEGE 4, PNGD 8")
    if desc.created:
        raise AclError(_INVALID, "a channel's mode is set before the channel is created")


def _interpolation(_config: ResizeConfig, interpolation: int) -> None:
    rules = _chip.current()
    if interpolation > rules.max_interpolation:
        raise AclError(
            _INVALID, f"interpolation {interpolation} is not in 0..{rules.max_interpolation} on {rules.name}"
        )


# The fields pyACL sets and gets one at a time (``dvpp_set_pic_desc_width`` ...); setters store what they are
# given unless a check says otherwise: the operations that read a desc check it (checks.py), as DVPP does.
channel_desc_fields = Fields(
    channel_descs, mode=Field("I", _channel_mode, access="w"), channel_id=Field("I", access="r")
)
pic_desc_fields = Fields(
    pic_descs, data="k", size="I", format="i", width="I", height="I", width_stride="I", height_stride="I", ret_code="I"
)
stream_desc_fields = Fields(stream_descs, data="k", size="I", format="i", timestamp="K", ret_code="I", eos="B")
_CORNER = Field("I", access="w")  # pyACL sets a ROI's corners one by one but reads none back
roi_config_fields = Fields(roi_configs, left=_CORNER, right=_CORNER, top=_CORNER, bottom=_CORNER)
resize_config_fields = Fields(resize_configs, interpolation=Field("I", _interpolation))
jpege_config_fields = Fields(
    jpege_configs, level=Field("I", only(lambda level: level <= 100, "jpege level {} is not in 0..100"))
)
_BORDER_WIDTH = Field("I", only(lambda width: width <= 0xFFFF, "border width {} is not a uint16"))  # C: uint16_t
border_config_fields = Fields(
    border_configs,
    border_type=Field("i", only(lambda kind: kind in BORDER_TYPES, "border type {} is not one of 0..3")),
    top=_BORDER_WIDTH,
    bottom=_BORDER_WIDTH,
    left=_BORDER_WIDTH,
    right=_BORDER_WIDTH,
)

# Guards the check-then-change of channel and batch lifetimes (create/destroy racing each other); held for a few
# dict operations only, never while user code runs; free in a forked child (atfork).
_lifetime = atfork.lock()


# ----- channel descs and channels -----


def create_channel_desc() -> int:
    return channel_descs.add(ChannelDesc())


def destroy_channel_desc(handle: int) -> None:
    with _lifetime:
        desc = channel_descs.get(handle)
        if desc.created:
            raise AclError(
                AclCode.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED, f"channel of desc {handle:#x} is not destroyed"
            )
        channel_descs.remove(handle)


def create_channel(handle: int) -> None:
    with _lifetime:
        desc = channel_descs.get(handle)
        if desc.created:
            raise AclError(_INVALID, f"channel of desc {handle:#x} already exists")
        desc.created = True
    if checker.enabled:
        checker.on_create("dvpp channel", handle)  # by its desc: one channel each


def destroy_channel(handle: int) -> None:
    with _lifetime:
        desc = channel_descs.get(handle)
        if not desc.created:
            raise AclError(_INVALID, f"channel of desc {handle:#x} was never created or is destroyed")
        desc.created = False
    if checker.enabled:
        checker.on_destroy("dvpp channel", handle)


def channel(handle: int, mode: ChannelMode) -> ChannelDesc:
    """The created channel an operation of ``mode`` runs on."""
    desc = channel_descs.get(handle)
    if not desc.created:
        raise AclError(_INVALID, f"channel desc {handle:#x} has no channel (dvpp_create_channel first)")
    if not desc.serves(mode):
        raise AclError(_INVALID, f"channel desc {handle:#x} has mode {desc.mode}, which does not include {mode.name}")
    return desc


# ----- pic descs -----


def create_pic_desc() -> int:
    return pic_descs.add(PicDesc())


def destroy_pic_desc(handle: int) -> None:
    desc = pic_descs.get(handle)
    if desc.batch:
        raise AclError(_INVALID, f"pic desc {handle:#x} belongs to batch desc {desc.batch:#x}; destroy the batch")
    pic_descs.remove(handle)


def create_batch_pic_desc(batch_size: int) -> int:
    if not 1 <= batch_size <= BATCH_MAX:
        raise AclError(_INVALID, f"batch size {batch_size} is not in 1..{BATCH_MAX}")
    with _lifetime:
        batch = BatchPicDesc([])
        handle = batch_pic_descs.add(batch)
        batch.members = [pic_descs.add(PicDesc(batch=handle), tracked=False) for _ in range(batch_size)]  # its own
    return handle


def destroy_batch_pic_desc(handle: int) -> None:
    with _lifetime:
        batch = batch_pic_descs.remove(handle)
        for member in batch.members:
            if member in pic_descs:
                pic_descs.remove(member)


def batch_member(handle: int, index: int) -> int:
    batch = batch_pic_descs.get(handle)
    if not 0 <= index < len(batch.members):
        raise AclError(_INVALID, f"index {index} is outside batch desc {handle:#x} of {len(batch.members)}")
    return batch.members[index]


# ----- stream descs -----


def create_stream_desc() -> int:
    return stream_descs.add(StreamDesc())


def destroy_stream_desc(handle: int) -> None:
    stream_descs.remove(handle)


# ----- configs -----


def create_roi_config(left: int, right: int, top: int, bottom: int) -> int:
    return roi_configs.add(RoiConfig(left, right, top, bottom))


def set_roi_config(handle: int, left: int, right: int, top: int, bottom: int) -> None:
    roi = roi_configs.get(handle)
    roi.left, roi.right, roi.top, roi.bottom = left, right, top, bottom


def create_resize_config() -> int:
    return resize_configs.add(ResizeConfig())


# acldvppChannelDescParamType: the one typed parameter is the colour-space conversion matrix, acldvppCscMatrix
# (BT601 WIDE 0 / NARROW 1, BT709 WIDE 2 / NARROW 3, BT2020 WIDE 4 / NARROW 5).
ACL_DVPP_CSC_MATRIX_UINT32 = 0
ACL_DVPP_CSC_MATRIX_BT601_WIDE = 0
CSC_MATRICES = range(0, 6)


def check_csc_param(param_type: int, value: int | None = None) -> None:
    """The rules of a typed channel parameter (DVPP's and VDEC's alike): the type is the CSC matrix (0), and the
    matrix, if given, is BT.601 wide, what openacl's colour conversion computes (``color.py``): another one is
    refused rather than stored and ignored."""
    if param_type != ACL_DVPP_CSC_MATRIX_UINT32:
        raise AclError(_INVALID, f"channel parameter type {param_type} is not the CSC matrix (0)")
    if value is not None and value not in CSC_MATRICES:
        raise AclError(_INVALID, f"CSC matrix {value} is not one of 0..5")
    if value is not None and value != ACL_DVPP_CSC_MATRIX_BT601_WIDE:
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, f"CSC matrix {value}: openacl converts with BT.601 wide")


def set_channel_param(handle: int, param_type: int, value: int) -> None:
    desc = channel_descs.get(handle)
    check_csc_param(param_type, value)
    desc.params[param_type] = value


def channel_param(handle: int, param_type: int) -> tuple[int, int]:
    """(size of the value in bytes, the value) of a typed channel parameter; never set: DVPP's default."""
    desc = channel_descs.get(handle)
    check_csc_param(param_type)
    return 4, desc.params.get(param_type, ACL_DVPP_CSC_MATRIX_BT601_WIDE)


def create_border_config() -> int:
    return border_configs.add(BorderConfig())


def _value_index(index: int) -> int:
    if not 0 <= index < BORDER_VALUES:
        raise AclError(_INVALID, f"border value index {index} is not in 0..{BORDER_VALUES - 1}")
    return index


def set_border_value(handle: int, index: int, value: float) -> None:
    border_configs.get(handle).value[_value_index(index)] = value


def border_value(handle: int, index: int) -> float:
    return border_configs.get(handle).value[_value_index(index)]


def create_jpege_config() -> int:
    return jpege_configs.add(JpegeConfig())
