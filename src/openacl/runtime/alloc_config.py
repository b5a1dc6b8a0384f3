"""Allocation configs (``aclrtMallocConfig``) for ``malloc_with_cfg`` and its host and DVPP siblings.

A config is a list of (attribute, value) pairs. The module id names the driver component that owns the memory,
which only a real driver's accounting uses: it is checked and ignored. The device id chooses the device the
memory belongs to (host memory belongs to none, so it ignores it). No config (pyACL's ``{}``) is the plain allocation.
"""

from __future__ import annotations

from dataclasses import dataclass

from openacl.errors import AclCode, AclError
from openacl.runtime import device as _device

# aclrtMallocAttrType
ACL_RT_MEM_ATTR_RSV, ACL_RT_MEM_ATTR_MODULE_ID, ACL_RT_MEM_ATTR_DEVICE_ID = 0, 1, 2
_U32 = (1 << 32) - 1


@dataclass(frozen=True)
class AllocConfig:
    """One parsed config. (A docstring of its own: a dataclass without one builds it from ``inspect.signature``
    at import, a cost paid by every program's first ``acl.rt`` call.)"""

    device_id: int | None = None  # None: the current device
    module_id: int | None = None


def parse(attrs: list[tuple[int, int]]) -> AllocConfig:
    """The config that ``attrs`` (attribute, value) pairs describe; an unknown attribute is INVALID_PARAM."""
    device_id = module_id = None
    for attr, value in attrs:
        if attr == ACL_RT_MEM_ATTR_DEVICE_ID:
            if not 0 <= value <= _U32:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"device id {value} is not a uint32")
            _device.get(value)
            device_id = value
        elif attr == ACL_RT_MEM_ATTR_MODULE_ID:
            if not 0 <= value <= 0xFFFF:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"module id {value} is not a uint16")
            module_id = value
        elif attr != ACL_RT_MEM_ATTR_RSV:
            raise AclError(
                AclCode.ACL_ERROR_INVALID_PARAM,
                f"allocation attribute {attr} is not RSV(0), MODULE_ID(1) or DEVICE_ID(2)",
            )
    return AllocConfig(device_id, module_id)


def device_for(config: AllocConfig) -> int:
    """The device an allocation with ``config`` belongs to."""
    return _device.current_device().id if config.device_id is None else config.device_id
