"""What the simulated hardware says about itself: its SoC name and the ACL interface version.

Decisions (pyACL leaves both to the hardware and the installed CANN):

- The SoC is an **Ascend310** (an Atlas 200/300/500 inference product), the chip generation most of Ascend's
  DVPP samples target; ``openacl.media`` applies that generation's DVPP rules (JPEGD output strides 128x16, even/odd
  ROI parity, NV12/NV21-only VPC output) whenever the name is a 310 one, so the rules and the name programs branch
  on (acllite picks its JPEG decoder alignment from ``"Ascend310P3"``) always agree. ``OPENACL_SOC_NAME`` chooses
  another name (``Ascend310P3`` selects the 310P rules); set to the empty string it makes ``acl.get_soc_name()``
  return ``None``, as pyACL does when the runtime cannot say. The variable is read on every call (CANN reads the
  SoC once per process; a program never sees the difference).
- The ACL interface version is that of the ``acl_rt.h`` the reference notes follow: 1.17.0.
"""

from __future__ import annotations

import os

from openacl.runtime.sched.stream import MAX_PRIORITY

DEFAULT_SOC_NAME = "Ascend310"
ACL_VERSION = (1, 17, 0)  # ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION


def soc_name() -> str | None:
    """The simulated SoC's name (device 0's, as CANN reports with several devices); None if set empty."""
    name = os.environ.get("OPENACL_SOC_NAME", DEFAULT_SOC_NAME).strip()
    return name or None


def version() -> tuple[int, int, int]:
    return ACL_VERSION


def stream_priority_range() -> tuple[int, int]:
    """(least, greatest) stream priority: a smaller number is a higher priority, 0 the highest."""
    return MAX_PRIORITY, 0
