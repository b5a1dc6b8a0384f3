"""The rest of the pyACL surface: app_log, get_soc_name, get_mem_info, last error, versions, attributes."""

from __future__ import annotations

import ctypes
import logging
import threading

import pytest

import acl
from openacl import process
from openacl.errors import AclCode
from openacl.log import MAX_LOG_STRING, TRUNCATED
from openacl.runtime import device as stream_mod
from openacl.runtime import exceptions
from openacl.runtime.sched.task import work_task

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
MB = 1024 * 1024


def app_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "openacl.app"]


# ----- app_log -----


@pytest.mark.parametrize(("level", "py_level"), [(0, logging.DEBUG), (1, logging.INFO), (2, logging.WARNING), (3, 40)])
def test_app_log_routes_each_level_to_the_app_module(acl_log, level, py_level):
    assert acl.app_log(level, f"message at {level}") is None
    (record,) = app_records(acl_log)
    assert record.levelno == py_level
    assert record.getMessage().endswith(f'app_log:__init__.py:{record.lineno}: "message at {level}"')
    assert record.getMessage().split(" ", 1)[0] == str(threading.get_native_id())


@pytest.mark.parametrize("level", [-1, 4, 99, -(1 << 31)])
def test_app_log_drops_levels_outside_0_to_3_silently(acl_log, level):
    assert acl.app_log(level, "dropped") is None
    assert app_records(acl_log) == []


def test_app_log_never_interprets_percent(acl_log):
    acl.app_log(3, "100% %s %d %(x)s")
    (record,) = app_records(acl_log)
    assert record.getMessage().endswith('"100% %s %d %(x)s"')


def test_app_log_caps_a_record_at_1024_bytes(acl_log):
    acl.app_log(3, "x" * 5000)
    acl.app_log(3, "é" * 2000)  # two bytes each: the cut never splits a character
    short = "y" * 10
    acl.app_log(3, short)
    long_ascii, long_utf8, kept = (r.getMessage() for r in app_records(acl_log))
    for line in (long_ascii, long_utf8):
        assert line.endswith(TRUNCATED)
        assert MAX_LOG_STRING - 1 <= len(line.encode("utf-8")) <= MAX_LOG_STRING
    assert kept.endswith(f'"{short}"')


def test_app_log_follows_the_app_module_level(monkeypatch, caplog):
    from openacl import log

    monkeypatch.setenv("ASCEND_MODULE_LOG_LEVEL", "GE=3:APP=2")
    log.configure()
    try:
        caplog.set_level(logging.DEBUG, logger="openacl.app")  # caplog lowers the level: undo for this check
        logging.getLogger("openacl.app").setLevel(log.module_level_from_env("APP"))
        acl.app_log(1, "info is below APP=2")
        acl.app_log(2, "warning passes")
        assert [r.getMessage().rsplit(" ", 2)[-2:] for r in app_records(caplog)] == [['"warning', 'passes"']]
    finally:
        monkeypatch.delenv("ASCEND_MODULE_LOG_LEVEL")
        log.configure()


@pytest.mark.parametrize("args", [(), (3,), ("3", "m"), (3, b"m"), (3.0, "m"), (1 << 31, "m"), (3, "m", 1)])
def test_app_log_bad_arguments_raise_type_error(args):
    with pytest.raises(TypeError, match=r"^acl\.app_log args parse failed$"):
        acl.app_log(*args)


def test_app_log_refuses_keywords():
    with pytest.raises(TypeError):
        acl.app_log(log_level=3, message="m")


# ----- get_soc_name, get_version -----


def test_soc_name_is_ascend310_by_default_and_needs_no_device(monkeypatch):
    monkeypatch.delenv("OPENACL_SOC_NAME", raising=False)
    assert acl.get_soc_name() == "Ascend310"
    assert acl.get_soc_name("ignored", 1) == "Ascend310"


def test_soc_name_follows_openacl_soc_name(monkeypatch):
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310B4")
    assert acl.get_soc_name().startswith("Ascend310B")
    monkeypatch.setenv("OPENACL_SOC_NAME", "")
    assert acl.get_soc_name() is None  # what pyACL gives when the runtime cannot say


def test_get_version_is_four_ints():
    result = acl.get_version()
    assert result == (1, 17, 0, 0)
    assert all(type(v) is int for v in result)


# ----- get_mem_info -----


def test_get_mem_info_needs_a_device(acl_log):
    assert acl.rt.get_mem_info(0) == (0, 0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)


def test_get_mem_info_is_the_simulated_capacity_minus_allocations(monkeypatch, ctx):
    monkeypatch.setenv("OPENACL_DEVICE_MEMORY_MB", "64")
    total = 64 * MB
    assert acl.rt.get_mem_info(0) == (total, total, 0)
    ptr, ret = acl.rt.malloc(3 * MB, 0)
    assert ret == 0
    for attr in (0, 1, 2, 3, 4, 5, 12, 13):
        assert acl.rt.get_mem_info(attr) == (total - 3 * MB, total, 0)
    assert acl.rt.free(ptr) == 0
    assert acl.rt.get_mem_info(1) == (total, total, 0)


def test_get_mem_info_counts_only_the_current_device(monkeypatch, ctx):
    monkeypatch.setenv("OPENACL_DEVICE_MEMORY_MB", "64")
    acl.rt.malloc(MB, 0)
    assert acl.rt.set_device(1) == 0
    assert acl.rt.get_mem_info(0) == (64 * MB, 64 * MB, 0)


@pytest.mark.parametrize("attr", [6, 7, 8, 9, 10, 11, 14, 15, 16, 17])
def test_get_mem_info_memory_the_device_lacks_reads_zero(ctx, attr):
    assert acl.rt.get_mem_info(attr) == (0, 0, 0)


@pytest.mark.parametrize("attr", [-1, 18, 1000])
def test_get_mem_info_unknown_attribute(ctx, attr):
    assert acl.rt.get_mem_info(attr) == (0, 0, INVALID)


def test_get_mem_info_bad_arguments():
    for args in ((), ("0",), (0.0,), (0, 0)):
        with pytest.raises(TypeError, match=r"^acl\.rt\.get_mem_info args parse failed$"):
            acl.rt.get_mem_info(*args)


# ----- last error, recent messages -----


def test_get_last_error_returns_then_clears_peek_does_not():
    assert acl.rt.get_last_error(0) == 0
    assert acl.rt.set_device(99) == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.peek_at_last_error(0) == 107001
    assert acl.rt.peek_at_last_error(0) == 107001
    assert acl.rt.get_last_error(0) == 107001
    assert acl.rt.get_last_error(0) == 0
    assert acl.rt.peek_at_last_error(0) == 0


def test_last_error_survives_successful_calls_and_keeps_the_newest(ctx):
    acl.rt.set_device(99)
    assert acl.rt.get_device() == (0, 0)
    assert acl.rt.peek_at_last_error(0) == 107001
    assert acl.rt.malloc_host(-1) == (0, AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert acl.rt.get_last_error(0) == 207001


def test_acl_layer_codes_are_not_last_errors(ctx):
    assert acl.rt.malloc(16, 99) == (0, INVALID)
    assert acl.rt.get_last_error(0) == 0


def test_last_error_is_per_thread():
    acl.rt.set_device(99)
    seen = {}

    def other():
        seen["before"] = acl.rt.peek_at_last_error(0)
        acl.rt.malloc_host(-1)
        seen["after"] = acl.rt.get_last_error(0)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == {"before": 0, "after": 207001}
    assert acl.rt.get_last_error(0) == 107001


@pytest.mark.parametrize("level", [1, -1, 1 << 20])
def test_last_error_level_must_be_0(level, acl_log):
    acl.rt.set_device(99)
    assert acl.rt.get_last_error(level) == INVALID
    assert acl.rt.peek_at_last_error(level) == INVALID
    assert acl.rt.peek_at_last_error(0) == 107001  # a refused read does not clear it


def test_last_error_bad_arguments():
    for fn in (acl.rt.get_last_error, acl.rt.peek_at_last_error):
        for args in ((), ("0",), (0, 0)):
            with pytest.raises(TypeError):
                fn(*args)


def test_last_error_is_forgotten_at_reset():
    acl.rt.set_device(99)
    process.reset(force=True)
    assert acl.rt.get_last_error(0) == 0


def test_recent_err_msg_lists_failures_newest_first_then_clears(ctx):
    assert acl.get_recent_err_msg() is None
    acl.rt.set_device(99)
    acl.rt.malloc(16, 99)
    text = acl.get_recent_err_msg()
    lines = text.splitlines()
    assert lines[0].startswith("acl.rt.malloc: ACL_ERROR_INVALID_PARAM(100000)")
    assert lines[1].startswith("acl.rt.set_device: ACL_ERROR_RT_INVALID_DEVICEID(107001)")
    assert acl.get_recent_err_msg() is None


def test_recent_err_msg_keeps_at_most_the_newest_64():
    for _ in range(exceptions.MAX_MESSAGES + 10):
        acl.rt.set_device(99)
    assert len(acl.get_recent_err_msg().splitlines()) == exceptions.MAX_MESSAGES


# ----- float16 -----


def test_float16_conversions():
    assert acl.float_to_float16(1.5) == 0x3E00
    assert acl.float_to_float16(1) == 0x3C00
    assert acl.float_to_float16(1e10) == 0x7C00  # too big: inf
    assert acl.float16_to_float(0x3E00) == 1.5
    assert acl.float16_to_float(0xC000) == -2.0
    assert acl.float16_to_float(0x13E00) == 1.5  # "H" keeps the low 16 bits
    with pytest.raises(TypeError):
        acl.float_to_float16("1.5")
    with pytest.raises(TypeError):
        acl.float16_to_float(1.0)


# ----- argument formats the census found wrong -----


def test_create_stream_with_config_parses_signed_ints(ctx):
    stream, ret = acl.rt.create_stream_with_config(3, 0)
    assert ret == 0 and stream
    assert acl.rt.create_stream_with_config(-1, 0) == (0, INVALID)
    with pytest.raises(TypeError):
        acl.rt.create_stream_with_config(1 << 31, 0)


def test_set_stream_failure_mode_truncates_the_mode_to_32_bits(stream):
    assert acl.rt.set_stream_failure_mode(stream, (1 << 32) + 1) == 0
    assert acl.rt.get_stream_attribute(stream, 1) == ({"failureMode": 1}, 0)


# ----- streams, events, contexts, devices -----


def test_stream_attributes_round_trip(stream):
    assert acl.rt.get_stream_attribute(stream, 2) == ({"overflowSwitch": 0}, 0)
    assert acl.rt.set_stream_attribute(stream, 2, {"overflowSwitch": 1}) == 0
    assert acl.rt.get_stream_overflow_switch(stream) == (1, 0)
    assert acl.rt.set_stream_overflow_switch(stream, 0) == 0
    assert acl.rt.get_stream_attribute(stream, 2) == ({"overflowSwitch": 0}, 0)
    assert acl.rt.set_stream_attribute(stream, 3, {"userCustomTag": 7}) == 0
    assert acl.rt.get_stream_attribute(stream, 3) == ({"userCustomTag": 7}, 0)
    assert acl.rt.set_stream_attribute(stream, 1, {"failureMode": 1}) == 0
    assert acl.rt.get_stream_attribute(stream, 1) == ({"failureMode": 1}, 0)


def test_stream_attribute_errors(stream):
    assert acl.rt.set_stream_overflow_switch(stream, 2) == INVALID
    assert acl.rt.set_stream_attribute(stream, 1, {"failureMode": 5}) == INVALID
    assert acl.rt.set_stream_attribute(stream, 9, {"reserved": 0}) == INVALID
    assert acl.rt.get_stream_attribute(stream, 9) == ({}, INVALID)
    assert acl.rt.get_stream_overflow_switch(0xDEAD0) == (0, INVALID)
    with pytest.raises(TypeError):
        acl.rt.set_stream_attribute(stream, 2, 1)
    with pytest.raises(TypeError):
        acl.rt.set_stream_attribute(stream, 2, {"failureMode": 1})


def test_event_ex_timestamp_id_and_wait_status(stream):
    event, ret = acl.rt.create_event_ex_with_flag(0x8)
    assert ret == 0
    assert acl.rt.event_get_timestamp(event) == (0, AclCode.ACL_ERROR_RT_EVENT_NOT_COMPLETE)
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event(event) == 0
    stamp, ret = acl.rt.event_get_timestamp(event)
    assert ret == 0 and stamp > 0
    assert acl.rt.query_event_wait_status(event) == (0, 0)
    event_id, ret = acl.rt.get_event_id(event)
    other, _ = acl.rt.create_event()
    assert ret == 0 and acl.rt.get_event_id(other)[0] != event_id
    assert acl.rt.create_event_ex_with_flag(0x80000000) == (0, INVALID)
    assert acl.rt.get_event_id(0xDEAD0) == (0, INVALID)


def test_context_and_device_queries(ctx):
    stream, ret = acl.rt.ctx_get_current_default_stream()
    assert ret == 0 and stream
    assert acl.rt.stream_query(stream) == (0, 0)  # a real stream handle
    assert acl.rt.destroy_stream(stream) == INVALID  # ... that only its context destroys
    assert acl.rt.get_primary_ctx_state(0) == (1, 0, 0)
    assert acl.rt.get_primary_ctx_state(3) == (0, 0, 0)
    assert acl.rt.get_primary_ctx_state(99) == (0, 0, AclCode.ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.query_device_status(0) == (0, 0)
    assert acl.rt.query_device_status(99)[1] == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.device_get_stream_priority_range() == (7, 0, 0)
    for fn in (
        acl.rt.get_logic_dev_id_by_user_dev_id,
        acl.rt.get_user_dev_id_by_logic_dev_id,
        acl.rt.get_logic_dev_id_by_phy_dev_id,
        acl.rt.get_phy_dev_id_by_logic_dev_id,
    ):
        assert fn(5) == (5, 0)
        assert fn(99) == (0, AclCode.ACL_ERROR_RT_INVALID_DEVICEID)


def test_default_stream_query_without_context():
    assert acl.rt.ctx_get_current_default_stream() == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)


def test_op_timeouts_and_synchronize_device_with_timeout(stream):
    assert acl.rt.get_op_execute_timeout() == (0, 0)
    assert acl.rt.set_op_execute_time_out(3) == 0
    assert acl.rt.get_op_execute_timeout() == (3000, 0)
    assert acl.rt.set_op_wait_timeout(10) == 0
    assert acl.rt.synchronize_device_with_timeout(-1) == 0
    assert acl.rt.synchronize_device_with_timeout(1000) == 0
    assert acl.rt.synchronize_device_with_timeout(-2) == INVALID


def test_synchronize_device_with_timeout_times_out(stream):
    gate = threading.Event()
    # A task that holds the stream until the gate opens (through the runtime: pyACL has no such call).
    stream_mod.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))
    try:
        assert acl.rt.synchronize_device_with_timeout(50) == AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        assert acl.rt.peek_at_last_error(0) == AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    finally:
        gate.set()
    assert acl.rt.synchronize_device_with_timeout(5000) == 0


# ----- memory attributes and operations -----


def test_pointer_attributes(ctx):
    dev, _ = acl.rt.malloc(64, 0)
    host, _ = acl.rt.malloc_host(64)
    attrs, ret = acl.rt.pointer_get_attributes(dev + 8)
    assert ret == 0 and attrs["location"] == {"id": 0, "type": 1} and attrs["page_size"] > 0
    assert attrs["rsv"] == [0, 0, 0, 0]
    assert acl.rt.pointer_get_attributes(host)[0]["location"] == {"id": 0, "type": 0}
    data = b"abcdefgh"
    assert acl.rt.pointer_get_attributes(acl.util.bytes_to_ptr(data))[0]["location"]["type"] == 2
    assert acl.rt.pointer_get_attributes(0x10)[0] == {"location": {"id": 0, "type": 2}, "page_size": 0, "rsv": [0] * 4}
    acl.rt.free_host(host)


def test_malloc_variants_and_cache_maintenance(ctx):
    for alloc in (acl.rt.malloc_align32, acl.rt.malloc_cached):
        ptr, ret = alloc(100, 0)
        assert ret == 0 and ptr % 32 == 0
        assert acl.rt.mem_flush(ptr, 100) == 0
        assert acl.rt.mem_invalidate(ptr, 100) == 0
        assert acl.rt.mem_flush(ptr, 101) == INVALID
        assert acl.rt.mem_invalidate(ptr, 0) == INVALID
        assert acl.rt.free(ptr) == 0
    assert acl.rt.malloc_align32(16, 99) == (0, INVALID)


def test_memcpy2d_copies_rows_between_pitches(ctx, stream):
    host, _ = acl.rt.malloc_host(4 * 8)
    dev, _ = acl.rt.malloc(3 * 16, 0)
    ctypes.memmove(host, bytes(range(32)), 32)
    assert acl.rt.memset(dev, 48, 0xEE, 48) == 0
    assert acl.rt.memcpy2d(dev, 16, host, 8, 5, 3, 1) == 0  # 3 rows of 5 bytes, pitch 8 -> pitch 16
    got = ctypes.string_at(dev, 48)
    for row in range(3):
        assert got[row * 16 : row * 16 + 5] == bytes(range(row * 8, row * 8 + 5))
        assert got[row * 16 + 5 : row * 16 + 16] == b"\xee" * 11
    back, _ = acl.rt.malloc_host(15)
    assert acl.rt.memcpy2d_async(back, 5, dev, 16, 5, 3, 2, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert ctypes.string_at(back, 15) == bytes([*range(0, 5), *range(8, 13), *range(16, 21)])


def test_memcpy2d_checks(ctx):
    host, _ = acl.rt.malloc_host(32)
    dev, _ = acl.rt.malloc(32, 0)
    assert acl.rt.memcpy2d(dev, 4, host, 8, 5, 2, 1) == INVALID  # width > dpitch
    assert acl.rt.memcpy2d(dev, 16, host, 8, 8, 5, 1) == INVALID  # source span 40 > 32
    assert acl.rt.memcpy2d(dev, 8, host, 8, 8, 2, 2) == INVALID  # kind D2H but the source is host memory
    assert acl.rt.memcpy2d(dev, 8, host, 8, 8, 2, 0) == INVALID  # H2H is not a 2-D kind
    assert acl.rt.memcpy2d(dev, 8, 0x10, 8, 8, 2, 4) == INVALID
    with pytest.raises(TypeError):
        acl.rt.memcpy2d(dev, 8, host, 8, 8, 2)
