"""Profiled model executions: per-operator times from onnxruntime's own profiler, for ``acl.prof``.

While a model is profiled (a profiling window collects task times on its device, or the model is subscribed,
see ``runtime/prof/session.py``), its executions run on a *profiled twin*: an onnxruntime session of the
model's own operators (graph optimisation off, so every operator the model declares is timed under its own
name and type, as ``openacl dump`` names them) with onnxruntime's profiler on. Outputs come from that run, so
a profiled step costs no second run; they differ from an unprofiled step's by onnxruntime's fusions, as a
dump's observed run does (~1e-6 relative).

onnxruntime hands out its profile only when it ends (``end_profiling``), and a session cannot profile again
after that. So the twin collects executions until it is *flushed*: at ``acl.prof.stop``, at
``model_unsubscribe``, at ``acl.prof.finalize`` and ``acl.finalize``, and when it has recorded
:data:`_EVENT_BUDGET` operators; then its profile is read, handed to the runtime (``session.deliver``), and the
next profiled execution builds a new twin. Records therefore reach a subscription's pipe at those points, the
latest at unsubscribe, which is also when CANN flushes what it has and closes the pipe.

Invariants: a twin's ``lock`` is held while it runs and while it is flushed (onnxruntime code only, never user
code), so one twin's runs never overlap (its operators lie on one timeline track) and a flushed twin never
runs again; ``_lock`` guards only the ``_twins`` table.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from openacl import atfork, lazy, onnxrt
from openacl.errors import AclCode, AclError, ExecutionFailed
from openacl.log import get_logger
from openacl.model import model as _model
from openacl.model.model import Model
from openacl.onnxrt import session_options
from openacl.runtime.prof import session
from openacl.runtime.prof.opdesc import OpTime

ort = lazy.module("onnxruntime")

log = get_logger("prof")

# Operator events a twin collects before it is flushed: onnxruntime keeps at most 1,000,000 per session, and
# writes each as ~1 KB of JSON, so a flush reads at most ~50 MB.
_EVENT_BUDGET = 50_000


@dataclass
class _Run:
    device_id: int
    stream_id: int
    infer_id: int
    thread_id: int
    start_ns: int
    end_ns: int


@dataclass
class _Twin:
    session: object
    folder: str
    node_names: list[tuple[str, str]]  # (name, type) by node index
    lock: threading.Lock = field(default_factory=atfork.lock)
    runs: list[_Run] = field(default_factory=list)
    flushed: bool = False


_lock = atfork.lock()
_twins: dict[int, tuple[Model, _Twin]] = {}
_unprofilable: set[int] = set()  # models whose twin cannot be built: warned once, run unprofiled


def _node_names(model: Model) -> list[tuple[str, str]]:
    return [(node.name or f"{node.op_type}_{i}", node.op_type) for i, node in enumerate(model.proto.graph.node)]


def _build(model: Model) -> _Twin:
    folder = tempfile.mkdtemp(prefix="openacl-prof-")
    options = session_options(optimize=False, prepack=False)
    onnxrt.share_arena(options)
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(folder, f"model{model.id}")
    model.weights.apply(options)
    try:
        model.weights.check(f"model {model.id} ({model.name})")
        built = ort.InferenceSession(model.proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _Twin(built, folder, _node_names(model))


def _twin(model: Model) -> _Twin | None:
    with _lock:
        found = _twins.get(model.id)
        if found is not None and found[0] is model:
            return found[1]
        if model.id in _unprofilable:
            return None
    try:
        twin = _build(model)
    except Exception as exc:
        with _lock:
            _unprofilable.add(model.id)
        log.warning(
            "model %d (%s) runs unprofiled: cannot build its profiled session (%s); a model loaded from memory "
            "keeps what that needs only when loaded after acl.prof.init",
            model.id,
            model.name,
            exc,
        )
        return None
    with _lock:
        found = _twins.get(model.id)
        if found is not None and found[0] is model:  # another thread built one first
            loser = twin
            twin = found[1]
        else:
            _twins[model.id] = (model, twin)
            loser = None
    if loser is not None:
        _discard(loser)
    return twin


def run(model: Model, feeds: list[np.ndarray], device_id: int, stream_id: int, step: int) -> list[np.ndarray]:
    """Execute once: on the profiled twin when this execution is profiled, else as ``model.run`` does."""
    if not session.active or not session.wants_ops(model.id, device_id):
        return model.run(feeds)
    while True:
        twin = _twin(model)
        if twin is None:
            return model.run(feeds)
        with twin.lock:
            if twin.flushed:
                continue  # flushed while this thread waited: the next one is built
            outputs = _run_twin(model, twin, feeds, device_id, stream_id, step)
            full = len(twin.runs) * max(len(twin.node_names), 1) >= _EVENT_BUDGET
        if full:
            flush(model.id)
        return outputs


def _run_twin(
    model: Model, twin: _Twin, feeds: list[np.ndarray], device_id: int, stream_id: int, step: int
) -> list[np.ndarray]:
    names_in = [desc.name for desc in model.inputs]
    names_out = [desc.name for desc in model.outputs]
    start = time.time_ns()
    try:
        outputs = onnxrt.run(
            twin.session,
            names_out,
            dict(zip(names_in, feeds, strict=True)),
            onnxrt.needs_ort_values(twin.session),  # type: ignore[arg-type]
        )
    except Exception as exc:
        raise ExecutionFailed(
            AclCode.ACL_ERROR_FAILURE, f"model {model.id} ({model.name}): execution failed: {exc}"
        ) from None
    twin.runs.append(_Run(device_id, stream_id, step + 1, threading.get_native_id(), start, time.time_ns()))
    model.last_output_shapes = [out.shape for out in outputs]
    return outputs


def _tensors(items: list) -> tuple[tuple[str, tuple[int, ...]], ...]:
    found = []
    for item in items or ():
        for dtype, shape in item.items():
            found.append((str(dtype), tuple(int(d) for d in shape)))
    return tuple(found)


def _executions(model: Model, twin: _Twin, events: list[dict], origin_ns: int) -> list[session.Execution]:
    """onnxruntime's ``model_run`` spans, in order, are the twin's runs; each holds its ``Node`` spans."""
    run_spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name") == "model_run")
    run_starts = [start for start, _ in run_spans]
    ops: list[list[OpTime]] = [[] for _ in run_spans]
    for event in events:
        if event.get("cat") != "Node" or not event.get("name", "").endswith("_kernel_time"):
            continue
        args = event.get("args", {})
        index = int(args.get("node_index", -1))
        op_type = args.get("op_name", "")
        if 0 <= index < len(twin.node_names) and twin.node_names[index][1] == op_type:
            name = twin.node_names[index][0]
        else:
            name = event["name"][: -len("_kernel_time")]
        ts, dur = event["ts"], event["dur"]
        owner = bisect.bisect_right(run_starts, ts) - 1
        if owner < 0 or ts > run_spans[owner][1]:
            continue
        start = origin_ns + ts * 1000
        ops[owner].append(
            OpTime(
                name,
                op_type,
                start,
                start + dur * 1000,
                twin.runs[min(owner, len(twin.runs) - 1)].thread_id if twin.runs else 0,
                _tensors(args.get("input_type_shape")),
                _tensors(args.get("output_type_shape")),
            )
        )
    executions = []
    for run_info, measured in zip(twin.runs, ops, strict=False):
        measured.sort(key=lambda op: op.start_ns)
        executions.append(
            session.Execution(
                model.id,
                model.name,
                run_info.device_id,
                run_info.stream_id,
                run_info.infer_id,
                run_info.start_ns,
                run_info.end_ns,
                tuple(measured),
            )
        )
    return executions


def _end(twin: _Twin) -> tuple[list[dict], int]:
    """End the twin's profile; its events and their origin (ns since the epoch). Files are removed."""
    try:
        origin = twin.session.get_profiling_start_time_ns()  # type: ignore[attr-defined]
        path = twin.session.end_profiling()  # type: ignore[attr-defined]
        with open(path, encoding="utf-8") as f:
            return json.load(f), origin
    except (OSError, ValueError) as exc:
        log.warning("cannot read onnxruntime's profile: %s", exc)
        return [], 0
    finally:
        shutil.rmtree(twin.folder, ignore_errors=True)


def _discard(twin: _Twin) -> None:
    with twin.lock:
        if not twin.flushed:
            twin.flushed = True
            _end(twin)


def flush(model_id: int | None = None) -> None:
    """Read the profile of one model's twin (every twin: None) and hand its executions to the runtime."""
    with _lock:
        ids = [model_id] if model_id is not None else list(_twins)
        taken = [_twins.pop(i) for i in ids if i in _twins]
    executions: list[session.Execution] = []
    for model, twin in taken:
        with twin.lock:
            twin.flushed = True
            events, origin = _end(twin)
            executions.extend(_executions(model, twin, events, origin))
    if executions:
        session.deliver(executions)


# ----- the acl.prof calls that need models -----


def stop(config: int) -> str:
    flush()
    return session.stop(config)


def finalize() -> list[str]:
    flush()
    return session.finalize()


def subscribe(model_id: int, config: int) -> None:
    _model.get(model_id)  # INVALID_MODEL_ID for a model that is not loaded
    session.subscribe(model_id, config)


def unsubscribe(model_id: int) -> None:
    if not session.subscribed(model_id):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"model {model_id} is not subscribed")
    flush(model_id)
    session.unsubscribe(model_id)


@atfork.at_child
def reinit_after_fork() -> None:
    """A forked child profiles nothing it inherited: onnxruntime sessions do not survive a fork, so the twins are
    forgotten (never ended: their files are the parent's). The runtime's sessions renew themselves."""
    _twins.clear()
    _unprofilable.clear()


def reset() -> None:
    """Forget the twins (tests, process reset), unread; ``process.py`` resets the runtime's sessions after."""
    with _lock:
        taken = list(_twins.values())
        _twins.clear()
        _unprofilable.clear()
    for _, twin in taken:
        _discard(twin)
