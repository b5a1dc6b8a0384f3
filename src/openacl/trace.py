"""A timeline of stream tasks and callbacks, for tools and for measuring the runtime itself.

Recording is off unless ``start()`` was called: the runtime checks ``trace.recorder`` (one attribute read) on
its hot paths. Spans are kept in memory as tuples and turned into Chrome trace JSON on demand.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """One piece of work: ``queued_ns`` <= ``start_ns`` <= ``end_ns`` (perf_counter_ns clock)."""

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
        self.spans: list[Span] = []
        self.thread_names: dict[int, str] = {}

    def add(self, name: str, category: str, queued_ns: int, start_ns: int, end_ns: int, **args: object) -> None:
        ident = threading.get_ident()
        if ident not in self.thread_names:
            self.thread_names[ident] = threading.current_thread().name
        self.spans.append(Span(name, category, ident, queued_ns, start_ns, end_ns, args))

    def chrome_events(self) -> list[dict]:
        """Complete ("X") events in microseconds, plus thread-name metadata, as Perfetto reads them."""
        pid = os.getpid()
        events: list[dict] = [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
            for tid, name in self.thread_names.items()
        ]
        for span in self.spans:
            args = {"queued_us": span.queued_ns / 1000, **span.args}
            events.append(
                {
                    "name": span.name,
                    "cat": span.category,
                    "ph": "X",
                    "pid": pid,
                    "tid": span.thread,
                    "ts": span.start_ns / 1000,
                    "dur": (span.end_ns - span.start_ns) / 1000,
                    "args": args,
                }
            )
        return events


recorder: Recorder | None = None


def start() -> Recorder:
    """Start recording (replacing any recorder) and return the new recorder."""
    global recorder
    recorder = Recorder()
    return recorder


def stop() -> Recorder | None:
    """Stop recording; return what was recorded."""
    global recorder
    done, recorder = recorder, None
    return done


now_ns = time.perf_counter_ns
