"""A timeline of stream tasks, events, callbacks and waits, for tools and for measuring the runtime itself.

Recording is off unless ``start()`` (or ``enable(path)``, or ``OPENACL_TRACE=FILE`` read by
``configure_from_env()``) was called: the runtime reads ``trace.recorder`` (one attribute read) on its hot
paths and does nothing more while it is ``None``. Spans are kept in memory and turned into Chrome trace JSON
(which Perfetto and chrome://tracing open) on demand.

What the runtime records (category: span names):

- ``task``: WORK tasks (``memcpy_async``, ``memset_async``, ``model_execute:<name>``) on the engine thread
  that ran them.
- ``callback``: stream callbacks (named after the function) on the thread that ran them, with the stream,
  the ``BLOCK``/``NO_BLOCK`` flag and the pyACL id of the report thread.
- ``event``: ``record_event`` / ``reset_event``, zero-length, on the thread that passed the stream over them.
- ``wait``: ``stream_wait_event``, from when the stream reached it to when the event completed. A waiting
  stream holds no thread, so these lie on one track per stream (``stream <id> (device <n>)``).
- ``sync``: ``synchronize_stream`` / ``synchronize_event`` on the calling thread.

On every track spans nest: each span starts and ends in stack order on its thread (a callback that a report
thread runs while it waits in a synchronize lies inside the wait), and a stream track holds one wait at a time.
Timestamps are written on a grid of 1/8 µs (125 ns): such values are exact in binary, so readers that turn
microseconds into integer nanoseconds (Perfetto truncates) keep the nesting exactly.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from openacl import atfork, lazy
from openacl.atomicfile import replacing

json = lazy.module("json")  # only writing or reading a trace file needs it

now_ns = time.perf_counter_ns

ENV_VAR = "OPENACL_TRACE"
_TRACK_BASE = 0x4000_0000  # virtual track ids: above any Linux thread id (pid_max <= 2**22), within uint32
_GRID_NS = 125  # timestamps are written in multiples of 1/8 µs


@dataclass(frozen=True, slots=True)
class Span:
    """One piece of work: ``queued_ns`` <= ``start_ns`` <= ``end_ns`` (``now_ns`` clock).

    ``thread`` is the OS thread id (``threading.get_native_id``) that ran it, or a virtual track id.
    For callbacks ``queued_ns`` is when the stream reached the callback and posted it to its report thread;
    ``args["queued_ns"]`` is when ``launch_callback`` put it on the stream. Args ending in ``_ns`` are
    timestamps on the same clock.
    """

    name: str
    category: str
    thread: int
    queued_ns: int
    start_ns: int
    end_ns: int
    args: dict = field(default_factory=dict)


class Recorder:
    """Collects spans from any thread (``list.append`` is atomic under the GIL)."""

    def __init__(self) -> None:
        self.origin_ns = now_ns()
        self.spans: list[Span] = []
        self.thread_names: dict[int, str] = {}
        self._tracks: dict[object, int] = {}
        self._tracks_lock = atfork.lock()

    def add(self, name: str, category: str, queued_ns: int, start_ns: int, end_ns: int, /, **args: object) -> None:
        """Record a span that ran on the calling thread."""
        tid = threading.get_native_id()
        if tid not in self.thread_names:
            self.thread_names[tid] = threading.current_thread().name
        self.spans.append(Span(name, category, tid, queued_ns, start_ns, end_ns, args))

    def add_on_track(
        self,
        track: object,
        track_name: str,
        name: str,
        category: str,
        queued_ns: int,
        start_ns: int,
        end_ns: int,
        /,
        **args: object,
    ) -> None:
        """Record a span on a virtual track (``track`` is any hashable key, ``track_name`` its label).

        The caller keeps the spans of one track from partially overlapping (e.g. one wait at a time).
        """
        tid = self._tracks.get(track)
        if tid is None:
            with self._tracks_lock:
                tid = self._tracks.get(track)
                if tid is None:
                    tid = self._tracks[track] = _TRACK_BASE + len(self._tracks)
                    self.thread_names[tid] = track_name
        self.spans.append(Span(name, category, tid, queued_ns, start_ns, end_ns, args))

    def _us(self, t_ns: int) -> float:
        return ((t_ns - self.origin_ns) // _GRID_NS) / 8

    def chrome_events(self) -> list[dict]:
        """Thread-name metadata ("M") for every track, then complete ("X") events, in µs since ``origin_ns``."""
        spans = list(self.spans)
        names = dict(self.thread_names)
        pid = os.getpid()
        us = self._us
        events: list[dict] = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "openacl"}}]
        events.extend(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
            for tid, name in names.items()
        )
        for span in spans:
            args: dict = {"queued_us": us(span.queued_ns)}
            for key, value in span.args.items():
                if key.endswith("_ns") and isinstance(value, int):
                    args[key[:-3] + "_us"] = us(value)
                else:
                    args[key] = value
            start = us(span.start_ns)
            events.append(
                {
                    "name": span.name,
                    "cat": span.category,
                    "ph": "X",
                    "pid": pid,
                    "tid": span.thread,
                    "ts": start,
                    "dur": us(span.end_ns) - start,
                    "args": args,
                }
            )
        return events


recorder: Recorder | None = None  # the running recorder; None when recording is off
_last: Recorder | None = None  # the recorder the trace file shows: the running one, or the one stopped last
_path: str | None = None  # where the trace file goes (enable / OPENACL_TRACE); None: no file
_written: tuple | None = None  # (recorder, span count, path) of the last write
_state_lock = atfork.rlock()


def start() -> Recorder:
    """Start recording (replacing any recorder) and return the new recorder."""
    global recorder, _last
    with _state_lock:
        recorder = _last = Recorder()
        return recorder


def stop() -> Recorder | None:
    """Stop recording; return what was recorded. A trace file set up by ``enable`` still gets it."""
    global recorder, _last
    with _state_lock:
        done, recorder = recorder, None
        if _path is None:
            _last = None  # no file to write it to: keep nothing alive
        return done


def enable(path: str | os.PathLike) -> Recorder:
    """Record into a trace file written at ``acl.finalize`` and at exit (``openacl run/demo --trace FILE``;
    ``openacl.process`` writes it).

    Starts recording unless it is already on; the recording going on is kept.
    """
    global _path
    with _state_lock:
        _path = os.fspath(path)
        return recorder if recorder is not None else start()


def disable() -> Recorder | None:
    """Stop recording and forget the trace file without writing it; return what was recorded."""
    global _path, _last, _written
    with _state_lock:
        done = stop()
        _path, _last, _written = None, None, None
        return done


def configure_from_env() -> str | None:
    """Enable tracing into ``$OPENACL_TRACE`` when it names a file; return the path (None: not set)."""
    path = os.environ.get(ENV_VAR, "").strip()
    if not path:
        return None
    with _state_lock:
        if _path != path or recorder is None:
            enable(path)
    return path


def output_path() -> str | None:
    """The trace file that ``flush`` writes, or None."""
    return _path


def write(path: str | os.PathLike, rec: Recorder | None = None) -> str:
    """Write ``rec`` (default: the running recorder, else the last one) as Chrome trace JSON, atomically.

    The file is ``{"traceEvents": [...], "displayTimeUnit": "ms"}``, written to a temporary file next to
    ``path`` and renamed over it, so a reader never sees half a trace. Returns the path.
    """
    path = os.fspath(path)
    if rec is None:
        rec = recorder if recorder is not None else _last
    events = rec.chrome_events() if rec is not None else []
    with replacing(path) as f:
        f.write('{"traceEvents": [\n')
        f.write(",\n".join(json.dumps(event, separators=(",", ":")) for event in events))
        f.write('\n], "displayTimeUnit": "ms"}\n')
    return path


def flush(force: bool = False) -> str | None:
    """Write the trace file set up by ``enable`` if anything was recorded since it was last written.

    Returns the path written, or None (no trace file, or nothing new and not ``force``). Raises ``OSError``
    if it cannot write.
    """
    global _written
    with _state_lock:
        path = _path
        rec = recorder if recorder is not None else _last
        if path is None or (rec is None and not force):
            return None
        written = _written
        count = len(rec.spans) if rec is not None else 0
        if not force and written is not None and written[0] is rec and written[1] == count and written[2] == path:
            return None
        write(path, rec)
        _written = (rec, count, path)
        return path


def write_now() -> str | None:
    """Write the trace file set up by ``enable`` now, whatever was written before; None if there is none."""
    return flush(force=True)


def summarize(path: str | os.PathLike) -> dict:
    """Read a trace file: ``{"categories": {cat: {"count", "total_ms", "max_ms"}}, "threads", "tracks", "spans"}``.

    ``threads`` counts the OS threads that ran something; ``tracks`` adds the per-stream tracks.
    """
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    categories: dict[str, dict] = {}
    tids: set[int] = set()
    spans = 0
    for event in events:
        if event.get("ph") != "X":
            continue
        spans += 1
        tids.add(event["tid"])
        ms = event["dur"] / 1000
        row = categories.setdefault(event.get("cat", ""), {"count": 0, "total_ms": 0.0, "max_ms": 0.0})
        row["count"] += 1
        row["total_ms"] += ms
        row["max_ms"] = max(row["max_ms"], ms)
    threads = sum(1 for tid in tids if tid < _TRACK_BASE)
    return {"categories": categories, "threads": threads, "tracks": len(tids), "spans": spans}
