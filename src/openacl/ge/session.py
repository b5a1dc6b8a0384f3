"""GE sessions: ``GEInitialize``/``GEFinalize`` and ``Session`` with graphs, variables and callbacks.

Guarantees:
- Every method returns a GE status (``GeStatus.SUCCESS`` is 0) or ``(value, status)``; bad input (unknown graph
  id, wrong inputs, an unbuildable graph) is a status and one log line, never an exception. Only arguments
  of the wrong Python type raise ``TypeError``.
- The Summary and Save callbacks fire only from ``run_graph`` in train mode (``ge.graphRunMode`` >= 1), once
  per run and key, after the graph has executed and the variables have been updated, on the caller's
  thread, before ``run_graph`` returns: Summary first, then Save. ``run_graph_async`` never fires them (as in
  GE); in prediction mode none fire.
- No session lock is held while user code runs (a Summary/Save callback, a ``run_graph_async`` done
  callback). A callback may call the session, e.g. ``get_variables``; running the graph that is calling it
  returns ``GE_GRAPH_ALREADY_RUNNING``.
- Variables live in the session as read-only arrays that are replaced, never written, so an array handed to
  a callback keeps its values.

Where the CANN documentation and GE's code differ, openacl follows the documentation (see each method).
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from queue import SimpleQueue
from typing import Any

import numpy as np
import onnx

from openacl.errors import AclCode, AclError, GeError, GeStatus, code_name
from openacl.ge import device_tensors, dumping, passes
from openacl.ge._executable import Executable, InputSpec, check_inputs, input_specs, read_only
from openacl.ge.graph import Graph
from openacl.log import get_logger
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task

__all__ = ["GEFinalize", "GEInitialize", "Session", "ge_finalize", "ge_initialize", "is_initialized"]

log = get_logger("ge")

SUMMARY, SAVE = "Summary", "Save"
CALLBACK_KEYS = (SUMMARY, SAVE)
RUN_MODE_OPTION = "ge.graphRunMode"
DEVICE_OPTION = "ge.exec.deviceId"
_MAX_GRAPH_ID = 2**32 - 1

Callback = Callable[[int, dict[str, np.ndarray]], Any]
DoneCallback = Callable[[int, list[np.ndarray]], Any]


class _Ge:
    """Process-wide GE state (one GE instance per process, as CANN documents)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Invariant: ``generation`` changes at every GEFinalize; a session of an older generation is dead.
        self.initialized = False
        self.generation = 0
        self.options: dict[str, str] = {}
        self.sessions: weakref.WeakSet[Session] = weakref.WeakSet()


_ge = _Ge()
_session_ids = itertools.count(1)


def ge_initialize(options: Mapping[Any, Any] | None = None) -> int:
    """``GEInitialize``: SUCCESS, also when already initialised (GE ignores the second call; differing
    options are only warned about). An empty option key is FAILED."""
    parsed, bad = _options(options)
    if bad:
        log.error("GEInitialize: %s", bad)
        return GeStatus.FAILED
    with _ge.lock:
        if _ge.initialized:
            if parsed != _ge.options:
                log.warning("GEInitialize is called more than once; the new options are ignored")
            return GeStatus.SUCCESS
        _ge.initialized = True
        _ge.options = parsed
    log.info("GEInitialize: %s", parsed)
    return GeStatus.SUCCESS


def ge_finalize() -> int:
    """``GEFinalize``: closes every session (queued async runs get FAILED). SUCCESS, also when not initialised."""
    with _ge.lock:
        if not _ge.initialized:
            log.warning("GEFinalize is called before GEInitialize")
            return GeStatus.SUCCESS
        _ge.initialized = False
        _ge.generation += 1
        _ge.options = {}
        sessions = list(_ge.sessions)
        _ge.sessions.clear()
    for session in sessions:
        session.close()
    return GeStatus.SUCCESS


def _ge_options_snapshot() -> dict[str, str]:
    with _ge.lock:
        return dict(_ge.options)


def is_initialized() -> bool:
    return _ge.initialized


def finalize_at_exit() -> None:
    """GEFinalize at exit when the program did not (``openacl.process``): a session worker still inside
    onnxruntime while the interpreter is torn down aborts the process ("terminate called without an active
    exception")."""
    if _ge.initialized:
        ge_finalize()


GEInitialize = ge_initialize
GEFinalize = ge_finalize


class _GraphEntry:
    """A graph added to a session: the snapshot AddGraph took, and its build once there is one."""

    def __init__(self, graph_id: int, graph: Graph, source: Graph) -> None:
        self.graph_id = graph_id
        self.graph = graph
        self.source = weakref.ref(source)
        self.specs: list[InputSpec] = input_specs(graph)
        self.build_lock = threading.Lock()
        self.exe: Executable | None = None
        # Invariant: True between a run's start and the end of its callbacks; changed under the session lock.
        self.running = False


class Session:
    """``ge::Session``. Not safe for concurrent use of one graph (GE: "Session暂不支持并发执行").

    Options: ``ge.graphRunMode`` ("0" prediction, "1" train; the session option wins over the one given to
    ``ge_initialize``). A session created before ``ge_initialize``, or with bad options, has no inner session:
    its methods return GE_CLI_GE_NOT_INITIALIZED while GE is not initialised and FAILED after.
    """

    def __init__(self, options: Mapping[Any, Any] | None = None) -> None:
        self.session_id = next(_session_ids)
        self._lock = threading.Lock()
        self._graphs: dict[int, _GraphEntry] = {}
        self._variables: dict[str, np.ndarray] = {}
        self._callbacks: dict[str, Callback] = {}
        #: stream handle -> the allocator its stream-ordered runs take output memory from (GE's external allocator)
        self._allocators: dict[int, Any] = {}
        self._getvar_cache: dict[tuple[str, ...], Executable] = {}
        self._worker: _AsyncWorker | None = None
        self._closed = False
        self._dead: str | None = None
        self.options, bad = _options(options)
        with _ge.lock:
            self._generation = _ge.generation
            if not _ge.initialized:
                self._dead = "the session was created before GEInitialize"
            else:
                _ge.sessions.add(self)
            mode = self.options.get(RUN_MODE_OPTION, _ge.options.get(RUN_MODE_OPTION, "0"))
        try:
            self.train = int(mode) >= 1
        except ValueError:
            self.train = False
            bad = bad or f"{RUN_MODE_OPTION}={mode!r} is not a number ({code_name(GeStatus.GE_GRAPH_OPTIONS_INVALID)})"
        merged = {**_ge_options_snapshot(), **self.options}
        self._device_id = int(merged.get(DEVICE_OPTION, "0")) if merged.get(DEVICE_OPTION, "0").isdigit() else 0
        self._dump = None
        try:
            self._dump = dumping.dump_session(merged)
        except GeError as exc:
            bad = bad or f"{exc.detail} ({code_name(exc.code)})"
        self._dead = self._dead or bad
        if self._dead:
            log.error("Session %d: creating the session failed: %s", self.session_id, self._dead)

    # ----- graphs -----

    def add_graph(self, graph_id: int, graph: Graph, options: Mapping[Any, Any] | None = None) -> int:
        """``AddGraph``: keeps a snapshot of ``graph``. Re-adding an existing id returns SUCCESS and keeps the
        first graph (the CANN doc); adding a Graph object already added under another id is FAILED."""
        if not isinstance(graph, Graph):
            raise TypeError(f"graph must be an openacl.ge.Graph, not {type(graph).__name__}")
        id_code = _check_id("AddGraph", graph_id)
        code = self._usable("AddGraph") or id_code
        if code:
            return code
        with self._lock:
            if graph_id in self._graphs:
                log.warning("AddGraph: graph id %d already exists; the first graph is kept", graph_id)
                return GeStatus.SUCCESS
            for entry in self._graphs.values():
                if entry.source() is graph:
                    log.error(
                        "AddGraph: graph %r is already added as graph id %d (%s)",
                        graph.name,
                        entry.graph_id,
                        code_name(GeStatus.GE_GRAPH_GRAPH_ALREADY_EXIST),
                    )
                    return GeStatus.FAILED
            self._graphs[graph_id] = _GraphEntry(graph_id, graph.copy(), graph)
        return GeStatus.SUCCESS

    def remove_graph(self, graph_id: int) -> int:
        """``RemoveGraph``: FAILED for an unknown id (GE turns GE_GRAPH_GRAPH_NOT_EXIST into FAILED). A graph
        being run is removed at once; that run finishes."""
        id_code = _check_id("RemoveGraph", graph_id)
        code = self._usable("RemoveGraph") or id_code
        if code:
            return code
        with self._lock:
            entry = self._graphs.pop(graph_id, None)
        if entry is None:
            log.error("RemoveGraph: graph id %d does not exist (GE_GRAPH_GRAPH_NOT_EXIST)", graph_id)
            return GeStatus.FAILED
        return GeStatus.SUCCESS

    def build_graph(self, graph_id: int, inputs: Sequence[Any] = ()) -> int:
        """``BuildGraph``: compile now instead of at the first run. ``inputs``, when given, are checked like
        ``run_graph``'s (PARAM_INVALID). GE_GRAPH_GRAPH_NOT_EXIST for an unknown id; FAILED when the graph
        cannot be built (the reason is logged)."""
        id_code = _check_id("BuildGraph", graph_id)
        _check_inputs_type(inputs)
        code = self._usable("BuildGraph") or id_code
        if code:
            return code
        entry = self._entry("BuildGraph", graph_id)
        if entry is None:
            return GeStatus.GE_GRAPH_GRAPH_NOT_EXIST
        if inputs:
            _, bad = check_inputs(entry.specs, inputs)
            if bad:
                log.error("BuildGraph: graph %d %s", graph_id, bad)
                return GeStatus.PARAM_INVALID
        exe = self._build("BuildGraph", entry)
        return GeStatus.SUCCESS if exe is not None else GeStatus.FAILED

    def run_graph(self, graph_id: int, inputs: Sequence[Any]) -> tuple[list[np.ndarray], int]:
        """``RunGraph``: run (building first if needed) and return ``(outputs, status)``.

        Outputs follow ``set_outputs``, then the variables of Save nodes. In train mode the Summary tensors are
        taken out and given to the Summary callback, then a checkpoint graph's variables go to the Save
        callback; without the callback it needs, the run is FAILED before anything executes. A callback's
        non-zero return or exception is logged and the run is still SUCCESS. In prediction mode no callback
        fires and the Summary tensors stay at the end of the outputs (GE's behaviour, inferred).

        Codes: GE_GRAPH_GRAPH_NOT_EXIST (unknown id), PARAM_INVALID (input count, dtype or shape),
        GE_GRAPH_NOT_BUILT (the graph cannot be built; the reason is logged), GE_GRAPH_ALREADY_RUNNING
        (the graph is running, e.g. from its own callback), FAILED (execution failed; variables untouched).
        """
        id_code = _check_id("RunGraph", graph_id)
        _check_inputs_type(inputs)
        code = self._usable("RunGraph") or id_code
        if code:
            return [], code
        with self._lock:  # find the graph and mark it running in one critical section
            entry = self._graphs.get(graph_id)
            running = entry is not None and entry.running
            if entry is not None and not running:
                entry.running = True
        if entry is None:
            log.error("RunGraph: graph id %d does not exist; add it with AddGraph first", graph_id)
            return [], GeStatus.GE_GRAPH_GRAPH_NOT_EXIST
        if running:
            log.error("graph %d is already running; parallel runs are not supported", graph_id)
            return [], GeStatus.GE_GRAPH_ALREADY_RUNNING
        try:
            return self._run(entry, inputs, fire=self.train)
        finally:
            entry.running = False

    def run_graph_async(self, graph_id: int, inputs: Sequence[Any], done: DoneCallback) -> int:
        """``RunGraphAsync``: queue a run; ``done(status, outputs)`` is called on the session's worker thread.

        Never fires the Summary or Save callback, in any mode (GE calls them from RunGraph only); the Summary
        tensors stay at the end of the outputs. The inputs are copied when queued. An unknown id or bad inputs
        are returned at once and also passed to ``done``; a failure later reaches ``done`` only.
        """
        if not callable(done):
            raise TypeError("done must be callable: done(status, outputs)")
        _check_inputs_type(inputs)
        id_code = _check_id("RunGraphAsync", graph_id)
        code = self._usable("RunGraphAsync") or id_code
        if code:
            return code
        entry = self._entry("RunGraphAsync", graph_id)
        if entry is None:
            _call_done(done, GeStatus.GE_GRAPH_GRAPH_NOT_EXIST, [])
            return GeStatus.GE_GRAPH_GRAPH_NOT_EXIST
        arrays, bad = check_inputs(entry.specs, inputs)
        if bad:
            log.error("RunGraphAsync: graph %d %s", graph_id, bad)
            _call_done(done, GeStatus.PARAM_INVALID, [])
            return GeStatus.PARAM_INVALID
        copies = [np.array(a, copy=True) for a in arrays]
        with self._lock:
            if self._worker is None:
                self._worker = _AsyncWorker(self.session_id)
                # a session dropped without close() or GEFinalize still ends its thread
                weakref.finalize(self, self._worker.stop, join=False)
            worker = self._worker
        worker.submit(lambda: self._run_async(entry, copies, done))
        return GeStatus.SUCCESS

    # ----- stream-ordered runs -----

    def register_external_allocator(self, stream: int, allocator: Any) -> int:
        """``RegisterExternalAllocator``: output memory of ``run_graph_with_stream_async`` on ``stream`` comes
        from ``allocator.malloc(size)`` (a block with ``addr`` and ``size``) and goes back by ``free(block)``
        when the output tensor is released. Replaces an earlier one. PARAM_INVALID for an unknown stream."""
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TypeError("stream must be an int")
        if not callable(getattr(allocator, "malloc", None)) or not callable(getattr(allocator, "free", None)):
            raise TypeError("allocator must have malloc(size) and free(block)")
        code = self._usable("RegisterExternalAllocator") or self._stream_code("RegisterExternalAllocator", stream)
        if code:
            return code
        with self._lock:
            self._allocators[stream] = allocator
        return GeStatus.SUCCESS

    def unregister_external_allocator(self, stream: int) -> int:
        """``UnregisterExternalAllocator``: the stream's outputs come from the device again. SUCCESS also when
        none was registered (GE-PY then has only its default one to drop)."""
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TypeError("stream must be an int")
        code = self._usable("UnregisterExternalAllocator")
        if code:
            return code
        with self._lock:
            self._allocators.pop(stream, None)
        return GeStatus.SUCCESS

    def run_graph_with_stream_async(
        self, graph_id: int, stream: int, inputs: Sequence[Any]
    ) -> tuple[list[device_tensors.DeviceTensor], int]:
        """``RunGraphWithStreamAsync``: queue a run on an ``acl`` stream; returns its device outputs at once.

        Inputs are :class:`~openacl.ge.device_tensors.DeviceTensor` (read when the stream reaches the run, so
        copies queued before it are seen) or host arrays. The outputs' memory is allocated now, from the
        stream's registered allocator or the current device, so the graph's output shapes must be static
        (FAILED otherwise); their data is written when the run executes: synchronize the stream before reading
        them. A run that fails there fails its stream task (ACL_ERROR_RT_MODEL_EXECUTE at the stream's
        synchronize). Never fires the Summary or Save callback (GE calls them from RunGraph only).
        """
        api = "RunGraphWithStreamAsync"
        id_code = _check_id(api, graph_id)
        _check_inputs_type(inputs)
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TypeError("stream must be an int")
        code = self._usable(api) or id_code or self._stream_code(api, stream)
        if code:
            return [], code
        target = rt_device.resolve(stream)
        entry = self._entry(api, graph_id)
        if entry is None:
            return [], GeStatus.GE_GRAPH_GRAPH_NOT_EXIST
        shaped = [np.empty(t.shape, t.dtype) if isinstance(t, device_tensors.DeviceTensor) else t for t in inputs]
        arrays, bad = check_inputs(entry.specs, shaped)
        exe = None if bad else self._build(api, entry, arrays)
        if exe is not None and not bad:
            _, bad = check_inputs(entry.specs, arrays)
        if bad:
            log.error("%s: graph %d %s", api, graph_id, bad)
            return [], GeStatus.PARAM_INVALID
        if exe is None:
            return [], GeStatus.GE_GRAPH_NOT_BUILT
        descs = exe.output_descs()
        if any(desc is None for desc in descs):
            log.error(
                "%s: graph %d has outputs without a static shape; their memory cannot be allocated first", api, graph_id
            )
            return [], GeStatus.FAILED
        with self._lock:
            allocator = self._allocators.get(stream)
        outputs: list[device_tensors.DeviceTensor] = []
        try:
            for dtype, shape in descs:  # type: ignore[misc]
                outputs.append(device_tensors.allocate(dtype, shape, allocator))
        except Exception as exc:  # no context, no memory, or the user's allocator failed
            for tensor in outputs:
                tensor.release()
            log.error("%s: graph %d: output memory not allocated: %s", api, graph_id, _first_line(exc))
            return [], GeStatus.FAILED
        host_inputs = list(inputs)

        def work() -> None:
            feeds = [device_tensors.read(t) if isinstance(t, device_tensors.DeviceTensor) else t for t in host_inputs]
            if not self._start(entry):
                raise AclError(AclCode.ACL_ERROR_RT_MODEL_EXECUTE, f"GE graph {graph_id} is already running")
            try:
                results, status = self._run(entry, feeds, fire=False)
            finally:
                entry.running = False
            if status:
                raise AclError(AclCode.ACL_ERROR_RT_MODEL_EXECUTE, f"GE graph {graph_id} failed: {code_name(status)}")
            for tensor, value in zip(outputs, results, strict=True):
                device_tensors.write(tensor, value)

        try:
            target.enqueue(work_task(f"ge_run_graph:{graph_id}", work))
        except AclError as exc:
            for tensor in outputs:
                tensor.release()
            log.error("%s: graph %d not queued on stream %#x: %s", api, graph_id, stream, exc)
            return [], GeStatus.FAILED
        return outputs, GeStatus.SUCCESS

    def _stream_code(self, api: str, stream: int) -> int:
        try:
            rt_device.resolve(stream)
        except AclError as exc:
            log.error("%s: stream %#x: %s", api, stream, exc)
            return GeStatus.PARAM_INVALID
        return GeStatus.SUCCESS

    # ----- variables and callbacks -----

    def get_variables(self, names: Sequence[str | bytes]) -> tuple[list[np.ndarray], int]:
        """``GetVariables``: copies of the named variables, through GE's tagged checkpoint graph, so the Save
        callback never fires (GE ST ``test_generate_and_run_checkpoint_graph``). FAILED for an unknown name."""
        if isinstance(names, str | bytes) or not isinstance(names, Sequence):
            raise TypeError("names must be a list of variable names")
        code = self._usable("GetVariables")
        if code:
            return [], code
        wanted = tuple(_text(n) for n in names)
        with self._lock:
            missing = [n for n in wanted if n not in self._variables]
            types = {n: (self._variables[n].dtype, self._variables[n].shape) for n in wanted if n in self._variables}
            exe = self._getvar_cache.get(wanted)
        if missing:
            log.error("GetVariables: no variable %s in session %d", ", ".join(map(repr, missing)), self.session_id)
            return [], GeStatus.FAILED
        if not wanted:
            return [], GeStatus.SUCCESS
        if exe is None:
            try:
                exe = Executable(passes.compile_graph(passes.gen_checkpoint_graph(wanted)), types)
            except Exception as exc:
                log.error("GetVariables: building %s failed: %s", passes.CHECKPOINT_GRAPH, _first_line(exc))
                return [], GeStatus.FAILED
            with self._lock:
                self._getvar_cache[wanted] = exe
        return self._execute(exe, int(time.time()), [], fire=self.train)

    def register_callback_func(self, key: str | bytes, callback: Callback) -> int:
        """``RegisterCallBackFunc``: ``callback(graph_id, params_list)`` for key "Summary" or "Save".

        As the CANN doc says (GE's code differs): GE_SESSION_MANAGER_NOT_INIT before ``ge_initialize``, and
        PARAM_INVALID for any other key or a callback that is not callable. A key registered again is replaced.
        ``key`` may be ``bytes`` (the AscendString overload); ``params_list`` keys are always ``str``.
        """
        if not _ge.initialized:
            log.error("RegisterCallBackFunc: GE is not initialized; call GEInitialize first")
            return GeStatus.GE_SESSION_MANAGER_NOT_INIT
        code = self._usable("RegisterCallBackFunc")
        if code:
            return code
        name = _text(key) if isinstance(key, str | bytes) else None
        if name not in CALLBACK_KEYS:
            log.error("RegisterCallBackFunc: key %r is not supported; the keys are 'Summary' and 'Save'", key)
            return GeStatus.PARAM_INVALID
        if not callable(callback):
            log.error("RegisterCallBackFunc: the callback for %r is not callable: %r", name, callback)
            return GeStatus.PARAM_INVALID
        with self._lock:
            self._callbacks[name] = callback
        return GeStatus.SUCCESS

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
            self._graphs.clear()
            self._getvar_cache.clear()
            self._variables.clear()
            self._callbacks.clear()
            self._allocators.clear()
        with _ge.lock:
            _ge.sessions.discard(self)
        if worker is not None:
            worker.stop()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "train" if self.train else "prediction"
        return f"Session({self.session_id}, {mode}, {len(self._graphs)} graphs)"

    # CamelCase names of the C++ API, for readers of the CANN docs.
    AddGraph = add_graph
    RemoveGraph = remove_graph
    BuildGraph = build_graph
    RunGraph = run_graph
    RunGraphAsync = run_graph_async
    GetVariables = get_variables
    RegisterCallBackFunc = register_callback_func

    # ----- internals -----

    def _usable(self, api: str) -> int:
        if not _ge.initialized:
            log.error("%s: GE is not initialized; call GEInitialize first", api)
            return GeStatus.GE_CLI_GE_NOT_INITIALIZED
        if self._dead or self._closed or self._generation != _ge.generation:
            reason = self._dead or "the session is closed (GEFinalize or close())"
            log.error("%s: session %d has no inner session: %s", api, self.session_id, reason)
            return GeStatus.FAILED
        return GeStatus.SUCCESS

    def _entry(self, api: str, graph_id: int) -> _GraphEntry | None:
        with self._lock:
            entry = self._graphs.get(graph_id)
        if entry is None:
            log.error("%s: graph id %d does not exist; add it with AddGraph first", api, graph_id)
        return entry

    def _start(self, entry: _GraphEntry) -> bool:
        with self._lock:
            if entry.running:
                log.error("graph %d is already running; parallel runs are not supported", entry.graph_id)
                return False
            entry.running = True
            return True

    def _build(self, api: str, entry: _GraphEntry, arrays: Sequence[np.ndarray] | None = None) -> Executable | None:
        """The entry's Executable, compiling it the first time; None (and one log line) if it cannot be built.

        A failed build is not remembered: a later call tries again (a variable it lacked may exist by then).
        Data declared without a shape take the shapes of ``arrays``, the first run's inputs; later runs must
        match them.
        """
        exe = entry.exe  # built once and never unset: no lock needed to read it
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
                log.error("%s: graph %d cannot be built: %s", api, entry.graph_id, exc)
                return None
            except Exception as exc:  # onnx / onnxruntime reject the model
                log.error("%s: graph %d cannot be built: %s", api, entry.graph_id, _first_line(exc))
                return None
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

    def _run(self, entry: _GraphEntry, inputs: Sequence[Any], *, fire: bool) -> tuple[list[np.ndarray], int]:
        specs = entry.specs
        arrays, bad = check_inputs(specs, inputs)
        if bad:
            log.error("RunGraph: graph %d %s", entry.graph_id, bad)
            return [], GeStatus.PARAM_INVALID
        exe = self._build("RunGraph", entry, arrays)
        if exe is None:
            return [], GeStatus.GE_GRAPH_NOT_BUILT
        if entry.specs is not specs:  # this run built the graph; its Data shapes may have just been fixed
            arrays, bad = check_inputs(entry.specs, arrays)
            if bad:
                log.error("RunGraph: graph %d %s", entry.graph_id, bad)
                return [], GeStatus.PARAM_INVALID
        return self._execute(exe, entry.graph_id, arrays, fire=fire)

    def _execute(
        self, exe: Executable, graph_id: int, arrays: Sequence[np.ndarray], *, fire: bool
    ) -> tuple[list[np.ndarray], int]:
        """Run a built graph; with ``fire``, hand its Summary/Save tensors to the callbacks."""
        callbacks = self._callbacks
        if fire:
            if exe.is_summary_graph and SUMMARY not in callbacks:
                log.error("No summary callback found, graph_id:%d", graph_id)
                return [], GeStatus.FAILED
            if exe.save and SAVE not in callbacks:
                log.error("No checkpoint callback found, graph_id:%d", graph_id)
                return [], GeStatus.FAILED
        variables: list[np.ndarray] = []
        if exe.var_names:
            with self._lock:
                try:
                    variables = [self._variables[name] for name in exe.var_names]
                except KeyError as exc:  # close() ran since the graph was built
                    log.error("RunGraph: graph %d: variable %s is gone (the session was closed)", graph_id, exc)
                    return [], GeStatus.FAILED
        try:
            results = None if exe.dump is None else exe.dump.run([*arrays, *variables], self._device_id)
            if results is None:
                results = exe.run(arrays, variables)
        except Exception as exc:
            log.error("RunGraph: graph %d failed in onnxruntime: %s", graph_id, _first_line(exc))
            return [], GeStatus.FAILED
        if exe.assigns:
            updates, bad = exe.new_variables(results)
            if bad:
                log.error("RunGraph: graph %d: %s; variables unchanged", graph_id, bad)
                return [], GeStatus.FAILED
            with self._lock:
                self._variables.update(updates)
        outputs = exe.outputs(results, with_summary=not fire)
        if fire:
            if exe.summary:
                params = {name: read_only(results[i]) for name, i in exe.summary}
                _call_back(SUMMARY, callbacks.get(SUMMARY), graph_id, params)
            if exe.save:
                params = {name: read_only(results[i]) for name, i in exe.save}
                _call_back(SAVE, callbacks.get(SAVE), graph_id, params)
        return outputs, GeStatus.SUCCESS

    def _run_async(self, entry: _GraphEntry, arrays: list[np.ndarray], done: DoneCallback) -> None:
        """One queued run, on the worker thread."""
        with self._lock:
            gone = self._closed or self._graphs.get(entry.graph_id) is not entry
        if gone:
            log.error("RunGraphAsync: graph %d was removed or its session closed before it ran", entry.graph_id)
            _call_done(done, GeStatus.FAILED, [])
            return
        if not self._start(entry):
            _call_done(done, GeStatus.GE_GRAPH_ALREADY_RUNNING, [])
            return
        try:
            outputs, code = self._run(entry, arrays, fire=False)
        finally:
            entry.running = False
        _call_done(done, code, outputs)


class _AsyncWorker:
    """The thread that serves one session's ``run_graph_async`` queue, in order."""

    def __init__(self, session_id: int) -> None:
        self._queue: SimpleQueue[Callable[[], None] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=f"openacl-ge-{session_id}", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._queue.put(job)

    def stop(self, join: bool = True) -> None:
        """Let the queued jobs finish (on a closed session they report FAILED), then end the thread."""
        self._queue.put(None)
        if join and threading.current_thread() is not self._thread:
            self._thread.join()

    def _loop(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                job()
            except Exception:  # pragma: no cover - _run_async catches what it can; keep the worker alive
                log.exception("RunGraphAsync worker: a queued run failed")
            job = None  # the job holds its session: let an unused session be collected while we wait


# ----- helpers -----


def _call_back(key: str, callback: Callback | None, graph_id: int, params: dict[str, np.ndarray]) -> None:
    """Run a Summary/Save callback: its non-zero return or exception is logged, and goes no further."""
    if callback is None:  # pragma: no cover - _execute checks first; no API unregisters
        return
    try:
        ret = callback(graph_id, params)
    except Exception:
        log.exception("%s callback raised, graph_id:%d; RunGraph still succeeds", key, graph_id)
        return
    if ret is not None and ret != 0:
        log.error("%s callback returned %r, graph_id:%d; RunGraph still succeeds", key, ret, graph_id)


def _call_done(done: DoneCallback, code: int, outputs: list[np.ndarray]) -> None:
    try:
        done(int(code), outputs)
    except Exception:
        log.exception("RunGraphAsync done callback raised")


def _check_inputs_type(inputs: Any) -> None:
    if type(inputs) is list:  # the common case, without the Sequence ABC check
        return
    if isinstance(inputs, np.ndarray | str | bytes) or not isinstance(inputs, Sequence):
        raise TypeError(f"inputs must be a list of arrays, not {type(inputs).__name__}")


def _check_id(api: str, graph_id: Any) -> int:
    if not isinstance(graph_id, int) or isinstance(graph_id, bool):
        raise TypeError(f"{api}: graph_id must be an int, not {type(graph_id).__name__}")
    if not 0 <= graph_id <= _MAX_GRAPH_ID:
        log.error("%s: graph id %d is not a uint32", api, graph_id)
        return GeStatus.PARAM_INVALID
    return GeStatus.SUCCESS


def _options(options: Mapping[Any, Any] | None) -> tuple[dict[str, str], str | None]:
    if options is None:
        return {}, None
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict of str to str, not {type(options).__name__}")
    parsed = {_text(k): _text(v) for k, v in options.items()}
    if "" in parsed:
        return parsed, "an option key is empty"
    return parsed, None


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return str(value)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
