"""How openacl makes and runs its onnxruntime sessions: one set of options for models, their observed twins and
single operators (``OPENACL_ORT_THREADS`` threads, no spinning after a run), and ``run``, which carries bfloat16
arrays through onnxruntime's Python binding."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

import numpy as np

from openacl import atfork, dtypes, lazy
from openacl.dtypes import ORT_BFLOAT16, is_bfloat16, onnx_from_numpy

ort = lazy.module("onnxruntime")

# onnxruntime's log severities (``SessionOptions.log_severity_level``): 0 verbose, 1 info, 2 warning, 3 error, 4 fatal.
ORT_LOG_ERROR = 3
ORT_LOG_FATAL = 4


def ort_threads() -> int:
    try:
        return max(int(os.environ.get("OPENACL_ORT_THREADS", "0")), 0)
    except ValueError:
        return 0


def new_session(model: str | bytes, options) -> ort.InferenceSession:
    """A CPU session over ``model`` (a path or the serialized bytes). Its thread pool's threads are the process's
    own: a forked child never destroys the ones it inherits (that would join threads only the parent has)."""
    return atfork.outlive_fork(ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]))


def session_options(optimize: bool = True, external_data_folder: str | None = None, prepack: bool = True):
    """``external_data_folder``: where a session made from model bytes finds external data (the model's folder).
    ``prepack=False`` keeps onnxruntime from repacking constant weights into kernel layouts: a session that reads
    its weights from the model's bytes (``model.skeleton``) then holds no second copy of them."""
    options = ort.SessionOptions()
    if not prepack:
        options.add_session_config_entry("session.disable_prepacking", "1")
    if external_data_folder is not None:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", external_data_folder)
    options.intra_op_num_threads = ort_threads()
    options.inter_op_num_threads = 1
    # FATAL only: an error onnxruntime logs (on stderr, in colour) reaches openacl as an exception anyway, which
    # is reported once, as one line, with its code.
    options.log_severity_level = ORT_LOG_FATAL
    # Worker threads that spin after a run would take the cores the runtime needs right then (outputs to
    # copy, callbacks, a dump to write); on small machines that costs more than waking them does.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


_shared_arena_registered = False
_shared_arena_lock = atfork.lock()


def share_arena(options) -> None:
    """Make a session allocate from the process's one shared CPU arena instead of an arena of its own.

    For sessions that live side by side and run one after another (a model's observed segments): with an arena
    each, every session would keep its own high-water mark for its life, so memory would be the sum of their
    peaks; with no arena, every large intermediate is a fresh ``mmap`` whose page faults cost ~10% of a run and
    vary from run to run. One arena holds the largest of their peaks, and grows by what is asked (not to the next
    power of two). Registered once per process, on first use; onnxruntime keeps it for the process's life."""
    global _shared_arena_registered
    with _shared_arena_lock:  # held for a registration only, never while user code runs
        if not _shared_arena_registered:
            info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
            ort.create_and_register_allocator(info, ort.OrtArenaCfg({"arena_extend_strategy": 1}))
            _shared_arena_registered = True
    options.add_session_config_entry("session.use_env_allocators", "1")


def needs_ort_values(session) -> bool:
    """Whether ``session`` takes or gives bfloat16, which numpy arrays cannot carry through ``session.run``
    (onnxruntime's Python binding has no numpy type for it): :func:`run` then goes through ``OrtValue``s."""
    return any(arg.type == ORT_BFLOAT16 for arg in (*session.get_inputs(), *session.get_outputs()))


def run(session, output_names: list[str], feeds: dict[str, np.ndarray], ort_values: bool) -> list:
    """``session.run``; with ``ort_values`` (see :func:`needs_ort_values`) bfloat16 arrays (ml_dtypes) go in and
    come out as bfloat16 numpy arrays, bit for bit.

    Through onnxruntime's C entry point where there is one (as GE runs do, ``graph_engine._executable``): its
    Python ``run`` checks the feed names on every call, which callers here make from the model's own input names,
    every one given; the C entry takes the same arguments and raises the same errors for the data. So a caller
    names its outputs (the C entry refuses an empty list, where ``run`` would take every output) and gives every
    input (a missing one is onnxruntime's "Missing Input" error, not ``run``'s ValueError)."""
    if not ort_values:
        inner = getattr(session, "_sess", None)
        if inner is not None:
            return inner.run(output_names, feeds, None)
        return session.run(output_names, feeds)
    values = session.run_with_ort_values(output_names, {name: _ort_value(array) for name, array in feeds.items()})
    return [_numpy(value) for value in values]


def bound_entry(session) -> Callable | None:
    """onnxruntime's C entry point for a run on an IO binding, ``entry(binding._iobinding, run_options)``, as
    :func:`run` uses its own for feeds; None where this onnxruntime has none (then ``run_with_iobinding``). Its
    Python ``run_with_iobinding`` checks WebGPU graph capture on every call, which a CPU session never does:
    about 0.2 us of a 5 us small operator (``acl.op``)."""
    inner = getattr(session, "_sess", None)
    entry = getattr(inner, "run_with_iobinding", None)
    return entry if callable(entry) and hasattr(session.io_binding(), "_iobinding") else None


def _ort_value(array: np.ndarray):
    array = np.ascontiguousarray(array)
    if is_bfloat16(array.dtype):
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array.view(np.uint16), onnx_from_numpy(array.dtype))
    return ort.OrtValue.ortvalue_from_numpy(array)


def _numpy(value) -> np.ndarray:
    if value.data_type() != ORT_BFLOAT16:
        return value.numpy()
    shape = tuple(value.shape())
    size = value.tensor_size_in_bytes()
    out = np.empty(shape, dtypes.BFLOAT16)
    if size:
        ctypes.memmove(out.ctypes.data, value.data_ptr(), size)  # the OrtValue's own buffer, size bytes
    return out
