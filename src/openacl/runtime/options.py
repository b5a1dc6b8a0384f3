"""System parameter options, the float saturation mode and peer access between simulated devices: settings a
program makes and reads back.

System options (``aclSysParamOpt``: deterministic kernels, debug kernels, strong consistency) select AI Core
kernels on an NPU. CPU execution is deterministic and has no debug kernels, so here they are only stored: each
context has its own, and the process has one set besides (``set_sys_param_opt``), as in CANN; reading one that
was never set is ``ACL_ERROR_RT_SYSPARAMOPT_NOT_SET``.

Peer access: every simulated device lives in the one address space of the process, so any device can reach any
other's memory; enabling peer access records the pair so that its status reads back as CANN reports it.

Invariant: ``_lock`` guards the three tables below and is held only to read or change them (never across a
call into another module or user code).
"""

from __future__ import annotations

import logging

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import device as _device

log = get_logger("rt")

# aclSysParamOpt: ACL_OPT_DETERMINISTIC 0, ACL_OPT_ENABLE_DEBUG_KERNEL 1, ACL_OPT_STRONG_CONSISTENCY 2.
SYS_PARAM_OPTS = range(0, 3)
ACL_RT_PEER_ACCESS_DISABLED, ACL_RT_PEER_ACCESS_ENABLED = 0, 1

_lock = atfork.lock()
_process_opts: dict[int, int] = {}
_context_opts: dict[int, dict[int, int]] = {}  # context handle -> its options
_peers: set[tuple[int, int]] = set()  # (device, peer) pairs with access enabled


def _check_opt(opt: int) -> None:
    if opt not in SYS_PARAM_OPTS:
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"system option {opt} is not ACL_OPT_DETERMINISTIC(0), ACL_OPT_ENABLE_DEBUG_KERNEL(1) or "
            "ACL_OPT_STRONG_CONSISTENCY(2)",
        )


def _read(table: dict[int, int], opt: int, where: str) -> int:
    _check_opt(opt)
    with _lock:
        value = table.get(opt)
    if value is None:
        # CANN logs this one as a warning: a program probes an option before deciding to set it.
        raise AclError(
            AclCode.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, f"system option {opt} is not set {where}", level=logging.WARNING
        )
    return value


def set_sys_param_opt(opt: int, value: int) -> None:
    _check_opt(opt)
    with _lock:
        _process_opts[opt] = value


def sys_param_opt(opt: int) -> int:
    return _read(_process_opts, opt, "for the process")


def ctx_set_sys_param_opt(opt: int, value: int) -> None:
    _check_opt(opt)
    handle = _device.current_context().handle
    with _lock:
        _context_opts.setdefault(handle, {})[opt] = value


def ctx_sys_param_opt(opt: int) -> int:
    handle = _device.current_context().handle
    with _lock:
        table = dict(_context_opts.get(handle, {}))
    return _read(table, opt, "in the current context")


# ----- float saturation mode -----

# aclrtFloatOverflowMode: SATURATION 0 (an overflow clamps to the largest finite value), INFNAN 1 (IEEE inf/nan).
ACL_RT_OVERFLOW_MODE_SATURATION, ACL_RT_OVERFLOW_MODE_INFNAN = 0, 1


def set_sat_mode(mode: int) -> None:
    """CPU arithmetic is IEEE: INFNAN is what every operation already does; SATURATION cannot be honoured."""
    if mode == ACL_RT_OVERFLOW_MODE_SATURATION:
        raise AclError(
            AclCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "saturation mode: CPU arithmetic gives IEEE inf and nan"
        )
    if mode != ACL_RT_OVERFLOW_MODE_INFNAN:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"mode {mode} is not SATURATION(0) or INFNAN(1)")
    _device.current_device()  # a device-level setting: needs a current device, as in CANN


def sat_mode() -> int:
    _device.current_device()
    return ACL_RT_OVERFLOW_MODE_INFNAN


# ----- peer access -----


def _two_devices(device_id: int, peer_id: int) -> None:
    _device.get(device_id)
    _device.get(peer_id)
    if device_id == peer_id:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"device {device_id} cannot be its own peer")


def can_access_peer(device_id: int, peer_id: int) -> int:
    """1: simulated devices share the process's address space, so each reaches every other's memory."""
    _two_devices(device_id, peer_id)
    return 1


def enable_peer_access(peer_id: int, flags: int) -> None:
    """The current device may reach ``peer_id``'s memory (``flags`` is reserved: 0)."""
    if flags != 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"flags {flags} must be 0")
    device_id = _device.current_device().id
    _two_devices(device_id, peer_id)
    with _lock:
        _peers.add((device_id, peer_id))


def disable_peer_access(peer_id: int) -> None:
    device_id = _device.current_device().id
    _two_devices(device_id, peer_id)
    with _lock:
        enabled = (device_id, peer_id) in _peers
        _peers.discard((device_id, peer_id))
    if not enabled:
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM, f"peer access from device {device_id} to {peer_id} is not enabled"
        )


def peer_access_status(device_id: int, peer_id: int) -> int:
    _two_devices(device_id, peer_id)
    with _lock:
        enabled = (device_id, peer_id) in _peers
    return ACL_RT_PEER_ACCESS_ENABLED if enabled else ACL_RT_PEER_ACCESS_DISABLED


def reset() -> None:
    """Forget every option and peer (process reset)."""
    with _lock:
        _process_opts.clear()
        _context_opts.clear()
        _peers.clear()
