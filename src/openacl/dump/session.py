"""The dump lifecycle: ``init_dump`` / ``set_dump`` / ``finalize_dump``, ``acl.init``'s ``"dump"`` section, the
dump callback, each loaded model's dump state, and what one model execution dumps.

This module knows the runtime, never the model: ``openacl.model`` tells it when a model is loaded and unloaded
(``model_loaded`` / ``model_unloaded``), asks it whether an execution is dumped (``step_for``), and hands the
returned :class:`DumpStep` the operators (to plan, once per model) and each operator's tensors.

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
  from 0 (per model, taken under the model's lock, so concurrent executions never share one). File names
  use the operator's index in the model as task id and the stream's id as stream id.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from openacl import atfork
from openacl.dump import naming, selection
from openacl.dump.config import DumpConfig, load_dump_config, parse_dump_section
from openacl.dump.record import OpRecord
from openacl.dump.selection import OpInfo
from openacl.dump.sink import Batch, OutgoingFile, writer
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import lifecycle

log = get_logger("dump")


@dataclass
class DumpSession:
    """One dump configuration as applied: the models loaded under it keep a reference."""

    config: DumpConfig
    source: str
    needs_callback: bool = False  # init_dump's defaults: nowhere to write without a callback
    time_str: str = field(default_factory=naming.time_str)
    active: bool = True


@dataclass
class ModelDump:
    """One loaded model's dump state: the settings it took at load, its plan, its count of dumped steps."""

    session: DumpSession
    ops: list[OpRecord] | None = None  # planned at the first dumped step
    dumped_steps: int = 0  # Invariant: only changed under ``lock``
    lock: threading.Lock = field(default_factory=atfork.lock)
    #: (dump root, device id) -> the model's directory there, without the step (``DumpStep.directory``)
    directories: dict[tuple[str, int], str] = field(default_factory=dict)


_lock = atfork.lock()
_dump_initialized = False  # init_dump called and not finalized
_set_dump: DumpSession | None = None
_default: DumpSession | None = None
_from_init: DumpSession | None = None
_from_env: DumpSession | None = None
_callback: Callable | None = None
_models: dict[int, ModelDump] = {}  # by model id: models loaded under dump settings


# ----- lifecycle -----


def on_acl_init(section: object) -> None:
    """Apply ``acl.init``'s ``"dump"`` section (raises ``ACL_ERROR_INVALID_DUMP_CONFIG`` before init succeeds)."""
    global _from_init, _from_env
    env_path = os.environ.get("OPENACL_DUMP")
    env_config = load_dump_config(env_path) if env_path else None
    config = parse_dump_section(section) if section is not None else None
    writer.read_settings()
    with _lock:
        _from_init = DumpSession(config, "acl.init") if config is not None and config.model_dump_enabled else None
        _from_env = DumpSession(env_config, "OPENACL_DUMP") if env_config is not None else None


def init_dump() -> None:
    global _dump_initialized, _default
    with _lock:
        if not lifecycle.initialized():
            raise AclError(AclCode.ACL_ERROR_UNINITIALIZE, "init_dump before acl.init")
        if _dump_initialized:
            raise AclError(AclCode.ACL_ERROR_REPEAT_INITIALIZE, "init_dump called twice without finalize_dump")
        if _from_init is not None:
            raise AclError(AclCode.ACL_ERROR_DUMP_ALREADY_RUN, "dumping is already configured by acl.init's JSON")
        _dump_initialized = True
        _default = DumpSession(DumpConfig.default(str(Path.cwd())), "init_dump", needs_callback=True)
    writer.read_settings()


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
    writer.read_settings()
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
    writer.read_settings()
    with _lock:
        replaced, _callback = _callback, callback
    if replaced is not None:  # let go of after the lock: its last reference may run user code (a finalizer)
        log.info("dump callback replaced")


def unregister_callback() -> None:
    global _callback
    with _lock:
        had, _callback = _callback, None
    if had is None:
        log.warning("dump_unreg_callback: no dump callback is registered")
    writer.flush()


def _settings_for_new_model_locked() -> DumpSession | None:
    if _dump_initialized:
        return _set_dump or _default
    return _from_init or _from_env


def model_loaded(model_id: int) -> bool:
    """A model was loaded: it takes the dump settings in force now, if any (then True: it may be dumped)."""
    with _lock:
        session = _settings_for_new_model_locked()
        if session is not None:
            _models[model_id] = ModelDump(session)
        return session is not None


def watches(model_id: int) -> bool:
    """Whether a step of this model may be dumped (it was loaded under dump settings, or attached): without
    the lock, one dict lookup, for the model's execution plan (a race with a load is a race with its steps)."""
    return model_id in _models


def attach(model_id: int, session: DumpSession) -> None:
    """Dump a loaded model under ``session`` whatever the settings (``openacl dump``'s one-shot dumps)."""
    with _lock:
        _models[model_id] = ModelDump(session)


def model_unloaded(model_id: int) -> None:
    with _lock:
        _models.pop(model_id, None)


def planned_operators(model_id: int) -> int:
    """How many operators a model's dumps cover (0 before its first dumped step)."""
    with _lock:
        state = _models.get(model_id)
    return len(state.ops or ()) if state is not None else 0


def reset() -> None:
    """Back to the starting state (``acl.finalize``, tests): pending files delivered, settings dropped."""
    global _dump_initialized, _set_dump, _default, _from_init, _from_env, _callback
    writer.stop()
    with _lock:
        for session in (_set_dump, _default, _from_init, _from_env):
            if session is not None:
                session.active = False
        _dump_initialized = False
        _set_dump = _default = _from_init = _from_env = None
        dropped, _callback = _callback, None  # let go of after the lock (a finalizer is user code)
        _models.clear()
    del dropped


# ----- one execution -----


class DumpStep:
    """One execution of one model that is dumped: plan it (once per model), ``start`` it, ``emit`` its files,
    ``wait`` for them."""

    def __init__(self, model_id: int, model_name: str, state: ModelDump, step: int, callback: Callable | None):
        self.model_id, self.model_name = model_id, model_name
        self.state, self.step, self.callback = state, step, callback
        self.step_dir = step
        self.batch = Batch()
        self.parts = 0  # parts emitted so far

    @property
    def needs_plan(self) -> bool:
        return self.state.ops is None

    @property
    def ops(self) -> list[OpRecord]:
        return self.state.ops or []

    def plan(self, operators: Sequence[OpInfo], skipped: frozenset[int] = frozenset()) -> None:
        """Choose the model's dumped operators and slots; ``skipped`` are operators no dump file can hold (they
        read or write a sequence or map)."""
        config = self.state.session.config
        plan = selection.plan(config, self.model_name, operators) or []
        left_out = [entry for entry in plan if entry.index in skipped]
        if left_out:
            names = ", ".join(operators[entry.index].name for entry in left_out[:5])
            log.warning(
                "model %s: %d operators read or write a sequence or map, which a dump file cannot hold; "
                "they are not dumped (%s%s)",
                self.model_name,
                len(left_out),
                names,
                ", ..." if len(left_out) > 5 else "",
            )
        ops = [
            OpRecord(entry.index, operators[entry.index].type, operators[entry.index].name, entry.inputs, entry.outputs)
            for entry in plan
            if entry.index not in skipped
        ]
        with self.state.lock:
            if self.state.ops is None:
                self.state.ops = ops

    def start(self) -> bool:
        """False when the plan dumps nothing (the execution is then not a dumped step); otherwise this step's
        directory is taken."""
        if not self.ops:
            return False
        if self.state.session.config.dump_step is None:
            with self.state.lock:
                self.step_dir = self.state.dumped_steps
                self.state.dumped_steps += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug("dumping step %d of model %d (%d operators)", self.step, self.model_id, len(self.ops))
        return True

    def directory(self, device_id: int) -> str:
        """This step's directory on ``device_id``: its model's directory there (worked out once per model,
        device and root) and the step's number."""
        config = self.state.session.config
        root = config.dump_path or os.getcwd()
        key = (root, device_id)
        base = self.state.directories.get(key)
        if base is None:
            session = self.state.session
            path = naming.dump_dir(root, session.time_str, device_id, self.model_name, self.model_id, None)
            base = self.state.directories[key] = os.fspath(path)
        return f"{base}{os.sep}{int(self.step_dir)}"  # as naming.dump_dir's last level

    def emit(
        self,
        tensors: Sequence[tuple[OpRecord, Sequence[np.ndarray | None], Sequence[np.ndarray | None]]],
        device_id: int,
        stream_id: int,
        borrowed: Sequence[np.ndarray] = (),
    ) -> None:
        """Queue the files of some planned operators (blocks under back-pressure): called once per part of the
        execution that hands its tensors out, then :meth:`seal`, then :meth:`wait`.

        ``tensors``: (planned operator, its inputs, its outputs), each list by slot (only the slots the operator
        dumps are read). ``borrowed``: the arrays among them that view the program's memory (the model inputs);
        the writer copies them at once (see ``sink``).

        Decision: the first part's files wait for the next part, or for :meth:`seal`, to wake the dump thread.
        A wake costs the executing thread up to 50 µs where the other core sleeps, and files delivered while the
        next part runs slow that run by more than their delivery takes (onnxruntime's threads wait for the one
        the dump thread displaced). A later part wakes it, so at most two parts' files wait at once: a run of
        many parts holds one part's tensors more than when each part woke it."""
        config = self.state.session.config
        directory = self.directory(device_id)
        stats = config.dump_stats if config.dump_data == "stats" else None
        borrowed_ids = {id(array) for array in borrowed}
        files: list[OutgoingFile] = []
        for op, inputs, outputs in tensors:
            record = op.record(inputs, outputs, stream_id, stats, borrowed_ids)
            target = (self.batch, self.callback, record.borrowed)
            files.append(OutgoingFile(directory, record.name, record.parts, record.size, *target))
        writer.submit_many(files, wake=self.parts > 0)
        self.parts += 1

    def seal(self) -> None:
        """Every file of this execution is emitted (call it even when the execution failed midway)."""
        writer.seal(self.batch)

    def wait(self) -> None:
        """On disk, wait for the files (``ACL_ERROR_WRITE_FILE`` if one failed); through a callback, don't."""
        if self.callback is None and not writer.on_dump_thread():
            self.batch.wait()


def step_for(model_id: int, model_name: str, step: int) -> DumpStep | None:
    """The dump of execution number ``step`` of a model, or None when it is not dumped."""
    with _lock:
        state = _models.get(model_id)
        callback = _callback
    if state is None:
        return None
    return step_of(state, model_id, model_name, step, callback)


def step_of(state: ModelDump, model_id: int, model_name: str, step: int, callback: Callable | None) -> DumpStep | None:
    """The dump of execution number ``step`` under dump state held by the caller (GE graphs hold their own), or
    None when it is not dumped."""
    if not state.session.active:
        return None
    config = state.session.config
    if callback is None and (state.session.needs_callback or not config.dump_path):
        return None
    if not selection.selects_step(config, step) or not selection.selects_model(config, model_name):
        return None
    return DumpStep(model_id, model_name, state, step, callback)
