"""``openacl check``'s leak audit: every pyACL create/destroy pair (alloc/free, load/unload, subscribe/unsubscribe,
channel create/destroy) of the facade. Skipping the destroy is a leak at ``acl.finalize`` under the object's own
name, at the line that made it; doing it is clean. A new pair in the facade fails the audit until it is listed."""

from __future__ import annotations

import linecache
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import acl
from openacl.model import config as mdl_config
from openacl.model.model import DEMO_MODEL
from openacl.runtime import checker

THIS = __file__
VMM_PROP = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": 0, "type": 1}, "reserve": 0}
F16, F32 = 1, 0


def value(result):
    """The handle of a ``(handle, ret)`` answer (or a bare handle), checked."""
    if isinstance(result, tuple):
        result, ret = result
        assert ret == 0, ret
    assert result, result
    return result


def ok(ret) -> None:
    assert ret == 0, ret


class Env:
    """What a pair needs made before it (with checking off, so none of it is the pair's to report)."""

    def __init__(self, tmp_path) -> None:
        self.tmp_path = tmp_path
        self.page = value(acl.rt.mem_get_allocation_granularity(VMM_PROP, 0))
        self.model_bytes = DEMO_MODEL.read_bytes()
        self.model_ptr = acl.util.bytes_to_ptr(self.model_bytes)
        self.work = value(acl.rt.malloc(1 << 20, 0))
        self.weight = value(acl.rt.malloc(1 << 20, 0))
        self.tdesc = value(acl.create_tensor_desc(0, [2, 3], 2))
        self.tdesc16 = value(acl.create_tensor_desc(1, [2, 3], 2))
        self.stream = value(acl.rt.create_stream())
        self.thread_stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.model_id = value(acl.mdl.load_from_file(str(DEMO_MODEL)))
        self.prof_dir = str(tmp_path / "prof")
        self.subscribe_config = value(acl.prof.create_subscribe_config(1, 0, self._pipe()))

    def _pipe(self) -> int:
        import os

        read, write = os.pipe()
        self.pipe_read = read
        return write

    def _serve(self) -> None:
        while not self.thread_stop.is_set():
            if acl.rt.process_report(20) != 0:  # not subscribed yet (107012 at once), or nothing to run
                self.thread_stop.wait(0.005)

    def load_config(self) -> int:
        handle = value(acl.mdl.create_config_handle())
        ok(acl.mdl.set_config_opt(handle, mdl_config.LOAD_TYPE, mdl_config.FROM_FILE))
        ok(acl.mdl.set_config_opt(handle, mdl_config.PATH, str(DEMO_MODEL)))
        return handle

    def vdec_desc(self) -> int:
        desc = value(acl.media.vdec_create_channel_desc())
        ok(acl.media.vdec_set_channel_desc_channel_id(desc, 0))
        ok(acl.media.vdec_set_channel_desc_thread_id(desc, self.thread.ident))
        ok(acl.media.vdec_set_channel_desc_callback(desc, lambda *a: None))
        ok(acl.media.vdec_set_channel_desc_entype(desc, 3))
        ok(acl.media.vdec_set_channel_desc_out_pic_format(desc, 1))
        return desc

    def venc_desc(self) -> int:
        desc = value(acl.media.venc_create_channel_desc())
        ok(acl.media.venc_set_channel_desc_thread_id(desc, self.thread.ident))
        ok(acl.media.venc_set_channel_desc_callback(desc, lambda *a: None))
        ok(acl.media.venc_set_channel_desc_entype(desc, 3))
        ok(acl.media.venc_set_channel_desc_pic_width(desc, 128))
        ok(acl.media.venc_set_channel_desc_pic_height(desc, 128))
        return desc

    def close(self) -> None:
        import os

        self.thread_stop.set()
        self.thread.join(timeout=30)
        os.close(self.pipe_read)


@dataclass(frozen=True)
class Pair:
    """A create and its destroy: ``make`` calls the create (on its own line), ``undo`` the destroy."""

    create: str
    destroy: str
    label: str  # the name a leak of it is reported under
    make: Callable[[Env], object]
    undo: Callable[[Env, object], object]
    setup: Callable[[Env], object] = lambda env: None  # checking off: not the pair's


def _subscribed(env: Env) -> None:
    ok(acl.rt.subscribe_report(env.thread.ident, env.stream))


# fmt: off
PAIRS = [
    Pair("acl.rt.create_context", "acl.rt.destroy_context", "context",
         lambda e: acl.rt.create_context(0), lambda e, h: acl.rt.destroy_context(h)),
    Pair("acl.rt.create_stream", "acl.rt.destroy_stream", "stream",
         lambda e: acl.rt.create_stream(), lambda e, h: acl.rt.destroy_stream(h)),
    Pair("acl.rt.create_stream_with_config", "acl.rt.destroy_stream_force", "stream",
         lambda e: acl.rt.create_stream_with_config(0, 0), lambda e, h: acl.rt.destroy_stream_force(h)),
    Pair("acl.rt.create_event", "acl.rt.destroy_event", "event",
         lambda e: acl.rt.create_event(), lambda e, h: acl.rt.destroy_event(h)),
    Pair("acl.rt.create_event_with_flag", "acl.rt.destroy_event", "event",
         lambda e: acl.rt.create_event_with_flag(0), lambda e, h: acl.rt.destroy_event(h)),
    Pair("acl.rt.create_event_ex_with_flag", "acl.rt.destroy_event", "event",
         lambda e: acl.rt.create_event_ex_with_flag(1), lambda e, h: acl.rt.destroy_event(h)),
    Pair("acl.rt.create_notify", "acl.rt.destroy_notify", "notify",
         lambda e: acl.rt.create_notify(0), lambda e, h: acl.rt.destroy_notify(h)),
    Pair("acl.rt.malloc", "acl.rt.free", "device memory",
         lambda e: acl.rt.malloc(64, 0), lambda e, h: acl.rt.free(h)),
    Pair("acl.rt.malloc_align32", "acl.rt.free", "device memory",
         lambda e: acl.rt.malloc_align32(64, 0), lambda e, h: acl.rt.free(h)),
    Pair("acl.rt.malloc_cached", "acl.rt.free", "device memory",
         lambda e: acl.rt.malloc_cached(64, 0), lambda e, h: acl.rt.free(h)),
    Pair("acl.rt.malloc_with_cfg", "acl.rt.free", "device memory",
         lambda e: acl.rt.malloc_with_cfg(64, 0, {}), lambda e, h: acl.rt.free(h)),
    Pair("acl.rt.malloc_for_task_scheduler", "acl.rt.free", "device memory",
         lambda e: acl.rt.malloc_for_task_scheduler(64, 0, {}), lambda e, h: acl.rt.free(h)),
    Pair("acl.rt.malloc_host", "acl.rt.free_host", "host memory",
         lambda e: acl.rt.malloc_host(64), lambda e, h: acl.rt.free_host(h)),
    Pair("acl.rt.malloc_host_with_cfg", "acl.rt.free_host", "host memory",
         lambda e: acl.rt.malloc_host_with_cfg(64, {}), lambda e, h: acl.rt.free_host(h)),
    Pair("acl.rt.reserve_mem_address", "acl.rt.release_mem_address", "virtual address range",
         lambda e: acl.rt.reserve_mem_address(e.page, 0, 0, 0), lambda e, h: acl.rt.release_mem_address(h)),
    Pair("acl.rt.malloc_physical", "acl.rt.free_physical", "physical memory",
         lambda e: acl.rt.malloc_physical(e.page, VMM_PROP, 0), lambda e, h: acl.rt.free_physical(h)),
    Pair("acl.rt.mem_import_from_shareable_handle", "acl.rt.free_physical", "physical memory",
         lambda e: acl.rt.mem_import_from_shareable_handle(e.shareable, 0), lambda e, h: acl.rt.free_physical(h),
         setup=lambda e: setattr(e, "shareable", value(acl.rt.mem_export_to_shareable_handle(
             value(acl.rt.malloc_physical(e.page, VMM_PROP, 0)), 0, 0)))),
    Pair("acl.rt.map_mem", "acl.rt.unmap_mem", "memory mapping",
         lambda e: acl.rt.map_mem(e.vrange, e.page, 0, e.phys, 0) or e.vrange, lambda e, h: acl.rt.unmap_mem(h),
         setup=lambda e: (setattr(e, "vrange", value(acl.rt.reserve_mem_address(e.page, 0, 0, 0))),
                          setattr(e, "phys", value(acl.rt.malloc_physical(e.page, VMM_PROP, 0))))),
    Pair("acl.rt.subscribe_report", "acl.rt.unsubscribe_report", "report subscription",
         lambda e: acl.rt.subscribe_report(e.thread.ident, e.stream) or e.stream,
         lambda e, h: acl.rt.unsubscribe_report(e.thread.ident, h)),
    Pair("acl.create_data_buffer", "acl.destroy_data_buffer", "data buffer",
         lambda e: acl.create_data_buffer(e.work, 64), lambda e, h: acl.destroy_data_buffer(h)),
    Pair("acl.create_tensor_desc", "acl.destroy_tensor_desc", "tensor desc",
         lambda e: acl.create_tensor_desc(0, [2, 3], 2), lambda e, h: acl.destroy_tensor_desc(h)),
    Pair("acl.mdl.load_from_file", "acl.mdl.unload", "model",
         lambda e: acl.mdl.load_from_file(str(DEMO_MODEL)), lambda e, h: acl.mdl.unload(h)),
    Pair("acl.mdl.load_from_mem", "acl.mdl.unload", "model",
         lambda e: acl.mdl.load_from_mem(e.model_ptr, len(e.model_bytes)), lambda e, h: acl.mdl.unload(h)),
    Pair("acl.mdl.load_from_file_with_mem", "acl.mdl.unload", "model",
         lambda e: acl.mdl.load_from_file_with_mem(str(DEMO_MODEL), e.work, 1 << 20, e.weight, 1 << 20),
         lambda e, h: acl.mdl.unload(h)),
    Pair("acl.mdl.load_from_mem_with_mem", "acl.mdl.unload", "model",
         lambda e: acl.mdl.load_from_mem_with_mem(e.model_ptr, len(e.model_bytes), e.work, 1 << 20, e.weight, 1 << 20),
         lambda e, h: acl.mdl.unload(h)),
    Pair("acl.mdl.load_with_config", "acl.mdl.unload", "model",
         lambda e: acl.mdl.load_with_config(e.config), lambda e, h: acl.mdl.unload(h),
         setup=lambda e: setattr(e, "config", e.load_config())),
    Pair("acl.mdl.bundle_load_from_file", "acl.mdl.bundle_unload", "model",
         lambda e: acl.mdl.bundle_load_from_file(str(DEMO_MODEL)), lambda e, h: acl.mdl.bundle_unload(h)),
    Pair("acl.mdl.bundle_load_from_mem", "acl.mdl.bundle_unload", "model",
         lambda e: acl.mdl.bundle_load_from_mem(e.model_ptr, len(e.model_bytes)),
         lambda e, h: acl.mdl.bundle_unload(h)),
    Pair("acl.mdl.create_desc", "acl.mdl.destroy_desc", "model description",
         lambda e: acl.mdl.create_desc(), lambda e, h: acl.mdl.destroy_desc(h)),
    Pair("acl.mdl.create_aipp", "acl.mdl.destroy_aipp", "AIPP parameter set",
         lambda e: acl.mdl.create_aipp(1), lambda e, h: acl.mdl.destroy_aipp(h)),
    Pair("acl.mdl.create_config_handle", "acl.mdl.destroy_config_handle", "model load config",
         lambda e: acl.mdl.create_config_handle(), lambda e, h: acl.mdl.destroy_config_handle(h)),
    Pair("acl.mdl.create_exec_config_handle", "acl.mdl.destroy_exec_config_handle", "model execution config",
         lambda e: acl.mdl.create_exec_config_handle(), lambda e, h: acl.mdl.destroy_exec_config_handle(h)),
    Pair("acl.mdl.create_dataset", "acl.mdl.destroy_dataset", "dataset",
         lambda e: acl.mdl.create_dataset(), lambda e, h: acl.mdl.destroy_dataset(h)),
    Pair("acl.op.create_attr", "acl.op.destroy_attr", "op attr",
         lambda e: acl.op.create_attr(), lambda e, h: acl.op.destroy_attr(h)),
    Pair("acl.op.create_handle", "acl.op.destroy_handle", "op handle",
         lambda e: acl.op.create_handle("Relu", [e.tdesc], [e.tdesc], 0), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.op.create_handle_for_cast", "acl.op.destroy_handle", "op handle",
         lambda e: acl.op.create_handle_for_cast(e.tdesc, e.tdesc16, 0), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_gemm_ex", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_gemm_ex(0, 0, 0, 2, 3, 4, F16, F16, F16, 0),
         lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_hgemm", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_hgemm(0, 1, 0, 2, 3, 4, 0), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_s8gemm", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_s8gemm(0, 0, 0, 2, 3, 4, 1), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_gemv_ex", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_gemv_ex(1, 2, 3, F16, F16, F32, 0),
         lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_hgemv", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_hgemv(0, 2, 3, 0), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.blas.create_handle_for_s8gemv", "acl.op.destroy_handle", "op handle",
         lambda e: acl.blas.create_handle_for_s8gemv(1, 2, 3, 0), lambda e, h: acl.op.destroy_handle(h)),
    Pair("acl.media.dvpp_malloc", "acl.media.dvpp_free", "dvpp memory",
         lambda e: acl.media.dvpp_malloc(64), lambda e, h: acl.media.dvpp_free(h)),
    Pair("acl.media.dvpp_malloc_with_cfg", "acl.media.dvpp_free", "dvpp memory",
         lambda e: acl.media.dvpp_malloc_with_cfg(64, 0, {}), lambda e, h: acl.media.dvpp_free(h)),
    Pair("acl.media.dvpp_create_channel_desc", "acl.media.dvpp_destroy_channel_desc", "dvpp channel desc",
         lambda e: acl.media.dvpp_create_channel_desc(), lambda e, h: acl.media.dvpp_destroy_channel_desc(h)),
    Pair("acl.media.dvpp_create_channel", "acl.media.dvpp_destroy_channel", "dvpp channel",
         lambda e: acl.media.dvpp_create_channel(e.channel_desc) or e.channel_desc,
         lambda e, h: acl.media.dvpp_destroy_channel(h),
         setup=lambda e: setattr(e, "channel_desc", value(acl.media.dvpp_create_channel_desc()))),
    Pair("acl.media.dvpp_create_pic_desc", "acl.media.dvpp_destroy_pic_desc", "dvpp pic desc",
         lambda e: acl.media.dvpp_create_pic_desc(), lambda e, h: acl.media.dvpp_destroy_pic_desc(h)),
    Pair("acl.media.dvpp_create_batch_pic_desc", "acl.media.dvpp_destroy_batch_pic_desc", "dvpp batch pic desc",
         lambda e: acl.media.dvpp_create_batch_pic_desc(2), lambda e, h: acl.media.dvpp_destroy_batch_pic_desc(h)),
    Pair("acl.media.dvpp_create_stream_desc", "acl.media.dvpp_destroy_stream_desc", "dvpp stream desc",
         lambda e: acl.media.dvpp_create_stream_desc(), lambda e, h: acl.media.dvpp_destroy_stream_desc(h)),
    Pair("acl.media.dvpp_create_roi_config", "acl.media.dvpp_destroy_roi_config", "dvpp roi config",
         lambda e: acl.media.dvpp_create_roi_config(0, 15, 0, 15), lambda e, h: acl.media.dvpp_destroy_roi_config(h)),
    Pair("acl.media.dvpp_create_resize_config", "acl.media.dvpp_destroy_resize_config", "dvpp resize config",
         lambda e: acl.media.dvpp_create_resize_config(), lambda e, h: acl.media.dvpp_destroy_resize_config(h)),
    Pair("acl.media.dvpp_create_jpege_config", "acl.media.dvpp_destroy_jpege_config", "dvpp jpege config",
         lambda e: acl.media.dvpp_create_jpege_config(), lambda e, h: acl.media.dvpp_destroy_jpege_config(h)),
    Pair("acl.media.dvpp_create_border_config", "acl.media.dvpp_destroy_border_config", "dvpp border config",
         lambda e: acl.media.dvpp_create_border_config(), lambda e, h: acl.media.dvpp_destroy_border_config(h)),
    Pair("acl.media.vdec_create_channel_desc", "acl.media.vdec_destroy_channel_desc", "vdec channel desc",
         lambda e: acl.media.vdec_create_channel_desc(), lambda e, h: acl.media.vdec_destroy_channel_desc(h)),
    Pair("acl.media.vdec_create_frame_config", "acl.media.vdec_destroy_frame_config", "vdec frame config",
         lambda e: acl.media.vdec_create_frame_config(), lambda e, h: acl.media.vdec_destroy_frame_config(h)),
    Pair("acl.media.vdec_create_channel", "acl.media.vdec_destroy_channel", "vdec channel",
         lambda e: acl.media.vdec_create_channel(e.vdec) or e.vdec, lambda e, h: acl.media.vdec_destroy_channel(h),
         setup=lambda e: setattr(e, "vdec", e.vdec_desc())),
    Pair("acl.media.venc_create_channel_desc", "acl.media.venc_destroy_channel_desc", "venc channel desc",
         lambda e: acl.media.venc_create_channel_desc(), lambda e, h: acl.media.venc_destroy_channel_desc(h)),
    Pair("acl.media.venc_create_frame_config", "acl.media.venc_destroy_frame_config", "venc frame config",
         lambda e: acl.media.venc_create_frame_config(), lambda e, h: acl.media.venc_destroy_frame_config(h)),
    Pair("acl.media.venc_create_channel", "acl.media.venc_destroy_channel", "venc channel",
         lambda e: acl.media.venc_create_channel(e.venc) or e.venc, lambda e, h: acl.media.venc_destroy_channel(h),
         setup=lambda e: setattr(e, "venc", e.venc_desc())),
    Pair("acl.prof.init", "acl.prof.finalize", "profiling session",
         lambda e: acl.prof.init(e.prof_dir) or 1, lambda e, h: acl.prof.finalize()),
    Pair("acl.prof.create_config", "acl.prof.destroy_config", "profiling config",
         lambda e: acl.prof.create_config([0], 0, 0, 2), lambda e, h: acl.prof.destroy_config(h)),
    Pair("acl.prof.start", "acl.prof.stop", "profiling run",
         lambda e: acl.prof.start(e.prof_config) or e.prof_config, lambda e, h: acl.prof.stop(h),
         setup=lambda e: (acl.prof.init(e.prof_dir),
                          setattr(e, "prof_config", value(acl.prof.create_config([0], 0, 0, 2))))),
    Pair("acl.prof.create_subscribe_config", "acl.prof.destroy_subscribe_config", "profiling subscribe config",
         lambda e: acl.prof.create_subscribe_config(1, 0, e._pipe()),
         lambda e, h: acl.prof.destroy_subscribe_config(h)),
    Pair("acl.prof.model_subscribe", "acl.prof.model_unsubscribe", "profiling subscription",
         lambda e: acl.prof.model_subscribe(e.model_id, e.subscribe_config) or e.model_id,
         lambda e, h: acl.prof.model_unsubscribe(h)),
    Pair("acl.prof.create_step_info", "acl.prof.destroy_step_info", "profiling step info",
         lambda e: acl.prof.create_step_info(), lambda e, h: acl.prof.destroy_step_info(h)),
    Pair("acl.prof.create_stamp", "acl.prof.destroy_stamp", "profiling stamp",
         lambda e: acl.prof.create_stamp(), lambda e, h: acl.prof.destroy_stamp(h)),
]
# fmt: on

# Matched by the audit's pattern, but nothing the program owns that it must give back, and why.
NOT_OWNED = {
    "acl.init": "the process's own (finalize ends everything)",
    "acl.finalize": "the process's own",
    "acl.finalize_reference": "the process's own",
    "acl.mdl.init_dump": "a process setting, ended by finalize",
    "acl.mdl.finalize_dump": "a process setting",
    "acl.op.load": "registers operator models in memory; pyACL has no unload",
    "acl.rt.mem_export_to_shareable_handle": "a name for physical memory, not memory; pyACL has no release of it",
    "acl.prof.get_op_start": "a getter",
    "acl.prof.range_start": "a marker in a profile, not a resource",
    "acl.prof.range_stop": "a marker in a profile",
    "acl.prof.model_un_subscribe": "the other spelling of model_unsubscribe",
    "acl.util.start_thread": "a thread of the program's own: joining it is the program's business, not a device's",
    "acl.util.stop_thread": "see start_thread",
}

_PAIR_WORDS = re.compile(
    r"(^|_)(create|destroy|malloc|free|load|unload|subscribe|unsubscribe|un_subscribe|reserve|release|map|unmap|"
    r"init|finalize|start|stop|import|export)(_|$)"
)
_MODULES = ("acl", "acl.rt", "acl.mdl", "acl.op", "acl.media", "acl.prof", "acl.blas", "acl.util")


def facade_pair_functions() -> set[str]:
    names = set()
    for module_name in _MODULES:
        module = acl
        for part in module_name.split(".")[1:]:
            module = getattr(module, part)
        for name in module.__all__:
            if _PAIR_WORDS.search(name) and callable(getattr(module, name)):
                names.add(f"{module_name}.{name}")
    return names


def test_every_create_and_destroy_of_the_facade_is_audited():
    listed = {p.create for p in PAIRS} | {p.destroy for p in PAIRS} | set(NOT_OWNED)
    assert facade_pair_functions() == listed, facade_pair_functions() ^ listed


@pytest.fixture
def env(tmp_path):
    ok(acl.init())
    ok(acl.rt.set_device(0))
    made = Env(tmp_path)
    try:
        yield made
    finally:
        checker.enable(False)
        made.close()
        checker.reset()
        checker.take_findings()


def _made(env: Env, pair: Pair) -> object:
    pair.setup(env)
    checker.take_findings()
    checker.enable()
    return value(pair.make(env))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.create)
def test_a_leak_of_each_kind_is_reported_at_finalize_at_the_line_that_made_it(env, pair):
    _made(env, pair)
    ok(acl.finalize())
    leaks = [f for f in checker.findings() if f.kind == "leak"]
    noun = f"{pair.label} allocation" if pair.label.endswith("memory") else pair.label
    assert [f.what for f in leaks] == [f"1 {noun} still alive at acl.finalize"], checker.findings()
    [(_, frames)] = leaks[0].sites
    file, line, _ = frames[0]
    assert file == THIS and pair.create.rsplit(".", 1)[1] + "(" in linecache.getline(file, line), (file, line)
    assert [f.kind for f in checker.findings()] == ["leak"]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.create)
def test_each_kind_destroyed_is_clean(env, pair):
    handle = _made(env, pair)
    assert pair.undo(env, handle) in (0, None)  # None: a destroy that returns nothing in pyACL
    ok(acl.finalize())
    checker.report_leaks("exit")
    assert checker.findings() == []


VMM_PAIRS = [pair for pair in PAIRS if pair.label in ("virtual address range", "physical memory", "memory mapping")]


@pytest.mark.parametrize("pair", VMM_PAIRS, ids=lambda p: p.create)
def test_regression_virtual_memory_released_twice_is_a_double_free(env, pair):
    """VMM keeps its own tables, not handle tables: a second release returned its code but made no finding."""
    handle = _made(env, pair)
    assert pair.undo(env, handle) in (0, None)
    assert pair.undo(env, handle) not in (0, None)
    assert [(f.kind, f.what) for f in checker.findings()] == [
        ("double-free", f"{pair.label} {handle:#x} destroyed twice")
    ]
    checker.take_findings()


# ----- GE sessions: the program's until close(), GEFinalize, or it lets go of them -----


def _ge_session():
    from openacl import ge

    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    return ge.Session()


def _gepy_session():
    from ge.ge_global import GeApi
    from ge.session import Session

    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    return Session()


@pytest.mark.parametrize("make", [_ge_session, _gepy_session], ids=["openacl.ge", "ge-py"])
def test_a_ge_session_alive_at_exit_without_ge_finalize_leaks(checking, make):
    session = make()
    checker.report_leaks("exit")
    [leak] = checker.findings()
    assert (leak.kind, leak.what) == ("leak", "1 GE session still alive at exit")
    [(_, frames)] = leak.sites
    assert frames[0][0] == THIS and "Session()" in linecache.getline(THIS, frames[0][1])
    assert session


@pytest.mark.parametrize("make", [_ge_session, _gepy_session], ids=["openacl.ge", "ge-py"])
def test_a_ge_session_ended_by_ge_finalize_or_let_go_is_clean(checking, make):
    from openacl import ge

    make()  # let go of at once: ended when the garbage collector takes it
    import gc

    gc.collect()
    kept = make()
    assert ge.ge_finalize() == 0
    closed = _ge_session()
    assert closed.close() in (0, None)
    checker.report_leaks("exit")
    assert checker.findings() == [] and kept


# ----- misuse: callbacks on a stream no thread will serve -----


def _line_with(text: str) -> int:
    lines = Path(THIS).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_misuse_a_callback_left_on_a_stream_whose_thread_exited_is_found_at_synchronize(checking, stream):
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()  # the report thread is gone, its subscription is not
    assert acl.rt.subscribe_report(thread.ident, stream) == 0
    assert acl.rt.launch_callback(lambda data: None, None, 0, stream) == 0  # launch: no thread will run it
    assert acl.rt.synchronize_stream(stream) == 0  # sync: finds it
    [misuse] = [f for f in checker.findings() if f.kind == "misuse"]
    assert misuse.what.startswith("1 callback(s) launched on stream ") and " never ran: " in misuse.what
    assert "exited" in misuse.what
    assert {label: frames[0][1] for label, frames in misuse.sites} == {
        "access": _line_with("# sync: finds it"),
        "queued": _line_with("# launch: no thread will run it"),
    }


def _launch_in_a_helper(stream: int) -> int:
    return acl.rt.launch_callback(lambda data: None, None, 0, stream)  # launch: in a helper


def test_misuse_a_dropped_callbacks_launch_site_holds_the_programs_frames_above_the_launch(checking, stream):
    """The launch site is taken above openacl's frames (``raw_site``'s skip): its first frame is the program's
    launch line, and the program's caller follows it."""
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    assert acl.rt.subscribe_report(thread.ident, stream) == 0
    assert _launch_in_a_helper(stream) == 0  # launch: the helper's caller
    assert acl.rt.synchronize_stream(stream) == 0
    [misuse] = [f for f in checker.findings() if f.kind == "misuse"]
    queued = dict(misuse.sites)["queued"]
    assert [line for _, line, _ in queued[:2]] == [
        _line_with("# launch: in a helper"),
        _line_with("# launch: the helper's caller"),
    ]


def test_misuse_callbacks_dropped_by_unsubscribe_report(checking, stream):
    idle = threading.Event()
    thread = threading.Thread(target=idle.wait)  # subscribed, never calls process_report
    thread.start()
    try:
        assert acl.rt.subscribe_report(thread.ident, stream) == 0
        for _ in range(2):
            assert acl.rt.launch_callback(lambda data: None, None, 0, stream) == 0  # launch: dropped below
        assert acl.rt.unsubscribe_report(thread.ident, stream) == 0  # unsubscribe: drops them
    finally:
        idle.set()
        thread.join()
    [misuse] = [f for f in checker.findings() if f.kind == "misuse"]
    assert misuse.what.startswith("2 callback(s) launched on stream") and "unsubscribe_report came" in misuse.what
    assert {label: frames[0][1] for label, frames in misuse.sites} == {
        "access": _line_with("# unsubscribe: drops them"),
        "queued": _line_with("# launch: dropped below"),
    }


def test_no_misuse_for_callbacks_run_before_unsubscribe_nor_for_a_forced_destroy(checking, ctx):
    ran = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            acl.rt.process_report(20)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        stream, _ = acl.rt.create_stream()
        assert acl.rt.subscribe_report(thread.ident, stream) == 0
        assert acl.rt.launch_callback(ran.append, 1, 0, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.unsubscribe_report(thread.ident, stream) == 0
        assert acl.rt.destroy_stream(stream) == 0
    finally:
        stop.set()
        thread.join()
    idle = threading.Event()
    thread = threading.Thread(target=idle.wait)
    thread.start()
    stream, _ = acl.rt.create_stream()
    assert acl.rt.subscribe_report(thread.ident, stream) == 0
    assert acl.rt.launch_callback(ran.append, 2, 0, stream) == 0
    assert acl.rt.destroy_stream_force(stream) == 0  # the program asked for queued work to be dropped
    idle.set()
    thread.join()
    assert ran == [1]
    assert [(f.kind, f.what) for f in checker.findings()] == [
        ("leak", "1 report subscription still alive at destroy_stream_force")  # never unsubscribed: not a misuse
    ]


def test_misuse_a_stream_of_one_device_used_while_another_devices_context_is_current(checking):
    assert acl.rt.set_device(0) == 0
    context0, _ = acl.rt.create_context(0)
    stream0, _ = acl.rt.create_stream()  # created: on device 0
    dev0, _ = acl.rt.malloc(64, 0)
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 1, 64) == 0
    assert acl.rt.set_device(1) == 0
    context1, _ = acl.rt.create_context(1)
    assert acl.rt.memcpy_async(dev0, 64, host, 64, 1, stream0) == 0  # used: device 1 current
    assert acl.rt.launch_callback(lambda d: None, None, 0, stream0) == 107003  # CANN's code: not a finding
    assert acl.rt.set_context(context0) == 0
    assert acl.rt.synchronize_stream(stream0) == 0  # in its own context: fine
    [misuse] = checker.findings()
    assert misuse.kind == "misuse" and "of device 0 used while a context of device 1 is current" in misuse.what
    assert {label: frames[0][1] for label, frames in misuse.sites} == {
        "access": _line_with("# used: device 1 current"),
        "created": _line_with("# created: on device 0"),
    }
    for ret in (acl.rt.free(dev0), acl.rt.free_host(host), acl.rt.destroy_stream(stream0)):
        assert ret == 0
    assert acl.rt.destroy_context(context1) == 0 and acl.rt.destroy_context(context0) == 0


def test_regression_a_ge_session_alive_at_acl_finalize_is_not_a_leak(checking):
    """GE-PY's add_async sample calls acl.finalize before GEFinalize, its session still referenced: GE outlives
    pyACL, so the session was reported as leaked at acl.finalize although GEFinalize ended it."""
    from ge.ge_global import GeApi

    session = _gepy_session()
    assert acl.init() == 0
    assert acl.finalize() == 0
    assert GeApi.ge_finalize() == 0
    checker.report_leaks("exit")
    assert checker.findings() == [] and session


def test_regression_a_batch_pic_descs_own_members_were_reported_as_leaks(checking):
    """A batch pic desc makes its member pic descs and destroys them with itself; a leaked batch was reported as
    the batch plus N pic descs the program never made."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    acl.media.dvpp_create_batch_pic_desc(3)
    assert acl.finalize() == 0
    assert [f.what for f in checker.findings()] == ["1 dvpp batch pic desc still alive at acl.finalize"]
