"""System parameter options, peer access, host-memory registration and allocation configs, as pyACL programs
make them, and their rules called on the runtime floor."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import memory, options
from tests.acl.test_memory import logged

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
NOT_SET = AclCode.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
ALREADY = AclCode.ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
NOT_REGISTERED = AclCode.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED
DETERMINISTIC, DEBUG_KERNEL, STRONG_CONSISTENCY = 0, 1, 2
D2H, H2D = 2, 1


# ----- system parameter options -----


def test_sys_param_opt_reads_back_what_was_set(ctx):
    assert acl.rt.set_sys_param_opt(DETERMINISTIC, 1) == 0
    assert acl.rt.get_sys_param_opt(DETERMINISTIC) == (1, 0)
    assert acl.rt.set_sys_param_opt(DETERMINISTIC, -5) == 0
    assert acl.rt.get_sys_param_opt(DETERMINISTIC) == (-5, 0)


def test_an_option_never_set_is_not_set_and_logged_as_a_warning(ctx, acl_log):
    assert acl.rt.get_sys_param_opt(DEBUG_KERNEL) == (0, NOT_SET)
    assert acl.rt.ctx_get_sys_param_opt(DEBUG_KERNEL) == (0, NOT_SET)
    lines = logged(acl_log, "acl.rt.get_sys_param_opt", NOT_SET)
    assert len(lines) == 1 and "system option 1 is not set" in lines[0]
    assert {r.levelname for r in acl_log.records if "sys_param_opt" in r.getMessage()} == {"WARNING"}


def test_context_options_belong_to_their_context_and_not_to_the_process(ctx):
    assert acl.rt.ctx_set_sys_param_opt(STRONG_CONSISTENCY, 7) == 0
    assert acl.rt.ctx_get_sys_param_opt(STRONG_CONSISTENCY) == (7, 0)
    assert acl.rt.get_sys_param_opt(STRONG_CONSISTENCY)[1] == NOT_SET
    other, ret = acl.rt.create_context(0)
    assert ret == 0  # the new context is current now
    assert acl.rt.ctx_get_sys_param_opt(STRONG_CONSISTENCY)[1] == NOT_SET
    assert acl.rt.set_context(ctx) == 0
    assert acl.rt.ctx_get_sys_param_opt(STRONG_CONSISTENCY) == (7, 0)
    assert acl.rt.destroy_context(other) == 0


def test_sys_param_opt_refuses_an_unknown_option_and_bad_arguments(ctx, acl_log):
    assert acl.rt.set_sys_param_opt(3, 1) == INVALID
    assert acl.rt.ctx_set_sys_param_opt(-1, 1) == INVALID
    assert acl.rt.get_sys_param_opt(9) == (0, INVALID)
    assert len(logged(acl_log, "acl.rt.set_sys_param_opt", INVALID)) == 1
    with pytest.raises(TypeError, match=r"acl\.rt\.set_sys_param_opt args parse failed"):
        acl.rt.set_sys_param_opt(0, 1 << 63)
    with pytest.raises(TypeError):
        acl.rt.ctx_get_sys_param_opt("0")


def test_context_options_need_a_current_context():
    assert acl.rt.ctx_set_sys_param_opt(0, 1) == AclCode.ACL_ERROR_RT_CONTEXT_NULL


def test_options_are_forgotten_by_a_reset(ctx):
    options.set_sys_param_opt(DETERMINISTIC, 1)
    options.reset()
    with pytest.raises(AclError) as caught:
        options.sys_param_opt(DETERMINISTIC)
    assert caught.value.code == NOT_SET


# ----- peer access -----


def test_peer_access_is_possible_between_distinct_devices_and_reads_back(ctx):
    assert acl.rt.device_can_access_peer(0, 1) == (1, 0)
    assert acl.rt.device_peer_access_status(0, 1) == (0, 0)
    assert acl.rt.device_enable_peer_access(1, 0) == 0
    assert acl.rt.device_peer_access_status(0, 1) == (1, 0)
    assert acl.rt.device_peer_access_status(1, 0) == (0, 0)  # one direction only
    assert acl.rt.device_disable_peer_access(1) == 0
    assert acl.rt.device_peer_access_status(0, 1) == (0, 0)


def test_peer_memory_is_reachable_by_a_copy(ctx):
    """One address space: device 1's memory is copied to device 0's with a plain device-to-device copy."""
    assert acl.rt.device_enable_peer_access(1, 0) == 0
    assert acl.rt.set_device(1) == 0
    src, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(src, 64, 0x5A, 64) == 0
    assert acl.rt.set_context(ctx) == 0
    dst, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy(dst, 64, src, 64, 3) == 0
    assert acl.util.ptr_to_bytes(dst, 64) == b"\x5a" * 64


def test_peer_access_refuses_bad_devices_flags_and_a_disable_never_enabled(ctx, acl_log):
    assert acl.rt.device_can_access_peer(0, 0) == (0, INVALID)
    assert acl.rt.device_can_access_peer(0, 999) == (0, AclCode.ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.device_enable_peer_access(0, 0) == INVALID  # the current device itself
    assert acl.rt.device_enable_peer_access(1, 1) == INVALID
    assert acl.rt.device_disable_peer_access(2) == INVALID
    lines = logged(acl_log, "acl.rt.device_disable_peer_access", INVALID)
    assert len(lines) == 1 and "not enabled" in lines[0]
    with pytest.raises(TypeError):
        acl.rt.device_enable_peer_access(1)


# ----- host memory registration -----


def test_registered_host_memory_has_its_own_address_on_the_device(ctx):
    array = np.arange(4096, dtype=np.uint8)
    data = array.tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    dev_ptr, ret = acl.rt.host_register(ptr, len(data), 0)
    assert ret == 0 and dev_ptr == ptr
    assert acl.rt.host_get_device_pointer(ptr + 100, 0) == (ptr + 100, 0)
    device, _ = acl.rt.malloc(4096, 0)
    assert acl.rt.memcpy(device, 4096, dev_ptr, 4096, H2D) == 0
    assert acl.util.ptr_to_bytes(device, 4096) == array.tobytes()
    assert acl.rt.host_unregister(ptr) == 0
    assert acl.rt.host_get_device_pointer(ptr, 0) == (0, NOT_REGISTERED)


def test_host_register_v2_takes_mapped_and_pinned_flags(ctx):
    host, _ = acl.rt.malloc_host(8192)
    assert acl.rt.host_register_v2(host, 8192, 0x2 | 0x10000000) == 0
    assert acl.rt.host_get_device_pointer(host, 0) == (host, 0)
    assert acl.rt.host_unregister(host) == 0
    assert acl.rt.host_register_v2(host, 8192, 0x8) == AclCode.ACL_ERROR_FEATURE_UNSUPPORTED  # READONLY
    assert acl.rt.host_register_v2(host, 8192, 0x4) == AclCode.ACL_ERROR_FEATURE_UNSUPPORTED  # IOMEMORY
    assert acl.rt.host_register_v2(host, 8192, 0x1) == INVALID
    assert acl.rt.host_register_v2(host, 8192, 0) == INVALID


def test_host_register_refuses_overlaps_device_memory_and_unknown_memory(ctx, acl_log):
    host, _ = acl.rt.malloc_host(4096)
    assert acl.rt.host_register(host, 2048, 0) == (host, 0)
    assert acl.rt.host_register(host + 1024, 2048, 0) == (0, ALREADY)
    assert acl.rt.host_register(host + 2048, 2048, 0) == (host + 2048, 0)  # adjacent is fine
    device, _ = acl.rt.malloc(4096, 0)
    assert acl.rt.host_register(device, 4096, 0) == (0, INVALID)
    assert acl.rt.host_register(host, 8192, 0)[1] == INVALID  # past the allocation
    assert acl.rt.host_register(host, 0, 0)[1] == INVALID
    assert acl.rt.host_register(host, 64, 1)[1] == INVALID  # no such register type
    assert acl.rt.host_unregister(host + 1) == NOT_REGISTERED
    assert acl.rt.host_get_device_pointer(host, 1) == (0, INVALID)
    assert len(logged(acl_log, "acl.rt.host_register", ALREADY)) == 1


def test_a_registration_holds_the_bytes_of_the_memory_it_registered(ctx):
    """The runtime rule: the registration pins its region, so its bytes outlive the program's object."""
    data = bytes(range(256)) * 4
    addr = memory.bytes_address(data)
    memory.host_register(addr, len(data), 0)
    region = memory.region_for(addr, len(data), "test")
    del data
    assert region.keep is not None and memory.read_bytes(addr, 4) == b"\x00\x01\x02\x03"
    memory.host_unregister(addr)
    memory.forget_registrations()


# ----- allocation configs -----


def test_malloc_with_cfg_allocates_on_the_configured_device(ctx):
    ptr, ret = acl.rt.malloc_with_cfg(1024, 0, {})
    assert ret == 0 and acl.rt.pointer_get_attributes(ptr)[0]["location"]["id"] == 0
    cfg = {"numAttrs": 2, "attrs": [{"attr": 1, "value": {"moduleId": 3}}, {"attr": 2, "value": {"deviceId": 1}}]}
    ptr, ret = acl.rt.malloc_with_cfg(1024, 0, cfg)
    assert ret == 0
    assert acl.rt.pointer_get_attributes(ptr)[0]["location"]["id"] == 1
    assert acl.rt.memset(ptr, 1024, 7, 1024) == 0
    assert acl.rt.free(ptr) == 0


def test_malloc_host_with_cfg_and_dvpp_malloc_with_cfg(ctx):
    host, ret = acl.rt.malloc_host_with_cfg(100, {"numAttrs": 1, "attrs": [{"attr": 1, "value": {"moduleId": 9}}]})
    assert ret == 0 and acl.rt.free_host(host) == 0
    dvpp, ret = acl.media.dvpp_malloc_with_cfg(1000, 0, {})
    assert ret == 0 and dvpp % 128 == 0
    assert acl.media.dvpp_free(dvpp) == 0


def test_allocation_configs_refuse_bad_attributes_and_shapes(ctx):
    bad_device = {"numAttrs": 1, "attrs": [{"attr": 2, "value": {"deviceId": 999}}]}
    assert acl.rt.malloc_with_cfg(64, 0, bad_device) == (0, AclCode.ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.malloc_with_cfg(64, 0, {"numAttrs": 1, "attrs": [{"attr": 7, "value": {"rsv": 0}}]}) == (
        0,
        INVALID,
    )
    assert acl.rt.malloc_with_cfg(0, 0, {}) == (0, INVALID)
    assert acl.rt.malloc_with_cfg(64, 99, {}) == (0, INVALID)
    for cfg in (None, [], {"numAttrs": 2, "attrs": [{}]}, {"attrs": ["x"]}, {"attrs": [{"attr": 1, "value": 3}]}):
        with pytest.raises(TypeError, match=r"acl\.rt\.malloc_with_cfg args parse failed"):
            acl.rt.malloc_with_cfg(64, 0, cfg)
    with pytest.raises(TypeError, match=r"acl\.media\.dvpp_malloc_with_cfg args parse failed"):
        acl.media.dvpp_malloc_with_cfg(64, 0, 5)


def test_a_registered_host_pointer_is_device_memory_for_copies_that_name_the_side(stream):
    """memcpy_async honours its kind: a registered host range passes as device memory (its device pointer) and
    still as host memory; an unregistered one is refused as device memory."""
    data = bytes(range(64))
    ptr = acl.util.bytes_to_ptr(data)
    device, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy_async(device, 64, ptr, 64, 3, stream) == INVALID  # D2D from plain host memory
    dev_ptr, _ = acl.rt.host_register(ptr, 64, 0)
    assert acl.rt.memcpy_async(device, 64, dev_ptr, 64, 3, stream) == 0
    assert acl.rt.memcpy_async(device, 64, ptr, 64, H2D, stream) == 0
    assert acl.rt.memcpy2d_async(device, 8, dev_ptr, 8, 8, 8, 3, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(device, 64) == data
    assert acl.rt.host_unregister(ptr) == 0
    assert acl.rt.memcpy_async(device, 64, ptr, 64, 3, stream) == INVALID
