"""Profiling sessions (``aclprofInit`` .. ``aclprofFinalize``) and model subscriptions.

A session writes, for each ``start``/``stop`` window, a directory ``PROF_<n>_<time>_<pid>`` under the path
given to ``init``, holding ``mindstudio_profiler_output/`` with msprof's summaries (``op_summary_<time>.csv``,
``task_time_<time>.csv``, see :mod:`.summary`) and the timeline ``msprof_<time>.json`` (Chrome trace JSON, as
``openacl trace`` writes it, with every operator on a track per model).

Operator times come from model/profiled.py, which runs a profiled model on onnxruntime's profiler and hands
each execution's operators to :func:`deliver`; what a window collects is every operator that started inside
it on one of its devices, when its ``data_type_config`` asks for task times (``ACL_PROF_TASK_TIME`` or
``ACL_PROF_TASK_TIME_L0``). Other stream tasks (copies, memsets) come from the timeline recorder of
``openacl.trace``, which a window starts if nothing records yet.

Codes (decisions where CANN's docs are silent, each tested):
- ``init`` twice: ``ACL_ERROR_REPEAT_INITIALIZE``; an empty path, or one that is not a directory and cannot be
  made one: ``ACL_ERROR_INVALID_PARAM``.
- ``start`` / ``stop`` / ``finalize`` before ``init``: ``ACL_ERROR_PROF_NOT_RUN``; ``start`` of a config whose
  device is already profiled: ``ACL_ERROR_PROF_ALREADY_RUN``; ``stop`` of a config that was not started:
  ``ACL_ERROR_PROF_NOT_RUN``; ``finalize`` stops what still runs (writing its files) first.
- ``model_subscribe`` of a model already subscribed: ``ACL_ERROR_PROF_REPEAT_SUBSCRIBE``; ``model_unsubscribe``
  of one that is not: ``ACL_ERROR_INVALID_PARAM``. Subscriptions need no ``init``.

Invariant: ``_lock`` is held only to change this module's tables (and, in ``start``, to start the window's
timeline recorder, which runs no user code); never while a file is written, a pipe is written or a log line is
emitted.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from dataclasses import dataclass, field

from openacl import atfork, trace
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import checker
from openacl.runtime import device as _device
from openacl.runtime.handles import HandleTable
from openacl.runtime.prof import opdesc, summary
from openacl.runtime.prof.pipe import PipeEnd, PipeWriter

log = get_logger("prof")

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM

# aclprofConfig's data_type_config bits that ask for task and operator times
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_TASK_TIME_L0 = 0x0800
TASK_TIME_BITS = ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0
ACL_AICORE_NONE = 0xFF  # aicore metrics run 0 .. 0xFF (none); a CPU collects none of them
MAX_PATH_LEN = 4095


@dataclass(frozen=True)
class Config:
    """``aclprofConfig``: which devices, which AI Core metrics (recorded, not collected), which data."""

    device_ids: tuple[int, ...]
    aicore_metrics: int
    data_type_config: int


@dataclass(frozen=True)
class SubscribeConfig:
    """``aclprofSubscribeConfig``: whether records carry times, and the pipe's write descriptor."""

    time_info: bool
    aicore_metrics: int
    fd: int


@dataclass
class _Window:
    """One ``start`` .. ``stop``: what it collects, in memory until ``stop`` writes it."""

    config: Config
    start_ns: int  # epoch
    perf_start_ns: int  # trace clock
    recorder: trace.Recorder | None
    owns_recorder: bool
    ops: list[summary.OpRun] = field(default_factory=list)
    tasks: list[summary.TaskRun] = field(default_factory=list)


@dataclass
class _Subscription:
    end: PipeEnd
    time_info: bool
    since_ns: int


configs: HandleTable[Config] = HandleTable("profiling config")
subscribe_configs: HandleTable[SubscribeConfig] = HandleTable("profiling subscribe config")

_lock = atfork.lock()
_result_path: str | None = None
_windows: dict[int, _Window] = {}  # by config handle
_subscriptions: dict[int, _Subscription] = {}  # by model id
_settings: dict[int, str] = {}  # set_config
_dir_numbers = itertools.count(1)
writer = PipeWriter(opdesc.RECORD_SIZE)
# Invariant: True exactly while a window collects task times or a model is subscribed; read without the lock on
# every model execution, so profiling costs one attribute read when off.
active = False


def _update_active_locked() -> None:
    global active
    active = bool(_subscriptions) or any(w.config.data_type_config & TASK_TIME_BITS for w in _windows.values())


# ----- session -----


def init(result_path: str) -> None:
    global _result_path
    if not result_path or len(result_path) > MAX_PATH_LEN:
        raise AclError(_INVALID, f"result path must be 1..{MAX_PATH_LEN} characters, got {len(result_path)}")
    path = os.path.abspath(result_path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise AclError(_INVALID, f"profiling result path {result_path!r}: {exc.strerror}") from None
    if not os.access(path, os.W_OK):
        raise AclError(_INVALID, f"profiling result path {result_path!r} is not writable")
    with _lock:
        if _result_path is not None:
            raise AclError(AclCode.ACL_ERROR_REPEAT_INITIALIZE, "acl.prof.init was already called")
        _result_path = path
    if checker.enabled:
        checker.on_create("profiling session", 0)  # one a process: acl.prof.finalize ends it


def keeps_model_bytes() -> bool:
    """Whether a model loaded from memory now keeps its bytes: while a session is initialised or anything is
    profiled, a profiled twin may be built from them (model/profiled.py)."""
    return active or _result_path is not None


def _require_init_locked(what: str) -> str:
    if _result_path is None:
        raise AclError(AclCode.ACL_ERROR_PROF_NOT_RUN, f"{what} before acl.prof.init")
    return _result_path


def finalize() -> list[str]:
    """Stop every window (writing its files); returns the directories written."""
    global _result_path
    with _lock:
        _require_init_locked("acl.prof.finalize")
        running = list(_windows)
    with checker.reclaiming("acl.prof.finalize"):  # a window the program never stopped (acl.prof.stop) leaked
        written = [stop(handle) for handle in running]
    with _lock:
        _result_path = None
        _settings.clear()
    if checker.enabled:
        checker.on_destroy("profiling session", 0)
    return written


def create_config(device_ids: list[int], aicore_metrics: int, aicore_events: int, data_type_config: int) -> int:
    count = _device.device_count()
    if not device_ids:
        raise AclError(_INVALID, "device id list is empty")
    bad = [d for d in device_ids if not 0 <= d < count]
    if bad:
        raise AclError(_INVALID, f"device ids {bad} are not in 0..{count - 1}")
    if len(set(device_ids)) != len(device_ids):
        raise AclError(_INVALID, f"device ids {device_ids} repeat a device")
    if not 0 <= aicore_metrics <= ACL_AICORE_NONE:
        raise AclError(_INVALID, f"aicore_metrics {aicore_metrics} is not an aclprofAicoreMetrics")
    if aicore_events != 0:
        raise AclError(_INVALID, "aicore_events is reserved and must be 0 (NULL)")
    return configs.add(Config(tuple(device_ids), aicore_metrics, data_type_config))


def destroy_config(handle: int) -> None:
    with _lock:
        if handle in _windows:
            raise AclError(_INVALID, f"profiling config {handle:#x} is running: stop it first")
        configs.remove(handle)


def start(handle: int) -> None:
    config = configs.get(handle)
    with _lock:
        _require_init_locked("acl.prof.start")
        busy = {d for w in _windows.values() for d in w.config.device_ids} & set(config.device_ids)
        if busy:
            raise AclError(AclCode.ACL_ERROR_PROF_ALREADY_RUN, f"devices {sorted(busy)} are already profiled")
        owns = trace.recorder is None and bool(config.data_type_config & TASK_TIME_BITS)
        recorder = trace.start() if owns else trace.recorder
        _windows[handle] = _Window(config, time.time_ns(), trace.now_ns(), recorder, owns)
        _update_active_locked()
    if checker.enabled:
        checker.on_create("profiling run", handle)


def stop(handle: int) -> str:
    """End a window and write its files; returns its directory."""
    configs.get(handle)
    with _lock:
        result_path = _require_init_locked("acl.prof.stop")
        window = _windows.pop(handle, None)
        if window is None:
            raise AclError(AclCode.ACL_ERROR_PROF_NOT_RUN, f"profiling config {handle:#x} was not started")
        _update_active_locked()
        number = next(_dir_numbers)
        sharing = [w for w in _windows.values() if w.recorder is window.recorder]
        if sharing and window.owns_recorder:  # the recorder stops with the last window that uses it
            sharing[0].owns_recorder, window.owns_recorder = True, False
    if checker.enabled:
        checker.on_destroy("profiling run", handle)
    rec = window.recorder
    if rec is not None:
        window.tasks.extend(_stream_tasks(rec, window))
        if window.owns_recorder and trace.recorder is rec:
            trace.stop()
    return _write(result_path, number, window)


def _stream_tasks(rec: trace.Recorder, window: _Window) -> list[summary.TaskRun]:
    """The recorder's stream tasks of the window's devices (model executions come from ``deliver``)."""
    offset = window.start_ns - window.perf_start_ns
    devices = set(window.config.device_ids)
    return [
        summary.TaskRun(
            span.args.get("device", 0),
            span.name,
            span.args.get("stream", 0),
            span.start_ns + offset,
            span.end_ns + offset,
        )
        for span in list(rec.spans)
        if span.category == "task"
        and not span.name.startswith("model_execute:")
        and span.start_ns >= window.perf_start_ns
        and span.args.get("device", 0) in devices
    ]


def _write(result_path: str, number: int, window: _Window) -> str:
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(window.start_ns / 1e9))
    millis = (window.start_ns // 1_000_000) % 1000
    directory = os.path.join(result_path, f"PROF_{number:06d}_{stamp}{millis:03d}_{os.getpid()}")
    out = os.path.join(directory, "mindstudio_profiler_output")
    os.makedirs(out, exist_ok=True)
    try:
        if window.config.data_type_config & TASK_TIME_BITS:
            summary.write_csv(
                os.path.join(out, f"op_summary_{stamp}.csv"), summary.OP_SUMMARY_COLUMNS, summary.op_rows(window.ops)
            )
            summary.write_csv(
                os.path.join(out, f"task_time_{stamp}.csv"),
                summary.TASK_TIME_COLUMNS,
                summary.task_rows(window.ops, window.tasks),
            )
        trace.write(os.path.join(out, f"msprof_{stamp}.json"), window.recorder or trace.Recorder())
    except OSError as exc:
        raise AclError(AclCode.ACL_ERROR_WRITE_FILE, f"cannot write profiling data to {out}: {exc}") from None
    log.info("profiling data written to %s", directory)
    return directory


def set_config(config_type: int, value: str) -> None:
    """``aclprofSetConfig``: recorded (storage limits, sampling frequencies have no meaning here).

    Decision: types 1..31 (``aclprofConfigType`` lies between ``ACL_PROF_ARGS_MIN`` 0 and its max) with a
    non-empty value are accepted."""
    if not 0 < config_type < 32:
        raise AclError(_INVALID, f"config type {config_type} is not an aclprofConfigType")
    if not value:
        raise AclError(_INVALID, "config value is empty")
    with _lock:
        _settings[config_type] = value


def settings() -> dict[int, str]:
    with _lock:
        return dict(_settings)


# ----- subscriptions -----


def create_subscribe_config(time_info_switch: int, aicore_metrics: int, fd: int) -> int:
    if time_info_switch not in (0, 1):
        raise AclError(_INVALID, f"time_info_switch {time_info_switch} is not 0 or 1")
    if not 0 <= aicore_metrics <= ACL_AICORE_NONE:
        raise AclError(_INVALID, f"aicore_metrics {aicore_metrics} is not an aclprofAicoreMetrics")
    if PipeEnd.of(fd) is None:
        raise AclError(_INVALID, f"fd {fd} is not an open file descriptor")
    return subscribe_configs.add(SubscribeConfig(bool(time_info_switch), aicore_metrics, fd))


def destroy_subscribe_config(handle: int) -> None:
    subscribe_configs.remove(handle)


def subscribe(model_id: int, handle: int) -> None:
    """Subscribe a (checked) model: its operator records go to the config's pipe."""
    config = subscribe_configs.get(handle)
    end = PipeEnd.of(config.fd)
    if end is None:
        raise AclError(_INVALID, f"fd {config.fd} is no longer open")
    with _lock:
        if model_id in _subscriptions:
            raise AclError(AclCode.ACL_ERROR_PROF_REPEAT_SUBSCRIBE, f"model {model_id} is already subscribed")
        _subscriptions[model_id] = _Subscription(end, config.time_info, time.time_ns())
        _update_active_locked()
    if checker.enabled:
        checker.on_create("profiling subscription", model_id)


def unsubscribe(model_id: int) -> None:
    """End a subscription: its pipe's write end is closed once every record is written, as on CANN."""
    with _lock:
        sub = _subscriptions.pop(model_id, None)
        _update_active_locked()
    if sub is None:
        raise AclError(_INVALID, f"model {model_id} is not subscribed")
    if checker.enabled:
        checker.on_destroy("profiling subscription", model_id)
    writer.send(sub.end, b"", close_after=True)


def subscribed(model_id: int) -> bool:
    return model_id in _subscriptions


def subscribed_models() -> list[int]:
    with _lock:
        return list(_subscriptions)


# ----- operator times -----


def wants_ops(model_id: int, device_id: int) -> bool:
    """Whether an execution of this model on this device is profiled now."""
    if not active:
        return False
    with _lock:
        return model_id in _subscriptions or any(
            w.config.data_type_config & TASK_TIME_BITS and device_id in w.config.device_ids for w in _windows.values()
        )


@dataclass(frozen=True)
class Execution:
    """One profiled model execution: where it ran and what its operators did."""

    model_id: int
    model_name: str
    device_id: int
    stream_id: int
    infer_id: int
    start_ns: int
    end_ns: int
    ops: tuple[opdesc.OpTime, ...]


def deliver(executions: list[Execution]) -> None:
    """Hand measured executions to whatever collects them now: windows, subscriptions, the timeline."""
    with _lock:  # list appends only: a window that stop() took has every delivery made before it
        for window in _windows.values():
            if window.config.data_type_config & TASK_TIME_BITS:
                _collect_locked(window, executions)
        subs = dict(_subscriptions)
    for model_id, sub in subs.items():
        data = b"".join(
            opdesc.encode(model_id, ex.device_id, list(ex.ops if sub.time_info else map(_untimed, ex.ops)))
            for ex in executions
            if ex.model_id == model_id and ex.start_ns >= sub.since_ns
        )
        if data:
            writer.send(sub.end, data)
    _timeline(executions)


def _collect_locked(window: _Window, executions: list[Execution]) -> None:
    devices = set(window.config.device_ids)
    for ex in executions:
        if ex.device_id in devices and ex.start_ns >= window.start_ns:
            window.ops.extend(
                summary.OpRun(ex.device_id, ex.model_name, ex.model_id, ex.stream_id, ex.infer_id, op) for op in ex.ops
            )
            name = f"model_execute:{ex.model_name}"
            window.tasks.append(summary.TaskRun(ex.device_id, name, ex.stream_id, ex.start_ns, ex.end_ns))


def _untimed(op: opdesc.OpTime) -> opdesc.OpTime:
    return opdesc.OpTime(op.name, op.op_type, 0, 0, op.thread_id)


def _timeline(executions: list[Execution]) -> None:
    """Every operator on the timeline, on one track per model (their spans never overlap: runs of one
    profiled model are serialised)."""
    rec = trace.recorder
    if rec is None:
        return
    offset = trace.now_ns() - time.time_ns()
    for ex in executions:
        track = ("model ops", ex.model_id)
        label = f"model {ex.model_id} ({ex.model_name}) operators"
        for op in ex.ops:
            rec.add_on_track(
                track,
                label,
                op.name,
                "op",
                op.start_ns + offset,
                op.start_ns + offset,
                op.end_ns + offset,
                op_type=op.op_type,
                model=ex.model_id,
                infer=ex.infer_id,
            )


# ----- process life -----


def finish() -> None:
    """``acl.finalize``: every subscription's pipe closed and every window's files written (after the model layer
    has handed over what its executions recorded)."""
    for model_id in subscribed_models():
        unsubscribe(model_id)
    with contextlib.suppress(AclError):  # profiling was never initialised
        finalize()
    writer.flush(timeout=5)


def reset() -> None:
    """Forget every session, window and subscription; pending pipe records are dropped (one warning)."""
    global _result_path
    with _lock:
        owned = [w.recorder for w in _windows.values() if w.owns_recorder]
        _windows.clear()
        _subscriptions.clear()
        _settings.clear()
        _result_path = None
        _update_active_locked()
    writer.shutdown()
    for rec in owned:
        if trace.recorder is rec:
            trace.stop()


@atfork.at_child
def reinit_after_fork() -> None:
    """A forked child starts with no window and no subscription (the parent's pipes stay the parent's). Registered
    here, not by the model layer above: a program can subscribe through this module alone, and the model layer
    may never have been loaded."""
    _windows.clear()
    _subscriptions.clear()
    _update_active_locked()
