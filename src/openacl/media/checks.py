"""DVPP's host-side checks of pictures, ROIs and scales (spec §6), and the checked views of picture memory.

A checked picture (``Pic``) is a snapshot of its desc taken at the call, with a numpy view of exactly the bytes
its format and strides span: the view keeps the memory alive until the task has run, as a copy's regions are.

Codes: a missing or malformed desc, a null address, a size, stride or resolution outside DVPP's limits, a ROI
out of bounds or of the wrong parity: ``ACL_ERROR_INVALID_PARAM`` (100000); a pixel format the operation does
not take: ``ACL_ERROR_FORMAT_NOT_MATCH`` (100027).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from openacl.errors import AclCode, AclError
from openacl.media import descs as _descs
from openacl.media.chip import ChipRules
from openacl.media.descs import PicDesc, RoiConfig
from openacl.media.formats import LAYOUTS, NV12_NV21, Layout, PixelFormat, buffer_size
from openacl.runtime import memory as _memory

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
FORMAT = AclCode.ACL_ERROR_FORMAT_NOT_MATCH

VPC_INPUT_FORMATS = frozenset(
    f for f in LAYOUTS if f not in (PixelFormat.YUV_SEMIPLANAR_440, PixelFormat.YVU_SEMIPLANAR_440)
)


@dataclass
class Pic:
    desc: PicDesc  # the desc itself: results are written back here
    handle: int
    fmt: int
    lay: Layout
    width: int
    height: int
    ws: int
    hs: int
    buf: np.ndarray


def memory_view(addr: int, nbytes: int, what: str, *, write: bool) -> np.ndarray:
    if addr == 0:
        raise AclError(INVALID, f"{what}: data address is 0")
    _memory.region_for(addr, nbytes, what, write=write)
    view = _memory.view_array(addr, (nbytes,), np.dtype(np.uint8))
    if write and not view.flags.writeable:
        raise AclError(INVALID, f"{what} {addr:#x} is read-only memory")
    return view


def pic_desc(handle: int, what: str) -> PicDesc:
    if handle == 0:
        raise AclError(INVALID, f"{what} pic desc is 0")
    return _descs.pic_descs.get(handle)


def vpc_pic(handle: int, rules: ChipRules, *, output: bool) -> Pic:
    """A VPC input or output picture, checked against the chip's formats, resolutions and strides."""
    what = "output" if output else "input"
    desc = pic_desc(handle, what)
    fmt = desc.format
    allowed = rules.vpc_out_formats if output else VPC_INPUT_FORMATS
    if fmt not in allowed:
        raise AclError(FORMAT, f"{what} pixel format {fmt} is not one VPC takes as {what} on {rules.name}")
    lay = LAYOUTS[fmt]
    w, h, ws, hs = desc.width, desc.height, desc.width_stride, desc.height_stride
    big = rules.vpc_max_8k if (not output and fmt in NV12_NV21) else rules.vpc_max
    if not (rules.vpc_min_width <= w <= big and rules.vpc_min_height <= h <= big):
        raise AclError(
            INVALID, f"{what} resolution {w}x{h} is outside {rules.vpc_min_width}x{rules.vpc_min_height}..{big}x{big}"
        )
    check_strides(what, lay, w, h, ws, hs, rules)
    need = buffer_size(fmt, ws, hs, yuv400_as_420=rules.yuv400_as_420)
    if desc.size < need:
        raise AclError(INVALID, f"{what} size {desc.size} is less than the {need} bytes of {ws}x{hs} format {fmt}")
    buf = memory_view(desc.data, need, f"{what} picture", write=output)
    return Pic(desc, handle, fmt, lay, w & ~1, h & ~1, ws, hs, buf)  # VPC rounds odd sizes down (spec §6.3)


def check_strides(what: str, lay: Layout, w: int, h: int, ws: int, hs: int, rules: ChipRules) -> None:
    row = w * lay.bpp
    if not rules.vpc_min_width_stride <= ws <= rules.vpc_max_stride or ws % 16 or ws < row:
        raise AclError(INVALID, f"{what} width stride {ws} is not a multiple of 16 in {max(row, 32)}..16384")
    if not rules.vpc_min_height_stride <= hs <= rules.vpc_max_stride or hs % 2 or hs < h:
        raise AclError(INVALID, f"{what} height stride {hs} is not even in {max(h, 6)}..16384")


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    width: int
    height: int


def roi(handle: int, what: str) -> RoiConfig:
    if handle == 0:
        raise AclError(INVALID, f"{what} ROI config is 0")
    return _descs.roi_configs.get(handle)


def crop_box(handle: int, pic: Pic, rules: ChipRules) -> Box:
    area = roi(handle, "crop")
    box = _area(area, "crop", rules)
    if not (rules.vpc_min_width <= box.width <= rules.vpc_max and rules.vpc_min_height <= box.height <= rules.vpc_max):
        raise AclError(INVALID, f"crop area {box.width}x{box.height} is outside 10x6..4096x4096")
    if area.right >= pic.width or area.bottom >= pic.height:
        raise AclError(
            INVALID, f"crop area right {area.right} bottom {area.bottom} is outside the {pic.width}x{pic.height} input"
        )
    return box


def paste_box(handle: int, pic: Pic, rules: ChipRules) -> Box:
    area = roi(handle, "paste")
    box = _area(area, "paste", rules)
    if area.left % rules.paste_left_align:
        raise AclError(INVALID, f"paste left {area.left} is not a multiple of {rules.paste_left_align}")
    if box.width < rules.vpc_min_width or box.height < rules.vpc_min_height:
        raise AclError(INVALID, f"paste area {box.width}x{box.height} is smaller than 10x6")
    if area.right >= pic.width or area.bottom >= pic.height:
        raise AclError(
            INVALID,
            f"paste area right {area.right} bottom {area.bottom} is outside the {pic.width}x{pic.height} output",
        )
    return box


def _area(area: RoiConfig, what: str, rules: ChipRules) -> Box:
    if area.right < area.left or area.bottom < area.top:
        raise AclError(INVALID, f"{what} area ({area.left}, {area.right}, {area.top}, {area.bottom}) is empty")
    if rules.roi_parity and (area.left % 2 or area.top % 2 or area.right % 2 == 0 or area.bottom % 2 == 0):
        raise AclError(
            INVALID,
            f"{what} area ({area.left}, {area.right}, {area.top}, {area.bottom}): "
            "left and top must be even, right and bottom odd",
        )
    return Box(area.left, area.top, area.width, area.height)


def check_scale(source: Box, target: Box, rules: ChipRules) -> None:
    for axis, src, dst in (("width", source.width, target.width), ("height", source.height, target.height)):
        if dst > src * rules.max_scale_up or dst * rules.max_scale_down < src:
            raise AclError(
                INVALID, f"scaling {axis} {src} to {dst} is outside 1/{rules.max_scale_down}..{rules.max_scale_up}"
            )
