"""Ready callbacks: Summary tensors to TensorBoard event files, Save tensors to safetensors checkpoints.

Register them like any callback::

    sess.register_callback_func("Summary", TensorBoardSummaryWriter("runs/exp1"))
    sess.register_callback_func("Save", SafetensorsCheckpointWriter("ckpt", keep=5))

Values may be numpy arrays (``openacl.ge``) or GE-PY ``ge.graph.Tensor`` objects (through ``__array__``).
Both return ``GeStatus.SUCCESS``, or ``GeStatus.FAILED`` after logging what went wrong; ``run_graph`` only
logs a failure, so a full disk never stops training.
"""

from __future__ import annotations

import collections
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from openacl import atfork, lazy
from openacl.errors import GeStatus
from openacl.graph_engine import errmsg
from openacl.log import get_logger

if TYPE_CHECKING:
    from tensorboardX import SummaryWriter

# Loaded when a sink is made or writes, not with ``openacl.ge``.
safetensors_numpy = lazy.module("safetensors.numpy")
tensorboardX = lazy.module("tensorboardX")
_tbx_crc32c = lazy.module("tensorboardX.crc32c")
summary_pb2 = lazy.module("tensorboardX.proto.summary_pb2")
tensor_pb2 = lazy.module("tensorboardX.proto.tensor_pb2")
tensor_shape_pb2 = lazy.module("tensorboardX.proto.tensor_shape_pb2")
types_pb2 = lazy.module("tensorboardX.proto.types_pb2")

__all__ = ["SafetensorsCheckpointWriter", "TensorBoardSummaryWriter", "native_crc32c", "parse_summary_key"]

log = get_logger("ge")

SCALAR, TENSOR, IMAGE, HISTOGRAM = "Scalar", "Tensor", "Image", "Histogram"
_KEY = re.compile(r"^(?P<tag>.*)\[:(?P<kind>[A-Za-z]+)\]$")


def native_crc32c() -> bool:
    """True when tensorboardX checksums records with the native ``crc32c`` package, not its Python loop."""
    return getattr(_tbx_crc32c, "_crc32c_native", None) is not None


def parse_summary_key(key: str) -> tuple[str, str]:
    """``"loss[:Scalar]"`` -> ``("loss", "Scalar")``; a key without a known suffix is a whole-key Tensor."""
    match = _KEY.match(key)
    if match and match["kind"] in (SCALAR, TENSOR, IMAGE, HISTOGRAM):
        return match["tag"], match["kind"]
    return key, TENSOR


class TensorBoardSummaryWriter:
    """A Summary callback that writes each ``params_list`` entry as a TensorBoard summary.

    Keys follow MindSpore: ``tag[:Scalar]`` (one value), ``tag[:Tensor]``, ``tag[:Image]`` (NCHW, CHW or HW;
    floats in [0, 1] or uint8) and ``tag[:Histogram]``; any other key is written as a tensor under the whole
    key. The step is the run counter: 0 for the first call, then 1, 2, ... (``step`` may be set). Events go
    through tensorboardX and are flushed at least every ``flush_secs`` seconds, not only at close.
    """

    def __init__(self, logdir: str | os.PathLike[str], *, flush_secs: float = 1) -> None:
        if not native_crc32c():
            log.warning("tensorboardX is not using the native crc32c package; writing events will be slow")
        self.logdir = Path(logdir)
        self.flush_secs = flush_secs
        self.writer = tensorboardX.SummaryWriter(logdir=str(self.logdir), flush_secs=flush_secs)
        self.step = 0
        self._kinds: dict[str, tuple[str, Callable[..., None]]] = {}
        self._lock = atfork.lock()
        self._parents_writers: list[SummaryWriter] = []
        atfork.register(self, TensorBoardSummaryWriter._renew_in_child)

    def _renew_in_child(self) -> None:
        """In a forked child: events go to a new file of the child's own, through a new writer thread.

        The inherited writer's queue is a pipe the *parent's* thread reads, so closing it here would stop the
        parent's thread (whose next events would then block for ever), and its file is the parent's. It is kept,
        never used nor closed, not even by tensorboardX's exit hook (``_disowned``). The child's file name carries
        its pid: tensorboardX names files by the second, and a writer opening the parent's name would truncate it.
        """
        self._parents_writers.append(_disowned(self.writer))
        self.writer = tensorboardX.SummaryWriter(
            logdir=str(self.logdir), flush_secs=self.flush_secs, filename_suffix=f".{os.getpid()}"
        )

    def __call__(self, graph_id: int, params_list: Mapping[str, np.ndarray]) -> int:
        with self._lock:
            step = self.step
            self.step += 1
        status = GeStatus.SUCCESS
        for key, value in params_list.items():
            value = np.asarray(value)  # an ndarray, or anything with __array__ (a GE-PY ge.graph.Tensor)
            entry = self._kinds.get(key)
            if entry is None:
                tag, kind = parse_summary_key(key)
                entry = self._kinds[key] = (tag, _WRITERS[kind])
            try:
                entry[1](self.writer, entry[0], value, step)
            except Exception as exc:
                errmsg.log_error(
                    log, "TensorBoard summary %r of graph %d (step %d) not written: %s", key, graph_id, step, exc
                )
                status = GeStatus.FAILED
        return status

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        """Flush and close the event file (the writer's thread ends); safe to call twice."""
        self.writer.close()

    def __enter__(self) -> TensorBoardSummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _disowned(writer: SummaryWriter) -> SummaryWriter:
    """A writer a forked child inherited, marked closed in the child. tensorboardX closes every file writer at
    exit (``atexit``), which puts a last item on the writer's multiprocessing queue: in a child, that queue's lock
    may be the one the parent's feeder thread held at the fork, so the child hung at exit for ever. Closed, the
    writer's ``close`` (and ``flush``, ``add_event``) does nothing; the parent's writer is a separate object."""
    for file_writer in (getattr(writer, "all_writers", None) or {}).values():
        event_writer = getattr(file_writer, "event_writer", None)
        if event_writer is not None and hasattr(event_writer, "_closed"):
            event_writer._closed = True
    return writer


def _scalar(writer: SummaryWriter, tag: str, value: np.ndarray, step: int) -> None:
    if value.size != 1:
        raise ValueError(f"a Scalar summary needs one value, got shape {value.shape}")
    writer.add_scalar(tag, float(value.reshape(-1)[0]), step)


def _histogram(writer: SummaryWriter, tag: str, value: np.ndarray, step: int) -> None:
    writer.add_histogram(tag, np.asarray(value, dtype=np.float64), step)


def _image(writer: SummaryWriter, tag: str, value: np.ndarray, step: int) -> None:
    if value.ndim == 4:
        writer.add_images(tag, value, step, dataformats="NCHW")
    elif value.ndim in (2, 3):
        writer.add_image(tag, value, step, dataformats="HW" if value.ndim == 2 else "CHW")
    else:
        raise ValueError(f"an Image summary needs 2 to 4 dimensions (NCHW), got shape {value.shape}")


#: numpy dtype -> TensorFlow ``DataType`` name, for tensor summaries.
_TF_DTYPES = {
    np.dtype(np.float32): "DT_FLOAT",
    np.dtype(np.float64): "DT_DOUBLE",
    np.dtype(np.float16): "DT_HALF",
    np.dtype(np.int8): "DT_INT8",
    np.dtype(np.int16): "DT_INT16",
    np.dtype(np.int32): "DT_INT32",
    np.dtype(np.int64): "DT_INT64",
    np.dtype(np.uint8): "DT_UINT8",
    np.dtype(np.uint16): "DT_UINT16",
    np.dtype(np.uint32): "DT_UINT32",
    np.dtype(np.uint64): "DT_UINT64",
    np.dtype(np.bool_): "DT_BOOL",
    np.dtype(np.complex64): "DT_COMPLEX64",
    np.dtype(np.complex128): "DT_COMPLEX128",
}


def _tensor(writer: SummaryWriter, tag: str, value: np.ndarray, step: int) -> None:
    """A tensor summary (TensorBoard's ``tensors``); tensorboardX has no ``add_tensor``, so the proto is ours."""
    name = _TF_DTYPES.get(value.dtype)
    if name is None:
        raise ValueError(f"a Tensor summary cannot hold dtype {value.dtype}")
    data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
    proto = tensor_pb2.TensorProto(
        dtype=types_pb2.DataType.Value(name),
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in value.shape]
        ),
        tensor_content=data.tobytes(),
    )
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="tensors"))
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, tensor=proto, metadata=metadata)])
    writer._get_file_writer().add_summary(summary, step)


_WRITERS: dict[str, Callable[[SummaryWriter, str, np.ndarray, int], None]] = {
    SCALAR: _scalar,
    TENSOR: _tensor,
    IMAGE: _image,
    HISTOGRAM: _histogram,
}


class SafetensorsCheckpointWriter:
    """A Save callback that writes ``{graph_id}-{step}.safetensors`` atomically and keeps the newest ``keep``.

    Atomic and durable: the tensors are written under a temporary name in the same directory, fsynced, renamed
    over the final name, and the directory is fsynced, so a crash leaves either the old set of checkpoints or
    the new one. A failed write removes its temporary file and touches no earlier checkpoint. The metadata
    holds ``graph_id``, ``step`` and ``time`` (seconds since the epoch). Steps count the calls per graph id and
    go on from the newest checkpoint already in the directory.

    The callback itself only writes the temporary file (the training step pays what ``save_file`` costs); the
    fsyncs, the rename and pruning happen on a committer thread (``openacl-ge-checkpoint``), in call order.
    So a checkpoint appears under its final name shortly after ``run_graph`` returns: ``flush()`` waits for
    every checkpoint so far, and ``close()`` (or leaving a ``with`` block) flushes. A commit that fails is
    logged and leaves the earlier checkpoints as they were. ``background=False`` commits inside the callback.
    """

    def __init__(self, directory: str | os.PathLike[str], keep: int = 5, *, background: bool = True) -> None:
        if not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be an int >= 1, got {keep!r}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.background = background
        self._remove_stale_temporaries()
        self._next: dict[int, int] = {}
        self._lock = atfork.lock()
        self._committer = atfork.register(_Committer("openacl-ge-checkpoint"), _Committer.renew_in_child)

    def __enter__(self) -> SafetensorsCheckpointWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, graph_id: int, params_list: Mapping[str, np.ndarray]) -> int:
        with self._lock:
            step = self._next.get(graph_id)
            if step is None:
                existing = self.checkpoints(graph_id)
                step = _step_of(existing[-1]) + 1 if existing else 0
            self._next[graph_id] = step + 1
        try:
            tmp = self._stage(graph_id, step, params_list)
        except Exception as exc:
            errmsg.log_error(log, "checkpoint %d-%d not written (earlier checkpoints kept): %s", graph_id, step, exc)
            return GeStatus.FAILED
        if not self.background:
            return GeStatus.SUCCESS if self._commit(tmp, graph_id, step) else GeStatus.FAILED
        self._committer.submit(lambda: self._commit(tmp, graph_id, step))
        return GeStatus.SUCCESS

    def path(self, graph_id: int, step: int) -> Path:
        return self.directory / f"{graph_id}-{step}.safetensors"

    def write(self, graph_id: int, step: int, tensors: Mapping[str, np.ndarray]) -> Path:
        """Write one checkpoint atomically and durably, now; raises on failure, leaving no temporary file."""
        tmp = self._stage(graph_id, step, tensors)
        try:
            _fsync(tmp, os.O_RDONLY)
            os.replace(tmp, self.path(graph_id, step))
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        return self.path(graph_id, step)

    def flush(self) -> None:
        """Return once every checkpoint handed to this writer so far is committed (or has failed)."""
        self._committer.flush()

    def close(self) -> None:
        self.flush()

    def checkpoints(self, graph_id: int) -> list[Path]:
        """This directory's checkpoints of ``graph_id``, oldest step first."""
        prefix = f"{graph_id}-"
        found = [p for p in self.directory.iterdir() if p.name.startswith(prefix) and _step_of(p) >= 0]
        return sorted(found, key=_step_of)

    def _stage(self, graph_id: int, step: int, tensors: Mapping[str, np.ndarray]) -> Path:
        """The tensors under a temporary name (removed if writing fails)."""
        tmp = self.directory / f".{graph_id}-{step}.safetensors.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        metadata = {"graph_id": str(graph_id), "step": str(step), "time": f"{time.time():.6f}"}
        # ndarrays, or anything with __array__ (a GE-PY ge.graph.Tensor)
        arrays = {name: np.ascontiguousarray(np.asarray(value)) for name, value in tensors.items()}
        try:
            safetensors_numpy.save_file(arrays, tmp, metadata=metadata)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return tmp

    def _commit(self, tmp: Path, graph_id: int, step: int) -> bool:
        try:
            _fsync(tmp, os.O_RDONLY)
            os.replace(tmp, self.path(graph_id, step))
            _fsync(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except Exception as exc:
            tmp.unlink(missing_ok=True)
            errmsg.log_error(log, "checkpoint %d-%d not written (earlier checkpoints kept): %s", graph_id, step, exc)
            return False
        self._prune(graph_id)
        return True

    def _remove_stale_temporaries(self) -> None:
        """Temporary files of writers that were killed mid-checkpoint (their process is gone) are removed."""
        for path in self.directory.iterdir():
            match = _TEMPORARY.match(path.name)
            if match is None or int(match[1]) == os.getpid() or _process_alive(int(match[1])):
                continue
            try:
                path.unlink()
                log.info("removed %s, left by a writer that did not finish", path)
            except OSError as exc:
                log.warning("stale temporary checkpoint %s not removed: %s", path, exc)

    def _prune(self, graph_id: int) -> None:
        for old in self.checkpoints(graph_id)[: -self.keep]:
            try:
                old.unlink()
            except OSError as exc:
                log.warning("old checkpoint %s not removed: %s", old, exc)


class _Committer:
    """Runs submitted jobs in order on one thread that exists only while there is work."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._cond = atfork.condition()
        self._jobs: collections.deque[Callable[[], object]] = collections.deque()
        self._submitted = self._done = 0
        self._running = False

    def submit(self, job: Callable[[], object]) -> None:
        with self._cond:
            self._jobs.append(job)
            self._submitted += 1
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name=self._name, daemon=True).start()

    def flush(self) -> None:
        with self._cond:
            target = self._submitted
            while self._done < target:
                self._cond.wait()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._jobs:
                    self._running = False  # Invariant: no jobs queued and no thread running go together
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:
                errmsg.log_error(log, "%s: job failed", self._name, exc_info=True)
            with self._cond:
                self._done += 1
                self._cond.notify_all()

    def renew_in_child(self) -> None:
        """A forked child: the thread is the parent's, and so are the jobs it had left (done once, there)."""
        self._jobs.clear()
        self._done = self._submitted
        self._running = False


_TEMPORARY = re.compile(r"^\.\d+-\d+\.safetensors\.(\d+)\.[0-9a-f]+\.tmp$")


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is not ours to signal
        return True
    return True


_CHECKPOINT = re.compile(r"^\d+-(\d+)\.safetensors$")


def _step_of(path: Path) -> int:
    match = _CHECKPOINT.match(path.name)
    return int(match[1]) if match else -1


def _fsync(path: Any, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
