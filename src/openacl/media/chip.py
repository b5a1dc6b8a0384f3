"""The chip generation's DVPP rules: alignment, limits, ROI parity, formats (spec dvpp.md §0.3, §6, §10.1).

One source of truth: the rules follow the SoC name ``openacl.runtime.platform.soc_name()`` answers (what
``acl.get_soc_name()`` returns, chosen with ``OPENACL_SOC_NAME``), read at each call as the platform reads it.

- ``Ascend310`` (the default SoC), ``Ascend910`` / ``Ascend910A`` / ``Ascend910ProA`` ..., any other name and
  no name: the **310** rules (ACL's v100 path), which most samples target.
- ``Ascend310P*``, ``Ascend310B*``, ``Ascend910B*``, ``Ascend910_93*``: the **310P** rules (ACL's v200 path).
  openacl does not model the A2/A3 relaxations (no stride alignment there); those chips get the 310P rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from openacl.media.formats import NV12_NV21, PixelFormat
from openacl.runtime import platform

_V200_PREFIXES = ("Ascend310P", "Ascend310B", "Ascend910B", "Ascend910_93")

_RGB_OUT = frozenset({PixelFormat.RGB_888, PixelFormat.BGR_888, PixelFormat.YUV_400})


@dataclass(frozen=True)
class ChipRules:
    """What DVPP checks and does on one chip generation."""

    name: str  # "310" or "310P"
    jpegd_width_align: int  # JPEGD output width stride: align128 (310) / align64 (310P)
    jpegd_height_align: int
    roi_parity: bool  # crop/paste left, top even and right, bottom odd
    paste_left_align: int
    vpc_out_formats: frozenset[int]
    max_interpolation: int  # largest value set_resize_config_interpolation accepts
    default_filter: str  # what interpolation 0 means here
    png: bool  # PNGD present
    convert_color: bool  # dvpp_vpc_convert_color_async present
    yuv400_as_420: bool  # YUV400 sized like 4:2:0 as VPC input

    # Limits common to both generations (spec §6.1-§6.4).
    jpeg_min: int = 32
    jpeg_max: int = 8192
    vpc_min_width: int = 10
    vpc_min_height: int = 6
    vpc_max: int = 4096
    vpc_max_8k: int = 8192
    vpc_min_width_stride: int = 32
    vpc_max_stride: int = 16384
    vpc_min_height_stride: int = 6
    max_scale_up: int = 16
    max_scale_down: int = 32
    batch_max: int = 256


CHIP_310 = ChipRules(
    name="310",
    jpegd_width_align=128,
    jpegd_height_align=16,
    roi_parity=True,
    paste_left_align=16,
    vpc_out_formats=NV12_NV21,
    max_interpolation=4,
    default_filter="bilinear",
    png=True,
    convert_color=False,
    yuv400_as_420=True,
)

CHIP_310P = ChipRules(
    name="310P",
    jpegd_width_align=64,
    jpegd_height_align=16,
    roi_parity=False,
    paste_left_align=16,
    vpc_out_formats=NV12_NV21 | _RGB_OUT,
    max_interpolation=2,
    default_filter="bilinear",
    png=False,
    convert_color=True,
    yuv400_as_420=True,
)


def rules_for(soc_name: str | None) -> ChipRules:
    if soc_name and soc_name.startswith(_V200_PREFIXES):
        return CHIP_310P
    return CHIP_310


def current() -> ChipRules:
    """The rules of the SoC ``acl.get_soc_name()`` names now."""
    return rules_for(platform.soc_name())
