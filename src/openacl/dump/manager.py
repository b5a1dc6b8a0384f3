"""The dump lifecycle: ``init_dump`` / ``set_dump`` / ``finalize_dump``, ``acl.init``'s ``"dump"`` section and
the dump callback, and what one model execution dumps.

Decisions (CANN's documentation where it speaks):
- A model takes the dump settings in force when it is loaded: ``set_dump`` applies to models loaded after
  it, the last one wins, and ``finalize_dump`` ends dumping for the models that took its settings.
- ``init_dump`` with no ``set_dump``: every operator of every model loaded afterwards is dumped with the
  defaults (outputs, tensors), but only while a dump callback is registered; there is no path to write to.
- ``init_dump`` after ``acl.init`` already configured dumping returns ``ACL_ERROR_DUMP_ALREADY_RUN``.
- With a callback registered nothing is written to disk; files go to the callback as chunks.
  ``dump_unreg_callback`` and ``finalize_dump`` return once every chunk queued before them is delivered.
- On disk, an execution (sync, or its task on a stream) completes only when its files are on disk, so
  ``execute``, ``synchronize_stream``, ``finalize_dump`` and ``acl.finalize`` see every file of the work
  before them; a failed write is ``ACL_ERROR_WRITE_FILE`` from that execution (or from the stream's
  synchronize). Through a callback an execution returns once its chunks are queued: callbacks may run
  after ``execute`` returns, as on an NPU, where they come from a separate record thread.
- ``OPENACL_DUMP=config.json`` (what ``openacl run --dump`` sets) dumps an unmodified program: its
  ``"dump"`` section applies as if it were in ``acl.init``'s JSON, to models loaded while no other dump
  settings are in force (the program's own ``init_dump``/``set_dump`` or ``acl.init`` section wins).
- Step directories: the step number when ``dump_step`` is set, otherwise a count of dumped iterations
  from 0. File names use the operator's index in the model as task id (stable from run to run, so two
  dumps of one model pair up by name) and the stream's id as stream id.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from openacl.dump import format as dump_format
from openacl.dump.config import DumpConfig, OpPlan, load_dump_config, parse_dump_section
from openacl.dump.sink import Batch, DumpFile, writer
from openacl.errors import AclCode, AclError
from openacl.log import get_logger

log = get_logger("dump")


@dataclass
class DumpSession:
    """One dump configuration as applied: the models loaded under it keep a reference."""

    config: DumpConfig
    source: str
    needs_callback: bool = False  # init_dump's defaults: nowhere to write without a callback
    time_str: str = field(default_factory=lambda: time.strftime("%Y%m%d%H%M%S"))
    active: bool = True
    plans: dict[int, list[OpDump]] = field(default_factory=dict)  # by model id


_lock = threading.Lock()
_dump_initialized = False  # init_dump called and not finalized
_set_dump: DumpSession | None = None
_default: DumpSession | None = None
_acl_initialized = False  # told by acl.init (on_acl_init) and acl.finalize (reset): init_dump needs it
_from_init: DumpSession | None = None
_from_env: DumpSession | None = None
_callback: Callable | None = None


# ----- lifecycle -----


def on_acl_init(section: object) -> None:
    """Apply ``acl.init``'s ``"dump"`` section (raises ``ACL_ERROR_INVALID_DUMP_CONFIG`` before init succeeds)."""
    global _from_init, _from_env, _acl_initialized
    env_path = os.environ.get("OPENACL_DUMP")
    env_config = load_dump_config(env_path) if env_path else None
    config = parse_dump_section(section) if section is not None else None
    with _lock:
        _acl_initialized = True
        _from_init = DumpSession(config, "acl.init") if config is not None and config.model_dump_enabled else None
        _from_env = DumpSession(env_config, "OPENACL_DUMP") if env_config is not None else None


def init_dump() -> None:
    global _dump_initialized, _default
    with _lock:
        if not _acl_initialized:
            raise AclError(AclCode.ACL_ERROR_UNINITIALIZE, "init_dump before acl.init")
        if _dump_initialized:
            raise AclError(AclCode.ACL_ERROR_REPEAT_INITIALIZE, "init_dump called twice without finalize_dump")
        if _from_init is not None:
            raise AclError(AclCode.ACL_ERROR_DUMP_ALREADY_RUN, "dumping is already configured by acl.init's JSON")
        _dump_initialized = True
        _default = DumpSession(DumpConfig.default(str(Path.cwd())), "init_dump", needs_callback=True)


def set_dump(path: str | None) -> None:
    global _set_dump
    with _lock:
        if not _dump_initialized:
            raise AclError(AclCode.ACL_ERROR_DUMP_NOT_RUN, "set_dump without init_dump")
    if not path:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "set_dump needs the path of a dump configuration file")
    config = load_dump_config(path)
    with _lock:
        if not _dump_initialized:
            raise AclError(AclCode.ACL_ERROR_DUMP_NOT_RUN, "finalize_dump ran while set_dump was reading")
        _set_dump = DumpSession(config, "set_dump")
    log.info("dump configuration %s applies to models loaded from now on", path)


def finalize_dump() -> None:
    global _dump_initialized, _set_dump, _default
    with _lock:
        if not _dump_initialized:
            raise AclError(AclCode.ACL_ERROR_DUMP_NOT_RUN, "finalize_dump without init_dump")
        for session in (_set_dump, _default):
            if session is not None:
                session.active = False
        _dump_initialized = False
        _set_dump = _default = None
    writer.flush()


def register_callback(callback: object, flag: int) -> None:
    global _callback
    if flag != 0:
        raise AclError(AclCode.ACL_ERROR_FAILURE, f"dump_reg_callback: flag must be 0 (reserved), not {flag}")
    if not callable(callback):
        raise AclError(AclCode.ACL_ERROR_FAILURE, f"dump_reg_callback: {type(callback).__name__} is not callable")
    with _lock:
        replaced = _callback is not None
        _callback = callback
    if replaced:
        log.info("dump callback replaced")


def unregister_callback() -> None:
    global _callback
    with _lock:
        had, _callback = _callback, None
    if had is None:
        log.warning("dump_unreg_callback: no dump callback is registered")
    writer.flush()


def settings_for_new_model() -> DumpSession | None:
    """The dump session a model being loaded now takes."""
    with _lock:
        if _dump_initialized:
            return _set_dump or _default
        return _from_init or _from_env


def reset() -> None:
    """Back to the starting state (``acl.finalize``, tests): pending files delivered, settings dropped."""
    global _dump_initialized, _set_dump, _default, _from_init, _from_env, _callback, _acl_initialized
    writer.stop()
    with _lock:
        _acl_initialized = False
        for session in (_set_dump, _default, _from_init, _from_env):
            if session is not None:
                session.active = False
        _dump_initialized = False
        _set_dump = _default = _from_init = _from_env = None
        _callback = None


# ----- one execution -----


class OpDump:
    """What never changes between runs for one planned operator: its slots, its name prefix, its header."""

    __slots__ = ("index", "inputs", "outputs", "prefix", "template")

    def __init__(self, plan: OpPlan, operator) -> None:
        self.index = plan.index
        self.inputs, self.outputs = plan.inputs, plan.outputs
        self.prefix = dump_format.file_name_prefix(operator.type, operator.name, plan.index)
        self.template: dump_format.HeaderTemplate | None = None

    def parts(self, op_name: str, inputs: list, outputs: list, stamp: int) -> list[bytes | memoryview]:
        template = self.template
        if template is None or template.layout != dump_format.layout_key(inputs, outputs):
            template = self.template = dump_format.HeaderTemplate(op_name, inputs, outputs)
        return template.parts(inputs, outputs, stamp)


@dataclass
class DumpJob:
    """What one execution of one model dumps, and where."""

    session: DumpSession
    ops: list[OpDump]
    callback: Callable | None
    step_dir: int
    batch: Batch = field(default_factory=Batch)

    def emit(self, model, observed, values: dict, device_id: int, stream_id: int, borrowed=()) -> None:
        """Queue this execution's files (blocks under back-pressure); ``wait`` for them afterwards.

        ``borrowed``: the arrays among ``values`` that view the user's memory (the model inputs); the writer
        copies them before a callback can see them after this execution returns."""
        borrowed_ids = {id(array) for array in borrowed}
        config = self.session.config
        directory = os.fspath(
            dump_format.dump_dir(
                config.dump_path or os.getcwd(), self.session.time_str, device_id, model.name, model.id, self.step_dir
            )
        )
        stats = config.dump_data == "stats"
        files: list[DumpFile] = []
        try:
            for op in self.ops:
                operator = observed.operators[op.index]
                inputs, outputs = observed.tensors(values, op.index)
                inputs = [inputs[i] for i in op.inputs]
                outputs = [outputs[i] for i in op.outputs]
                stamp = dump_format.now_us()
                name = f"{op.prefix}{stream_id}.{stamp:016d}"
                if stats:
                    parts = [dump_format.stats_csv(inputs, outputs, config.dump_stats).encode()]
                    name += ".csv"
                    lent = frozenset()
                else:
                    parts = op.parts(operator.name, inputs, outputs, stamp)
                    lent = frozenset(1 + i for i, a in enumerate((*inputs, *outputs)) if id(a) in borrowed_ids)
                size = sum(map(len, parts))
                files.append(DumpFile(directory, name, parts, size, self.batch, self.callback, lent))
            writer.submit_many(files)
        finally:
            writer.seal(self.batch)

    def wait(self) -> None:
        """On disk, wait for the files (``ACL_ERROR_WRITE_FILE`` if one failed); through a callback, don't."""
        if self.callback is None and not writer.on_dump_thread():
            self.batch.wait()


def job_for(model, step: int) -> DumpJob | None:
    """The dump of ``model``'s execution number ``step``, or None when nothing is dumped."""
    session = model.dump
    if session is None or not session.active:
        return None
    with _lock:
        callback = _callback
    config = session.config
    if callback is None and (session.needs_callback or not config.dump_path):
        return None
    if not config.selects_step(step) or not config.selects_model(model.name):
        return None
    ops = session.plans.get(model.id, ...)
    if ops is ...:
        observed = model.observed()
        plan = config.plan(model.name, observed.ops) or []
        skipped = [entry for entry in plan if entry.index in observed.skipped]
        if skipped:
            names = ", ".join(observed.operators[entry.index].name for entry in skipped[:5])
            log.warning(
                "model %s: %d operators read or write a sequence or map, which a dump file cannot hold; "
                "they are not dumped (%s%s)",
                model.name,
                len(skipped),
                names,
                ", ..." if len(skipped) > 5 else "",
            )
        plan = [entry for entry in plan if entry.index not in observed.skipped]
        ops = session.plans[model.id] = [OpDump(entry, observed.operators[entry.index]) for entry in plan]
    if not ops:
        return None
    if config.dump_step is not None:
        step_dir = step
    else:
        step_dir = model.dumped_steps
        model.dumped_steps += 1
    if log.isEnabledFor(logging.DEBUG):
        log.debug("dumping step %d of model %d (%d operators)", step, model.id, len(ops))
    return DumpJob(session, ops, callback, step_dir)
