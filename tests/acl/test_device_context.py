"""Devices and contexts: ``set_device`` / ``reset_device`` / contexts per thread / run mode."""

from __future__ import annotations

import threading

import pytest

import acl
from openacl.errors import AclCode
from openacl.runtime import device as _device
from openacl.runtime import memory

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
NO_CONTEXT = AclCode.ACL_ERROR_RT_CONTEXT_NULL
BAD_DEVICE = AclCode.ACL_ERROR_RT_INVALID_DEVICEID


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


def engine_threads(device_id: int | None = None) -> list[threading.Thread]:
    prefix = "openacl-engine-" if device_id is None else f"openacl-engine-d{device_id}-"
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def in_thread(fn):
    """Run ``fn`` on a fresh thread; return its result (re-raising its exception)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


# ----- devices -----


def test_device_count_defaults_to_eight(monkeypatch):
    monkeypatch.delenv("OPENACL_DEVICE_COUNT", raising=False)
    assert acl.rt.get_device_count() == (8, 0)


def test_device_count_from_the_environment(monkeypatch, acl_log):
    monkeypatch.setenv("OPENACL_DEVICE_COUNT", "2")
    assert acl.rt.get_device_count() == (2, 0)
    assert acl.rt.set_device(1) == 0
    assert acl.rt.set_device(2) == BAD_DEVICE
    (line,) = logged(acl_log, "acl.rt.set_device", 107001)
    assert "device 2 does not exist (0..1)" in line


def test_device_count_unreadable_environment_falls_back(monkeypatch, acl_log):
    monkeypatch.setenv("OPENACL_DEVICE_COUNT", "many")
    assert acl.rt.get_device_count() == (8, 0)
    assert any("OPENACL_DEVICE_COUNT='many' is not a number" in r.getMessage() for r in acl_log.records)


@pytest.mark.parametrize("device_id", [-1, 8, 1000, (1 << 31) - 1])
def test_set_device_invalid_id(acl_log, device_id):
    assert acl.rt.set_device(device_id) == BAD_DEVICE
    (line,) = logged(acl_log, "acl.rt.set_device", 107001)
    assert f"device {device_id} does not exist (0..7)" in line
    assert acl.rt.get_device() == (0, NO_CONTEXT)


@pytest.mark.parametrize("call", ["reset_device", "reset_device_force", "create_context"])
def test_other_device_calls_check_the_id(acl_log, call):
    result = getattr(acl.rt, call)(8)
    assert (result if isinstance(result, int) else result[1]) == BAD_DEVICE
    assert logged(acl_log, f"acl.rt.{call}", 107001)


def test_set_device_makes_its_default_context_current():
    assert acl.rt.set_device(3) == 0
    assert acl.rt.get_device() == (3, 0)
    context, ret = acl.rt.get_context()
    assert ret == 0 and context != 0
    assert acl.rt.set_device(3) == 0
    assert acl.rt.get_context() == (context, 0)  # one default context per device


def test_get_device_without_a_context(acl_log):
    _, ret = acl.rt.get_device()
    assert ret == NO_CONTEXT
    (line,) = logged(acl_log, "acl.rt.get_device", 107002)
    assert "this thread has no current context" in line


def test_get_run_mode_is_host():
    assert acl.rt.get_run_mode() == (1, 0)


def test_reset_device_counts_set_device_calls():
    assert acl.rt.set_device(0) == 0
    assert acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.stream_get_id(stream)[1] == 0  # still open: one reference left
    assert acl.rt.get_device() == (0, 0)
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.stream_get_id(stream)[1] == INVALID
    assert acl.rt.get_device()[1] == NO_CONTEXT


def test_reset_device_force_ignores_the_count():
    for _ in range(3):
        assert acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    assert acl.rt.reset_device_force(0) == 0
    assert acl.rt.stream_get_id(stream)[1] == INVALID
    assert acl.rt.get_device()[1] == NO_CONTEXT


def test_reset_device_that_was_never_set_is_harmless(acl_log):
    assert acl.rt.reset_device(5) == 0
    assert acl.rt.reset_device(5) == 0
    assert acl.rt.set_device(5) == 0
    assert acl.rt.get_device() == (5, 0)


def test_device_can_be_set_again_after_reset():
    assert acl.rt.set_device(0) == 0
    first, _ = acl.rt.get_context()
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_device(0) == 0
    second, ret = acl.rt.get_context()
    assert ret == 0 and second != first
    assert acl.rt.create_stream()[1] == 0


def test_device_teardown_stops_engine_threads():
    assert acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(64, 0)
    try:
        for _ in range(4):
            assert acl.rt.memcpy_async(dev, 64, host, 64, 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert engine_threads(0), "an engine thread runs the copies"
        assert acl.rt.reset_device(0) == 0
        assert engine_threads(0) == []
    finally:
        acl.rt.free_host(host)


def test_device_teardown_frees_memory_and_events():
    assert acl.rt.set_device(0) == 0
    dev, _ = acl.rt.malloc(64, 0)
    event, _ = acl.rt.create_event()
    assert acl.rt.reset_device(0) == 0
    assert memory.space.find(dev, 1) is None
    assert acl.rt.query_event(event)[1] == INVALID


def test_devices_are_independent():
    assert acl.rt.set_device(0) == 0
    s0, _ = acl.rt.create_stream()
    assert acl.rt.set_device(1) == 0
    s1, _ = acl.rt.create_stream()
    assert acl.rt.get_device() == (1, 0)
    assert acl.rt.reset_device(1) == 0
    assert acl.rt.stream_get_id(s1)[1] == INVALID
    assert acl.rt.stream_get_id(s0)[1] == 0


# ----- contexts -----


def test_create_context_makes_it_current(ctx):
    assert acl.rt.get_context() == (ctx, 0)
    assert acl.rt.get_device() == (0, 0)
    other, ret = acl.rt.create_context(2)
    assert ret == 0 and other != ctx
    assert acl.rt.get_context() == (other, 0)
    assert acl.rt.get_device() == (2, 0)
    assert acl.rt.set_context(ctx) == 0
    assert acl.rt.get_device() == (0, 0)


def test_create_context_without_set_device_opens_the_device():
    context, ret = acl.rt.create_context(4)
    assert ret == 0
    assert acl.rt.get_device() == (4, 0)
    assert acl.rt.create_stream()[1] == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.get_context() == (0, NO_CONTEXT)


def test_a_new_thread_has_no_context(ctx, acl_log):
    assert in_thread(acl.rt.get_context) == (0, NO_CONTEXT)
    assert in_thread(acl.rt.get_device)[1] == NO_CONTEXT
    assert in_thread(acl.rt.create_stream) == (0, NO_CONTEXT)
    assert logged(acl_log, "acl.rt.get_context", 107002)
    assert acl.rt.get_context() == (ctx, 0)  # the main thread's is untouched


def test_set_context_across_threads(ctx):
    stream, _ = acl.rt.create_stream()

    def worker():
        assert acl.rt.set_context(ctx) == 0
        dev, ret = acl.rt.malloc(16, 0)
        assert ret == 0
        assert acl.rt.memset_async(dev, 16, 0x5F, 16, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        return acl.rt.get_context(), acl.rt.get_device(), acl.util.ptr_to_bytes(dev, 16)

    assert in_thread(worker) == ((ctx, 0), (0, 0), b"\x5f" * 16)


def test_set_context_in_one_thread_does_not_change_another(ctx):
    other, _ = acl.rt.create_context(1)
    assert acl.rt.set_context(ctx) == 0
    ready, switched = threading.Event(), threading.Event()
    seen = []

    def worker():
        acl.rt.set_context(ctx)
        ready.set()
        assert switched.wait(10)
        seen.append(acl.rt.get_context())

    thread = threading.Thread(target=worker)
    thread.start()
    assert ready.wait(10)
    assert acl.rt.set_context(other) == 0
    switched.set()
    thread.join()
    assert seen == [(ctx, 0)]
    assert acl.rt.get_context() == (other, 0)


def test_destroy_context(ctx, acl_log):
    stream, _ = acl.rt.create_stream()
    assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.get_context() == (0, NO_CONTEXT)  # it was current: now there is none
    assert acl.rt.stream_get_id(stream)[1] == INVALID  # its streams went with it
    assert acl.rt.destroy_context(ctx) == INVALID
    assert acl.rt.set_context(ctx) == INVALID
    assert logged(acl_log, "acl.rt.destroy_context", 100000)
    (line,) = logged(acl_log, "acl.rt.set_context", 100000)
    assert "context" in line and "does not exist" in line


def test_destroy_context_keeps_the_device_while_set(ctx):
    default_stream_work, _ = acl.rt.malloc(8, 0)
    assert acl.rt.destroy_context(ctx) == 0
    # set_device in the fixture still holds device 0: its memory is still there.
    assert memory.space.find(default_stream_work, 8) is not None
    assert acl.rt.set_device(0) == 0
    assert acl.rt.get_device() == (0, 0)


def test_destroy_the_default_context(acl_log):
    assert acl.rt.set_device(0) == 0
    default, _ = acl.rt.get_context()
    assert acl.rt.destroy_context(default) == INVALID
    (line,) = logged(acl_log, "acl.rt.destroy_context", 100000)
    assert "default context" in line
    assert acl.rt.get_context() == (default, 0)


@pytest.mark.parametrize("handle", [0, 1, 0xDEADBEEF, -1])
def test_unknown_context_handles(acl_log, handle):
    assert acl.rt.set_context(handle) == INVALID
    assert acl.rt.destroy_context(handle) == INVALID
    assert logged(acl_log, "acl.rt.set_context", 100000)
    assert logged(acl_log, "acl.rt.destroy_context", 100000)


def test_handle_of_another_kind_is_not_a_context(ctx):
    stream, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    assert acl.rt.set_context(stream) == INVALID
    assert acl.rt.set_context(event) == INVALID
    assert acl.rt.destroy_context(stream) == INVALID


def test_context_destroyed_by_another_thread_is_gone_here(ctx):
    assert in_thread(lambda: acl.rt.destroy_context(ctx)) == 0
    assert acl.rt.get_context() == (0, NO_CONTEXT)


def test_stale_default_context_after_reset():
    assert acl.rt.set_device(0) == 0
    default, _ = acl.rt.get_context()
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_context(default) == INVALID
    assert acl.rt.get_context() == (0, NO_CONTEXT)


def test_contexts_are_counted_by_the_runtime(ctx):
    before = len(_device.contexts)
    made = [acl.rt.create_context(0)[0] for _ in range(5)]
    assert len(_device.contexts) == before + 5
    for handle in made:
        assert acl.rt.destroy_context(handle) == 0
    assert len(_device.contexts) == before
