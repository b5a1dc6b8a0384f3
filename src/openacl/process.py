"""The whole process: ``acl.init`` / ``acl.finalize``, the reset tests use, exit, and fork.

This module owns process-wide state. Everything below it keeps its state in registries that this module
clears (handle tables register themselves in ``runtime.handles``), so a reset leaves nothing behind and a
forked child starts with a runtime that works.

Models, operators, dumps, profiling and GE load on first use (``lazy.module``), not with ``import acl``: a
program that only sets a device never pays for them. Each step below that belongs to one of them runs only when
that module is loaded (``lazy.loaded``); one that never was holds nothing to drain, unload or reset. The dump
settings are the exception at ``acl.init``: a ``"dump"`` section or ``OPENACL_DUMP`` loads them then.

Teardown order, the same for ``finalize`` and ``reset``:
1. devices: every stream drained (``finalize``) or its queued work dropped (``reset``), subscriptions removed,
   engines stopped;
2. profiling (``finalize``): every subscription's records written and its pipe closed, every window's files
   written; dumps: every pending file delivered, settings dropped;
3. models unloaded;
4. (``reset`` only) compiled operators, GE, every handle table, every registered memory region, the wait
   graph;
5. the trace file written.

Exit (the one ``atexit`` hook): queued stream work is dropped and the engines stopped without waiting for
anything still running, so exit never hangs; dump files are delivered; GE is finalized; the trace is
written. Handles, memory and models stay known, because programs such as Ascend's ``acllite`` free
them in ``__del__`` methods that run after the hook, in whatever order the interpreter destroys them: those
late calls succeed quietly, as on CANN, and a late ``reset_device`` or ``acl.finalize`` frees nothing that a
later ``__del__`` may still free. Stream work submitted after the hook gets ``ACL_ERROR_RT_DEVICE_TASK_ABORT``
(107022).

Fork (the one at-fork hook): the scheduling LOCK is taken around ``fork()`` so the child never inherits it
half-changed. In the child, first, every lock, condition and event of the package is free (``atfork``: none is
made any other way) and every registered thread and queue is renewed: the engines forget the parent's workers,
the exception-info callback gets a thread of the child's, the log writers and the dump thread start afresh
without the parent's pending lines and files (a child logs to a plog file of its own). Then the scheduler is
mended under LOCK (a WORK task a parent's worker was running fails with 107022; stream work runs on the child's
own workers), and last, with LOCK
released, the renewals that use the runtime run (callbacks only the parent's other threads could run are
dropped with one warning). No onnxruntime session the child inherits is ever destroyed there.
"""

from __future__ import annotations

import atexit
import logging
import os

from openacl import atfork, jsonfile, lazy, trace
from openacl import log as _log
from openacl.errors import AclCode, AclError
from openacl.runtime import checker, device, exceptions, handles, lifecycle, memory, options, timeouts
from openacl.runtime.sched import lock as _lock
from openacl.runtime.sched import waitgraph

# Loaded by the program's first model, operator, dump or GE call; until then each has nothing to tear down.
dump = lazy.module("openacl.dump.session")
ge_state = lazy.module("openacl.graph_engine.state")
bundle = lazy.module("openacl.model.bundle")
model = lazy.module("openacl.model.model")
profiled = lazy.module("openacl.model.profiled")
prof_session = lazy.module("openacl.runtime.prof.session")
stamps = lazy.module("openacl.runtime.prof.stamps")
op_execute = lazy.module("openacl.op.execute")
vmm = lazy.module("openacl.runtime.vmm")  # virtual memory: its first map call loads it

_lock_init = atfork.rlock()
_ref_count = 0
config: dict = {}
_exiting = False


def is_initialized() -> bool:
    return _ref_count > 0


def init(config_path: str | None = None) -> None:
    """``acl.init``: read the optional JSON file (its ``"dump"`` section is checked before init succeeds)."""
    global _ref_count, config
    with _lock_init:
        if _ref_count > 0:
            _ref_count += 1
            raise AclError(AclCode.ACL_ERROR_REPEAT_INITIALIZE, "acl.init was already called", level=logging.WARNING)
        _log.configure()
        trace.configure_from_env()
        parsed = jsonfile.read_config(config_path) if config_path else {}
        section = parsed.get("dump")
        if section is not None or os.environ.get("OPENACL_DUMP") or lazy.loaded(dump):
            dump.on_acl_init(section)
        config = parsed
        _ref_count = 1
        lifecycle.set_initialized(True)


def finalize() -> None:
    """``acl.finalize``: every device drained and reset, dumps delivered, models unloaded."""
    global _ref_count, config
    with _lock_init:
        if _ref_count == 0:
            raise AclError(AclCode.ACL_ERROR_REPEAT_FINALIZE, "acl.finalize without a matching acl.init")
        if checker.enabled:
            checker.report_leaks("acl.finalize", process_end=False)  # before teardown frees them for the program
        device.teardown_all()
        _finish_profiling()
        if lazy.loaded(dump):
            dump.reset()
        if not device.exiting():  # a late finalizer may still unload its model
            _unload_models()
        _ref_count = 0
        config = {}
        lifecycle.set_initialized(False)
    _write_trace()


def finalize_reference() -> int:
    """Drop one ``acl.init`` reference; finalize when none is left. Returns the references left."""
    global _ref_count
    with _lock_init:
        if _ref_count == 0:
            raise AclError(AclCode.ACL_ERROR_REPEAT_FINALIZE, "acl.finalize_reference without acl.init")
        if _ref_count == 1:
            finalize()
            return 0
        _ref_count -= 1
        return _ref_count


def reset(force: bool = True) -> None:
    """Back to the starting state (tests): every device reset (queued work dropped unless ``force`` is False),
    every table and memory region forgotten, GE finalized, tracing off. A trace file set up by
    ``OPENACL_TRACE`` or ``--trace`` is written first, with everything recorded."""
    global _ref_count, config
    with _lock_init:
        device.teardown_all(force)
        if lazy.loaded(profiled):
            profiled.reset()
        if lazy.loaded(prof_session):
            prof_session.reset()
        if lazy.loaded(stamps):
            stamps.reset()
        if lazy.loaded(dump):
            dump.reset()
        _unload_models()
        if lazy.loaded(op_execute):
            op_execute.reset()
        exceptions.reset()
        timeouts.reset()
        _finalize_ge()
        device.forget_all()
        handles.clear_all()
        memory.space.clear()
        memory.forget_registrations()
        if lazy.loaded(vmm):
            vmm.reset()
        options.reset()
        checker.reset()
        with _lock.locked:
            waitgraph.reset()
        _ref_count = 0
        config = {}
        lifecycle.set_initialized(False)
    _write_trace()
    trace.disable()
    _log.flush()


def _finish_profiling() -> None:
    """The model layer's records handed over first, then every subscription and window of the runtime finished."""
    if lazy.loaded(profiled):
        profiled.flush()
    if lazy.loaded(prof_session):
        prof_session.finish()


def _unload_models() -> None:
    if lazy.loaded(model):
        model.unload_all()
    if lazy.loaded(bundle):
        bundle.unload_all()


def _finalize_ge() -> None:
    if lazy.loaded(ge_state):
        ge_state.finalize_at_exit()


def _flush_dumps() -> None:
    if lazy.loaded(dump):
        dump.writer.flush()


def _write_trace() -> None:
    """Write the trace file (``OPENACL_TRACE`` / ``--trace``) if one is set up; never raises."""
    if trace.output_path() is None:
        return
    try:
        trace.flush()
    except Exception as exc:
        _log.root.error("cannot write the trace file %s: %s", trace.output_path(), exc)


# A program traced by ``OPENACL_TRACE`` records from the start, even one that never calls ``acl.init``.
trace.configure_from_env()


@atexit.register
def _at_exit() -> None:
    global _exiting
    _exiting = True
    steps = (_report_leaks_at_exit, device.quiesce, _flush_dumps, _finalize_ge, _write_trace)
    for step in (*steps, _log.flush):
        try:
            step()
        except Exception:  # never let cleanup turn a clean exit into a traceback
            _log.root.exception("cleanup at exit: %s failed", step.__qualname__)


def _report_leaks_at_exit() -> None:
    if checker.enabled:
        checker.report_leaks("exit")


def _before_fork() -> None:
    atfork.before_fork()
    _lock.acquire()


def _after_fork_in_parent() -> None:
    _lock.LOCK.release()
    atfork.after_fork_in_parent()


def _after_fork_in_child() -> None:
    atfork.after_fork_in_child()  # every lock of ours is free: the threads that held them are not in the child
    atfork.renew_all()  # fresh queues, the parent's threads forgotten (engines, log and dump writers, ...)
    _lock.reinit_after_fork()
    _lock.LOCK.acquire()  # held while the child's tables are mended, as in the parent around fork()
    waitgraph.reset()
    if lazy.loaded(op_execute):
        op_execute.reset()  # compiled operators hold onnxruntime sessions, which do not survive a fork
    device.reinit_after_fork()
    _lock.release()  # runs what mending deferred (log lines, thread starts) in the child
    atfork.renew_all(late=True)  # what uses the runtime: callbacks only the parent's threads could run dropped


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
