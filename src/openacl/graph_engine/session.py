"""The engine's GE sessions: ``Session`` with graphs, variables and callbacks (GEInitialize/GEFinalize are in
:mod:`openacl.graph_engine.state`).

Guarantees:
- Every public method either succeeds (returning its value) or raises ``GeError`` carrying the GE status and
  the one line its faces show (:mod:`openacl.graph_engine._api`): :mod:`openacl.ge` returns the status and logs
  the line, :mod:`openacl.gepy` raises GE-PY's ``GeError`` with it. Only arguments of the wrong Python type
  raise ``TypeError``.
- The Summary and Save callbacks fire only from ``run_graph`` in train mode (``ge.graphRunMode`` >= 1), once
  per run and key, after the graph has executed and the variables have been updated, on the caller's
  thread, before ``run_graph`` returns: Summary first, then Save. ``run_graph_async`` and
  ``run_graph_with_stream_async`` never fire them (as in GE); in prediction mode none fire.
- No session lock is held while user code runs (a Summary/Save callback, a ``run_graph_async`` done
  callback, an external allocator), finalizers included: a locked section never lets go of the last reference
  to a callback or an allocator (it takes them out and drops them after the lock). A callback may call the
  session, e.g. ``get_variables``; running the graph that is calling it raises ``GE_GRAPH_ALREADY_RUNNING``.
- Variables live in the session as read-only arrays that are replaced, never written, so an array handed to
  a callback keeps its values.

Where the CANN documentation and GE's code differ, openacl follows the documentation (see each method).
"""

from __future__ import annotations

import itertools
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from openacl import atfork, lazy
from openacl.errors import AclCode, AclError, GeError, GeStatus, code_name
from openacl.graph_engine import device_tensors, dumping, errmsg, passes, state
from openacl.graph_engine._api import names_api, one_line, verbatim
from openacl.graph_engine._executable import Executable, InputSpec, check_inputs, input_specs, read_only_dict
from openacl.graph_engine._plan import RunPlan
from openacl.graph_engine.graph import Graph
from openacl.graph_engine.worker import AsyncWorker
from openacl.log import get_logger
from openacl.runtime import checker
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task

onnx = lazy.module("onnx")

__all__ = ["Session"]

log = get_logger("ge")

SUMMARY, SAVE = "Summary", "Save"
CALLBACK_KEYS = (SUMMARY, SAVE)
RUN_MODE_OPTION = "ge.graphRunMode"
DEVICE_OPTION = "ge.exec.deviceId"
_MAX_GRAPH_ID = 2**32 - 1

Callback = Callable[[int, dict[str, np.ndarray]], Any]
DoneCallback = Callable[[int, list[np.ndarray]], Any]

_session_ids = itertools.count(1)


def _release_run(run_lock: Any) -> None:
    """End a graph's run: release its run lock. A Summary or Save callback (user code, run while the lock is held)
    may fork; the child's run lock was made free at the fork (``atfork``), so the child, returning from that
    callback, has nothing to release."""
    try:  # noqa: SIM105 (contextlib.suppress: an object and two calls, a twentieth of a tiny graph's run)
        run_lock.release()
    except RuntimeError:  # "release unlocked lock": only in such a child
        pass


class _GraphEntry:
    """A graph added to a session: the snapshot AddGraph took, and its build once there is one."""

    def __init__(self, graph_id: int, graph: Graph, source: Graph) -> None:
        self.graph_id = graph_id
        self.graph = graph
        self.source = weakref.ref(source)
        self.specs: list[InputSpec] = input_specs(graph)
        self.build_lock = atfork.lock()
        # Invariant: set once by _build (under build_lock), never unset; read without a lock.
        self.exe: Executable | None = None
        # Invariant: held from a run's start to the end of its callbacks, taken without waiting (a second run
        # meanwhile is GE_GRAPH_ALREADY_RUNNING); free in a forked child, where no run is under way.
        self.run_lock = atfork.lock()


class Session:
    """``ge::Session``. Not safe for concurrent use of one graph (GE: "Session暂不支持并发执行").

    Options: ``ge.graphRunMode`` ("0" prediction, "1" train; the session option wins over the one given to
    ``ge_initialize``) and GE's dump options (:mod:`openacl.graph_engine.dumping`). A session created before
    ``ge_initialize``, or with bad options, has no inner session: its methods raise GE_CLI_GE_NOT_INITIALIZED
    while GE is not initialised and FAILED after.
    """

    def __init__(self, options: Mapping[Any, Any] | None = None) -> None:
        self.session_id = next(_session_ids)
        self._lock = atfork.lock()
        self._graphs: dict[int, _GraphEntry] = {}
        self._variables: dict[str, np.ndarray] = {}
        self._callbacks: dict[str, Callback] = {}
        #: stream handle -> the allocator its stream-ordered runs take output memory from (GE's external allocator)
        self._allocators: dict[int, Any] = {}
        self._getvar_cache: dict[tuple[str, ...], Executable] = {}
        # Invariant: every change a run plan depends on (a graph added or removed, a callback registered, close)
        # bumps _version and empties _plans, under _lock (_changed); a plan is kept only if made at the current
        # version (_keep_plan). _plans is read without the lock: a plan found was valid a moment ago, as if the run
        # had started then.
        self._version = 0
        self._plans: dict[int, RunPlan] = {}
        self._worker: AsyncWorker | None = None
        self._closed = False
        self._dead: str | None = None
        self.options, bad = state.parse_options(options)
        self._generation, global_options = state.join(self)
        if global_options is None:
            self._dead = "the session was created before GEInitialize"
        elif checker.enabled:
            # The program's until close(), GEFinalize, or it lets go of the session (Python's way of ending one).
            checker.on_create("GE session", self.session_id)
            # Not at exit (atexit=False): weakref's own exit hook runs before the leak report and would forget
            # every session still alive then.
            weakref.finalize(self, checker.forget, "GE session", self.session_id).atexit = False
        merged = {**(global_options or {}), **self.options}
        mode = merged.get(RUN_MODE_OPTION, "0")
        try:
            self.train = int(mode) >= 1
        except ValueError:
            self.train = False
            bad = bad or f"{RUN_MODE_OPTION}={mode!r} is not a number ({code_name(GeStatus.GE_GRAPH_OPTIONS_INVALID)})"
        device = merged.get(DEVICE_OPTION, "0")
        self._device_id = int(device) if device.isdigit() else 0
        self._dump = None
        try:
            self._dump = dumping.dump_session(merged)
        except GeError as exc:
            bad = bad or f"{exc.detail} ({code_name(exc.code)})"
        self._dead = self._dead or bad
        if self._dead:
            errmsg.log_error(log, "Session %d: creating the session failed: %s", self.session_id, self._dead)

    # ----- graphs -----

    @names_api("AddGraph")
    def add_graph(self, graph_id: int, graph: Graph, options: Mapping[Any, Any] | None = None) -> None:
        """``AddGraph``: keeps a snapshot of ``graph``. Re-adding an existing id succeeds and keeps the
        first graph (the CANN doc); adding a Graph object already added under another id is FAILED.

        Graph options are refused: every graph compiles the same way here, so a non-empty ``options`` is FAILED
        (GE turns its inner GE_GRAPH_OPTIONS_INVALID into FAILED) and the graph is not added; None or ``{}``
        asks nothing."""
        if not isinstance(graph, Graph):
            raise TypeError(f"graph must be an openacl.ge.Graph, not {type(graph).__name__}")
        asked, _ = state.parse_options(options)  # TypeError for options that are not a mapping
        self._require_open(graph_id, "AddGraph")
        if asked:
            raise GeError(
                GeStatus.FAILED,
                f"graph {graph_id}: graph options are not supported ({', '.join(map(repr, sorted(asked)))}); "
                f"the graph is not added ({code_name(GeStatus.GE_GRAPH_OPTIONS_INVALID)})",
            )
        with self._lock:
            exists = graph_id in self._graphs
        if exists:  # logged without the lock: a logging handler is user code
            log.warning("AddGraph: graph id %d already exists; the first graph is kept", graph_id)
            return
        with self._lock:
            if graph_id in self._graphs:  # added meanwhile by another thread: the first graph is kept all the same
                return
            for entry in self._graphs.values():
                if entry.source() is graph:
                    raise GeError(
                        GeStatus.FAILED,
                        f"graph {graph.name!r} is already added as graph id {entry.graph_id} "
                        f"({code_name(GeStatus.GE_GRAPH_GRAPH_ALREADY_EXIST)})",
                    )
            self._graphs[graph_id] = _GraphEntry(graph_id, graph.copy(), graph)
            dropped = self._changed()
        del dropped  # after the lock: plans hold callbacks

    @names_api("RemoveGraph")
    def remove_graph(self, graph_id: int) -> None:
        """``RemoveGraph``: FAILED for an unknown id (GE turns GE_GRAPH_GRAPH_NOT_EXIST into FAILED). A graph
        being run is removed at once; that run finishes."""
        self._require_open(graph_id, "RemoveGraph")
        with self._lock:
            entry = self._graphs.pop(graph_id, None)
            dropped = self._changed()
        del dropped  # after the lock: plans hold callbacks
        if entry is None:
            raise GeError(GeStatus.FAILED, f"graph id {graph_id} does not exist (GE_GRAPH_GRAPH_NOT_EXIST)")

    @names_api("BuildGraph")
    def build_graph(self, graph_id: int, inputs: Sequence[Any] = ()) -> None:
        """``BuildGraph``: compile now instead of at the first run. ``inputs``, when given, are checked like
        ``run_graph``'s (PARAM_INVALID). GE_GRAPH_GRAPH_NOT_EXIST for an unknown id; FAILED when the graph
        cannot be built (the reason is logged)."""
        _check_id_type("BuildGraph", graph_id)
        _check_inputs_type(inputs)
        self._require_open(graph_id, "BuildGraph")
        entry = self._entry(graph_id)
        if inputs:
            _, bad = check_inputs(entry.specs, inputs)
            if bad:
                raise GeError(GeStatus.PARAM_INVALID, f"graph {graph_id} {bad}")
        try:
            self._build(entry)
        except GeError as exc:
            raise GeError(GeStatus.FAILED, exc.detail) from None

    def run_graph(self, graph_id: int, inputs: Sequence[Any]) -> list[np.ndarray]:
        """``RunGraph``: run (building first if needed) and return the outputs.

        Outputs follow ``set_outputs``, then the variables of Save nodes. In train mode the Summary tensors are
        taken out and given to the Summary callback, then a checkpoint graph's variables go to the Save
        callback; without the callback it needs, the run is FAILED before anything executes. A callback's
        non-zero return or exception is logged and the run is still SUCCESS. In prediction mode no callback
        fires and the Summary tensors stay at the end of the outputs (GE's behaviour, inferred).

        Codes: GE_GRAPH_GRAPH_NOT_EXIST (unknown id), PARAM_INVALID (input count, dtype or shape),
        GE_GRAPH_NOT_BUILT (the graph cannot be built; the reason is logged), GE_GRAPH_ALREADY_RUNNING
        (the graph is running, e.g. from its own callback), FAILED (execution failed; variables untouched).

        The first run of a graph with inputs of given dtypes and shapes checks everything and keeps a plan
        (:mod:`openacl.graph_engine._plan`); a later run whose inputs fit it does only the run itself.
        """
        plan = self._plans.get(graph_id) if type(graph_id) is int and type(inputs) is list else None
        if plan is None or not plan.fits(inputs) or not plan.run_lock.acquire(False):
            return self._run_graph(graph_id, inputs)  # every check, and a new plan (or the error)
        try:
            return self._execute(plan, inputs)
        except GeError as exc:
            raise one_line("RunGraph", exc) from None
        finally:
            _release_run(plan.run_lock)

    @names_api("RunGraph")
    def _run_graph(self, graph_id: int, inputs: Sequence[Any]) -> list[np.ndarray]:
        """``run_graph`` without a plan that fits: check, build, plan (kept for the next run), execute."""
        _check_id_type("RunGraph", graph_id)
        _check_inputs_type(inputs)
        self._require_open(graph_id)
        entry, version = self._start(graph_id)
        try:
            return self._run(entry, inputs, fire=self.train, keep_at=version)
        finally:
            _release_run(entry.run_lock)

    @names_api("RunGraphAsync")
    def run_graph_async(self, graph_id: int, inputs: Sequence[Any], done: DoneCallback) -> None:
        """``RunGraphAsync``: queue a run; ``done(status, outputs)`` is called on the session's worker thread.

        Never fires the Summary or Save callback, in any mode (GE calls them from RunGraph only); the Summary
        tensors stay at the end of the outputs. The inputs are copied when queued. An unknown id or bad inputs
        are raised at once and also passed to ``done``; a failure later reaches ``done`` only.
        """
        if not callable(done):
            raise TypeError("done must be callable: done(status, outputs)")
        _check_inputs_type(inputs)
        _check_id_type("RunGraphAsync", graph_id)
        self._require_open(graph_id)
        try:
            entry = self._entry(graph_id)
            arrays, bad = check_inputs(entry.specs, inputs)
            if bad:
                raise GeError(GeStatus.PARAM_INVALID, f"graph {graph_id} {bad}")
        except GeError as exc:
            _call_done(done, exc.code, [])
            raise
        copies = [np.array(a, copy=True) for a in arrays]
        with self._lock:
            if self._worker is None:
                self._worker = AsyncWorker(self.session_id)
                # a session dropped without close() or GEFinalize still ends its thread
                weakref.finalize(self, self._worker.stop, join=False)
            worker = self._worker
        worker.submit(lambda: self._run_async(entry, copies, done))

    # ----- stream-ordered runs -----

    @names_api("RegisterExternalAllocator")
    def register_external_allocator(self, stream: int, allocator: Any) -> None:
        """``RegisterExternalAllocator``: output memory of ``run_graph_with_stream_async`` on ``stream`` comes
        from ``allocator.malloc(size)`` (a block with ``addr`` and ``size``) and goes back by ``free(block)``
        when the output tensor is released. Replaces an earlier one. PARAM_INVALID for an unknown stream."""
        _check_stream_type(stream)
        if not callable(getattr(allocator, "malloc", None)) or not callable(getattr(allocator, "free", None)):
            raise TypeError("allocator must have malloc(size) and free(block)")
        self._require()
        _resolve_stream(stream)
        with self._lock:  # the one replaced goes after the lock (its last reference may run user code)
            replaced, self._allocators[stream] = self._allocators.get(stream), allocator
        del replaced

    @names_api("UnregisterExternalAllocator")
    def unregister_external_allocator(self, stream: int) -> None:
        """``UnregisterExternalAllocator``: the stream's outputs come from the device again. Succeeds also when
        none was registered (GE-PY then has only its default one to drop)."""
        _check_stream_type(stream)
        self._require()
        with self._lock:
            removed = self._allocators.pop(stream, None)
        del removed  # after the lock: its last reference may run user code

    @names_api("RunGraphWithStreamAsync")
    def run_graph_with_stream_async(
        self, graph_id: int, stream: int, inputs: Sequence[Any]
    ) -> list[device_tensors.DeviceTensor]:
        """``RunGraphWithStreamAsync``: queue a run on an ``acl`` stream; returns its device outputs at once.

        Inputs are :class:`~openacl.graph_engine.device_tensors.DeviceTensor` (read when the stream reaches the run, so
        copies queued before it are seen) or host arrays. The outputs' memory is allocated now, from the
        stream's registered allocator or the current device, so the graph's output shapes must be static
        (FAILED otherwise); their data is written when the run executes: synchronize the stream before reading
        them. A run that fails there fails its stream task (ACL_ERROR_RT_MODEL_EXECUTE at the stream's
        synchronize). Never fires the Summary or Save callback (GE calls them from RunGraph only).
        """
        _check_id_type("RunGraphWithStreamAsync", graph_id)
        _check_inputs_type(inputs)
        _check_stream_type(stream)
        self._require_open(graph_id)
        target = _resolve_stream(stream)
        entry = self._entry(graph_id)
        shaped = [np.empty(t.shape, t.dtype) if isinstance(t, device_tensors.DeviceTensor) else t for t in inputs]
        arrays = self._checked(entry, shaped)
        exe = self._build(entry, arrays)
        self._checked(entry, arrays)
        descs = exe.output_descs()
        if any(desc is None for desc in descs):
            raise GeError(
                GeStatus.FAILED,
                f"graph {graph_id} has outputs without a static shape; their memory cannot be allocated first",
            )
        with self._lock:
            allocator = self._allocators.get(stream)
        outputs: list[device_tensors.DeviceTensor] = []
        try:
            for dtype, shape in descs:  # type: ignore[misc]
                outputs.append(device_tensors.allocate(dtype, shape, allocator))
        except Exception as exc:  # no context, no memory, or the user's allocator failed
            for tensor in outputs:
                tensor.release()
            raise GeError(
                GeStatus.FAILED, f"graph {graph_id}: output memory not allocated: {_first_line(exc)}"
            ) from None
        host_inputs = list(inputs)

        def work() -> None:
            feeds = [device_tensors.read(t) if isinstance(t, device_tensors.DeviceTensor) else t for t in host_inputs]
            try:
                self._start_entry(entry)
                try:
                    results = self._run(entry, feeds, fire=False)
                finally:
                    _release_run(entry.run_lock)
            except GeError as exc:
                raise AclError(AclCode.ACL_ERROR_RT_MODEL_EXECUTE, f"GE graph {graph_id}: {exc.detail}") from None
            for tensor, value in zip(outputs, results, strict=True):
                device_tensors.write(tensor, value)

        try:
            target.enqueue(work_task(f"ge_run_graph:{graph_id}", work))
        except AclError as exc:
            for tensor in outputs:
                tensor.release()
            raise GeError(GeStatus.FAILED, f"graph {graph_id} not queued on stream {stream:#x}: {exc}") from None
        return outputs

    # ----- variables and callbacks -----

    @names_api("GetVariables")
    def get_variables(self, names: Sequence[str | bytes]) -> list[np.ndarray]:
        """``GetVariables``: copies of the named variables, through GE's tagged checkpoint graph, so the Save
        callback never fires (GE ST ``test_generate_and_run_checkpoint_graph``). FAILED for an unknown name."""
        if isinstance(names, str | bytes) or not isinstance(names, Sequence):
            raise TypeError("names must be a list of variable names")
        self._require()
        wanted = tuple(state.text(n) for n in names)
        with self._lock:
            missing = [n for n in wanted if n not in self._variables]
            types = {n: (self._variables[n].dtype, self._variables[n].shape) for n in wanted if n in self._variables}
            exe = self._getvar_cache.get(wanted)
        if missing:
            raise GeError(GeStatus.FAILED, f"no variable {', '.join(map(repr, missing))} in session {self.session_id}")
        if not wanted:
            return []
        if exe is None:
            try:
                exe = Executable(passes.compile_graph(passes.gen_checkpoint_graph(wanted)), types)
            except Exception as exc:
                raise GeError(
                    GeStatus.FAILED, f"building {passes.CHECKPOINT_GRAPH} failed: {_first_line(exc)}"
                ) from None
            with self._lock:
                self._getvar_cache[wanted] = exe
        return self._execute(self._plan(int(time.time()), exe, None, [], fire=self.train), [])

    @names_api("RegisterCallBackFunc")
    def register_callback_func(self, key: str | bytes, callback: Callback) -> None:
        """``RegisterCallBackFunc``: ``callback(graph_id, params_list)`` for key "Summary" or "Save".

        As the CANN doc says (GE's code differs): GE_SESSION_MANAGER_NOT_INIT before ``ge_initialize``, and
        PARAM_INVALID for any other key or a callback that is not callable. A key registered again is replaced.
        ``key`` may be ``bytes`` (the AscendString overload); ``params_list`` keys are always ``str``.
        """
        if not state.is_initialized():
            raise GeError(GeStatus.GE_SESSION_MANAGER_NOT_INIT, "GE is not initialized; call GEInitialize first")
        self._require()
        name = state.text(key) if isinstance(key, str | bytes) else None
        if name not in CALLBACK_KEYS:
            raise GeError(GeStatus.PARAM_INVALID, f"key {key!r} is not supported; the keys are 'Summary' and 'Save'")
        if not callable(callback):
            raise GeError(GeStatus.PARAM_INVALID, f"the callback for {name!r} is not callable: {callback!r}")
        with self._lock:
            replaced, self._callbacks[name] = self._callbacks.get(name), callback
            dropped = self._changed()
        del replaced, dropped  # after the lock: the last reference to a callback may run user code

    # ----- openacl extras -----

    def compiled_model(self, graph_id: int) -> onnx.ModelProto | None:
        """A copy of the ONNX model a built graph runs as (for inspection and benchmarks); None if unbuilt."""
        with self._lock:
            entry = self._graphs.get(graph_id)
        if entry is None or entry.exe is None:
            return None
        model = onnx.ModelProto()
        model.CopyFrom(entry.exe.model)
        return model

    def close(self) -> None:
        """Release the graphs, variables and the async worker; safe to call twice. GEFinalize calls it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            worker, self._worker = self._worker, None
            # Taken out, not cleared: what they hold (callbacks, allocators) goes after the lock.
            held = (self._graphs, self._getvar_cache, self._variables, self._callbacks, self._allocators)
            dropped = self._changed()
            self._graphs, self._getvar_cache, self._variables, self._callbacks, self._allocators = {}, {}, {}, {}, {}
        del held, dropped
        state.leave(self)
        if checker.enabled:
            checker.on_destroy("GE session", self.session_id)
        if worker is not None:
            worker.stop()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "train" if self.train else "prediction"
        return f"Session({self.session_id}, {mode}, {len(self._graphs)} graphs)"

    # ----- the engine: raises GeError -----

    def _require(self) -> None:
        """GE is initialised and this session has an inner session."""
        if not state.is_initialized():
            raise GeError(GeStatus.GE_CLI_GE_NOT_INITIALIZED, "GE is not initialized; call GEInitialize first")
        if self._dead or self._closed or self._generation != state.generation():
            reason = self._dead or "the session is closed (GEFinalize or close())"
            raise GeError(GeStatus.FAILED, f"session {self.session_id} has no inner session: {reason}")

    def _require_open(self, graph_id: int, api: str | None = None) -> None:
        """:meth:`_require`, then a graph id in uint32 range (the type was checked first, when ``api`` is None)."""
        if api is not None:
            _check_id_type(api, graph_id)
        self._require()
        if not 0 <= graph_id <= _MAX_GRAPH_ID:
            raise GeError(GeStatus.PARAM_INVALID, f"graph id {graph_id} is not a uint32")

    def _entry(self, graph_id: int) -> _GraphEntry:
        with self._lock:
            entry = self._graphs.get(graph_id)
        if entry is None:
            raise GeError(
                GeStatus.GE_GRAPH_GRAPH_NOT_EXIST, f"graph id {graph_id} does not exist; add it with AddGraph first"
            )
        return entry

    def _start(self, graph_id: int) -> tuple[_GraphEntry, int]:
        """Find the graph and take its run lock, in one critical section; with the session version then."""
        with self._lock:
            entry = self._graphs.get(graph_id)
            if entry is not None and entry.run_lock.acquire(False):
                return entry, self._version
        if entry is None:
            raise GeError(
                GeStatus.GE_GRAPH_GRAPH_NOT_EXIST, f"graph id {graph_id} does not exist; add it with AddGraph first"
            )
        raise GeError(
            GeStatus.GE_GRAPH_ALREADY_RUNNING, f"graph {graph_id} is already running; parallel runs are not supported"
        )

    def _start_entry(self, entry: _GraphEntry) -> None:
        """Take the graph's run lock (the caller releases it), or GE_GRAPH_ALREADY_RUNNING."""
        if not entry.run_lock.acquire(False):
            raise GeError(
                GeStatus.GE_GRAPH_ALREADY_RUNNING,
                f"graph {entry.graph_id} is already running; parallel runs are not supported",
            )

    def _changed(self) -> dict[int, RunPlan]:
        """Under ``_lock``: something a plan depends on changed. The dropped plans are returned, for the caller to
        let go of after the lock (they hold callbacks, whose last reference may run user code)."""
        self._version += 1
        dropped, self._plans = self._plans, {}
        return dropped

    def _keep_plan(self, entry: _GraphEntry, plan: RunPlan, version: int) -> None:
        """Keep ``plan`` for the next run of its graph, if nothing changed since ``version`` was read."""
        with self._lock:
            replaced = None
            if version == self._version and self._graphs.get(entry.graph_id) is entry:
                replaced = self._plans.get(entry.graph_id)
                self._plans[entry.graph_id] = plan
        del replaced  # after the lock (one of the same version holds the same callbacks, but so the rule is plain)

    def _checked(self, entry: _GraphEntry, inputs: Sequence[Any]) -> list[np.ndarray]:
        arrays, bad = check_inputs(entry.specs, inputs)
        if bad:
            raise GeError(GeStatus.PARAM_INVALID, f"graph {entry.graph_id} {bad}")
        return arrays

    def _build(self, entry: _GraphEntry, arrays: Sequence[np.ndarray] | None = None) -> Executable:
        """The entry's Executable, compiling it the first time; GE_GRAPH_NOT_BUILT says why it cannot be built.

        A failed build is not remembered: a later call tries again (a variable it lacked may exist by then).
        Data declared without a shape take the shapes of ``arrays``, the first run's inputs; later runs must
        match them.
        """
        exe = entry.exe
        if exe is not None:
            return exe
        with entry.build_lock:
            if entry.exe is not None:
                return entry.exe
            graph = entry.graph
            try:
                if arrays is not None and any(spec[2] is None for spec in entry.specs):
                    graph = passes.with_data_shapes(graph, [a.shape for a in arrays])
                compiled = passes.compile_graph(graph)
                var_types, fresh = self._variable_types(compiled)
                exe = Executable(compiled, var_types)
            except GeError as exc:
                raise GeError(GeStatus.GE_GRAPH_NOT_BUILT, f"graph {entry.graph_id} cannot be built: {exc}") from None
            except Exception as exc:  # onnx / onnxruntime reject the model
                raise GeError(
                    GeStatus.GE_GRAPH_NOT_BUILT, f"graph {entry.graph_id} cannot be built: {_first_line(exc)}"
                ) from None
            with self._lock:
                for name, value in fresh.items():
                    self._variables.setdefault(name, value)
            if self._dump is not None:
                exe.dump = dumping.GraphDump(self._dump, exe.model, graph.name, entry.graph_id)
            entry.specs = input_specs(graph)
            entry.exe = exe
            return exe

    def _variable_types(self, compiled: passes.CompiledGraph) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Each variable's (dtype, shape): the session's value if it has one, else the graph's initial value."""
        types: dict[str, Any] = {}
        fresh: dict[str, np.ndarray] = {}
        with self._lock:
            for name, node in compiled.variables.items():
                current = self._variables.get(name)
                value = node.attrs.get("value")
                if current is not None:
                    if value is not None and (value.dtype != current.dtype or value.shape != current.shape):
                        raise GeError(
                            GeStatus.PARAM_INVALID,
                            f"variable {name!r} is {current.dtype}{list(current.shape)} in this session, "
                            f"the graph gives {value.dtype}{list(value.shape)}",
                        )
                    types[name] = (current.dtype, current.shape)
                elif value is not None:
                    types[name] = (value.dtype, value.shape)
                    fresh[name] = value
                elif passes.only_assigned(compiled, name):
                    continue  # an init graph: the run's Assign gives the variable its first value
                else:
                    raise GeError(
                        GeStatus.FAILED,
                        f"variable {name!r} has no value in this session; give it one "
                        f"(graph.variable({name!r}, value=...)) in a graph built first",
                    )
        return types, fresh

    def _run(
        self, entry: _GraphEntry, inputs: Sequence[Any], *, fire: bool, keep_at: int | None = None
    ) -> list[np.ndarray]:
        """Check the inputs, build, plan and execute; ``keep_at``: keep the plan if the session is still at that
        version."""
        specs = entry.specs
        arrays = self._checked(entry, inputs)
        exe = self._build(entry, arrays)
        if entry.specs is not specs:  # this run built the graph; its Data shapes may have just been fixed
            arrays = self._checked(entry, arrays)
        plan = self._plan(entry.graph_id, exe, entry.run_lock, arrays, fire=fire)
        if keep_at is not None:
            self._keep_plan(entry, plan, keep_at)
        return self._execute(plan, arrays)

    def _plan(
        self, graph_id: int, exe: Executable, run_lock: Any, arrays: Sequence[np.ndarray], *, fire: bool
    ) -> RunPlan:
        """The plan of a run; with ``fire``, FAILED (before anything runs) if a callback the graph needs is missing."""
        summary = save = None
        if fire:
            callbacks = self._callbacks
            if exe.is_summary_graph and (summary := callbacks.get(SUMMARY)) is None:
                raise verbatim(GeError(GeStatus.FAILED, f"No summary callback found, graph_id:{graph_id}"))
            if exe.save and (save := callbacks.get(SAVE)) is None:
                raise verbatim(GeError(GeStatus.FAILED, f"No checkpoint callback found, graph_id:{graph_id}"))
        return RunPlan(graph_id, exe, run_lock, arrays, summary, save, with_summary=not fire)

    def _execute(self, plan: RunPlan, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run a planned graph; hand its Summary/Save tensors to the callbacks the plan fires."""
        exe, graph_id = plan.exe, plan.graph_id
        variables: Sequence[np.ndarray] = ()
        if exe.var_names:
            with self._lock:
                try:
                    variables = [self._variables[name] for name in exe.var_names]
                except KeyError as exc:  # close() ran since the graph was built
                    raise GeError(
                        GeStatus.FAILED, f"graph {graph_id}: variable {exc} is gone (the session was closed)"
                    ) from None
        try:
            results = exe.run(arrays, variables)
            if exe.dump is not None:
                exe.dump.dump([*arrays, *variables], self._device_id)
        except Exception as exc:
            raise GeError(GeStatus.FAILED, f"graph {graph_id} failed in onnxruntime: {_first_line(exc)}") from None
        if exe.assigns:
            updates, bad = exe.new_variables(results)
            if bad:
                raise GeError(GeStatus.FAILED, f"graph {graph_id}: {bad}; variables unchanged")
            with self._lock:
                self._variables.update(updates)
        outputs = plan.outputs(results)
        if plan.summary is not None:
            _call_back(SUMMARY, plan.summary, graph_id, read_only_dict(results, exe.summary))
        if plan.save is not None:
            _call_back(SAVE, plan.save, graph_id, read_only_dict(results, exe.save))
        return outputs

    def _run_async(self, entry: _GraphEntry, arrays: list[np.ndarray], done: DoneCallback) -> None:
        """One queued run, on the worker thread."""
        try:
            with self._lock:
                gone = self._closed or self._graphs.get(entry.graph_id) is not entry
            if gone:
                raise GeError(
                    GeStatus.FAILED, f"graph {entry.graph_id} was removed or its session closed before it ran"
                )
            self._start_entry(entry)
            try:
                outputs = self._run(entry, arrays, fire=False)
            finally:
                _release_run(entry.run_lock)
        except GeError as exc:
            line = one_line("RunGraphAsync", exc)
            log.log(line.level, "%s", line.detail)
            _call_done(done, exc.code, [])
            return
        _call_done(done, GeStatus.SUCCESS, outputs)


# ----- helpers -----


def _call_back(key: str, callback: Callback, graph_id: int, params: dict[str, np.ndarray]) -> None:
    """Run a Summary/Save callback: its non-zero return or exception is logged, and goes no further."""
    try:
        ret = callback(graph_id, params)
    except Exception:
        errmsg.log_error(log, "%s callback raised, graph_id:%d; RunGraph still succeeds", key, graph_id, exc_info=True)
        return
    if ret is not None and ret != 0:
        errmsg.log_error(log, "%s callback returned %r, graph_id:%d; RunGraph still succeeds", key, ret, graph_id)


def _call_done(done: DoneCallback, code: int, outputs: list[np.ndarray]) -> None:
    try:
        done(int(code), outputs)
    except Exception:
        errmsg.log_error(log, "RunGraphAsync done callback raised", exc_info=True)


def _check_inputs_type(inputs: Any) -> None:
    if type(inputs) is list:  # the common case, without the Sequence ABC check
        return
    if isinstance(inputs, np.ndarray | str | bytes) or not isinstance(inputs, Sequence):
        raise TypeError(f"inputs must be a list of arrays, not {type(inputs).__name__}")


def _check_id_type(api: str, graph_id: Any) -> None:
    if type(graph_id) is not int and (not isinstance(graph_id, int) or isinstance(graph_id, bool)):
        raise TypeError(f"{api}: graph_id must be an int, not {type(graph_id).__name__}")


def _check_stream_type(stream: Any) -> None:
    if not isinstance(stream, int) or isinstance(stream, bool):
        raise TypeError("stream must be an int")


def _resolve_stream(stream: int) -> Any:
    try:
        return rt_device.resolve(stream)
    except AclError as exc:
        raise GeError(GeStatus.PARAM_INVALID, f"stream {stream:#x}: {exc}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
