"""``openacl check``'s bookkeeping: where the program allocated, freed and created what, and the findings.

The runtime calls the hooks below at allocation, free, create and destroy, on the error paths of an access
(a range past its allocation, a pointer or handle that is no longer live), when a task is queued, when the host is
ordered after tasks (synchronize, queries, events, callbacks), and at host accesses and device memory reads and
writes. The kinds: leak, use-after-free, double-free, overrun, race, uninitialized, misuse. Checking is off unless
``OPENACL_CHECK=1`` or ``enable()``; off, each hook site costs one boolean test (``if checker.enabled:``) and
nothing is captured.

A *site* is the program's own frames: the innermost frames of the calling stack that are not openacl's (nor
the interpreter's runner frames), so a finding names the lines of the user's file, not ours.

Guarantees:
- Each finding is recorded once (the same kind at the same sites is counted, not repeated) and printed once to
  stderr when it is recorded, with no lock of ours held while it is printed.
- A leak is what the program created and never destroyed: reported when ``finalize`` starts (everything still
  alive), when ``reset_device`` reclaims what it owns, and at exit (``report_leaks``). Objects the runtime makes
  for itself (a device's primary context and default streams) are not tracked.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from openacl import atfork, atomicfile, lazy

json = lazy.module("json")  # only write_json needs it
# Invariant: False unless checking was asked for; every hook call site tests it first, so off costs nothing.
enabled: bool = os.environ.get("OPENACL_CHECK", "") not in ("", "0")

Frame = tuple[str, int, str]  # file, line, function
Site = tuple[Frame, ...]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # src/openacl
_RUNNER_FILES = ("runpy.py", "threading.py", "<frozen runpy>")
_RUNNER_DIRS = ("/_pytest/", "/pluggy/")  # a test's frames end at the test function
_SITE_DEPTH = 6
_FREED_HISTORY = 4096
# Leaks are listed memory first, then handles in this order; other kinds follow by name.
_LEAK_ORDER = (
    "device memory",
    "dvpp memory",
    "host memory",
    "stream",
    "event",
    "context",
    "model",
    "dataset",
    "data buffer",
)


@dataclass(frozen=True)
class Finding:
    """One problem: a headline (kind, what, size, address) and the program's frames of each site it relates to."""

    kind: str
    what: str
    size: int
    address: int
    sites: tuple[tuple[str, Site], ...]  # (label, frames): "access", "allocated", "freed", ...
    count: int = 1

    def headline(self) -> str:
        where = f" at {self.address:#x}" if self.address else ""
        return f"openacl check: {self.kind}: {self.what} ({self.size} bytes{where})"

    def render(self) -> str:
        lines = [self.headline()]
        for label, frames in self.sites:
            if not frames:
                lines.append(f"    {label}: (no frame of the program)")
                continue
            for i, (file, line, func) in enumerate(frames):
                prefix = f"    {label} at " if i == 0 else "        "
                lines.append(f"{prefix}{file}:{line} in {func}")
        return "\n".join(lines)

    def as_json(self) -> dict:
        return {
            "kind": self.kind,
            "what": self.what,
            "size": self.size,
            "address": self.address,
            "count": self.count,
            "sites": {
                label: [{"file": f, "line": n, "function": fn} for f, n, fn in frames] for label, frames in self.sites
            },
        }


@dataclass
class _Record:
    """Something the program made: its label ("device memory", "stream", ...), where, and its extent."""

    label: str
    address: int
    size: int
    site: Site
    device_id: int = -1
    freed_at: Site | None = field(default=None)
    serial: int = field(default_factory=lambda: next(_serials))  # creation order (``mark``)


_lock = atfork.lock()
_serials = itertools.count(1)
_live: dict[object, _Record] = {}  # key: ("mem", region) by identity, or (table kind, handle)
_freed: deque[_Record] = deque(maxlen=_FREED_HISTORY)  # newest last; looked up only on error paths
_findings: dict[tuple, Finding] = {}  # by (kind, what's kind, sites): recorded once, counted
_reclaiming = threading.local()


def enable(on: bool = True) -> None:
    global enabled
    enabled = on


def site() -> Site:
    """The program's own innermost frames at this call (none of openacl's, none of the runner's)."""
    frames: list[Frame] = []
    frame = sys._getframe(1)  # walked by hand: no source line is read, a site costs a few microseconds
    while frame is not None and len(frames) < _SITE_DEPTH:
        code = frame.f_code
        file = code.co_filename
        if not (file.startswith(_PACKAGE_DIR) or file.endswith(_RUNNER_FILES) or any(d in file for d in _RUNNER_DIRS)):
            frames.append((file, frame.f_lineno or 0, code.co_name))
        frame = frame.f_back
    return tuple(frames)


def findings() -> list[Finding]:
    with _lock:
        return list(_findings.values())


def mark() -> int:
    """A point in time: ``report_leaks(since=mark())`` reports only what was made after it (one test's)."""
    return next(_serials)


def take_findings() -> list[Finding]:
    """Every finding so far, forgotten here (a test's, once it is reported)."""
    with _lock:
        found = list(_findings.values())
        _findings.clear()
    return found


def reset() -> None:
    """Forget every record (process reset). Findings stay until taken (``take_findings``): a reset at the end of
    a test must not hide what the test did."""
    with _lock:
        _live.clear()
        _freed.clear()
        _queued.clear()
        _event_marks.clear()
        _written.clear()


def _record(finding: Finding) -> None:
    key = (finding.kind, finding.what.split(" ", 1)[0], finding.sites)
    with _lock:
        known = _findings.get(key)
        _findings[key] = finding if known is None else _replace_count(known, known.count + finding.count)
    if known is None:
        print(finding.render(), file=sys.stderr, flush=True)  # outside the lock: stderr may be anything


def _replace_count(finding: Finding, count: int) -> Finding:
    return Finding(finding.kind, finding.what, finding.size, finding.address, finding.sites, count)


# ----- memory -----


def on_alloc(region: object, label: str, addr: int, size: int, device_id: int) -> None:
    with _lock:
        _live[("mem", region)] = _Record(label, addr, size, site(), device_id)


def relabel(region: object, label: str) -> None:
    """An allocation another layer owns (DVPP memory) is reported under its own name."""
    with _lock:
        record = _live.get(("mem", region))
        if record is not None:
            record.label = label


def on_free(region: object) -> None:
    _forget(("mem", region))
    with _lock:
        _written.pop(region, None)
    _forget_queued_in(region.addr, region.size)  # type: ignore[attr-defined]


def _forget(key: object) -> None:
    here = site()
    with _lock:
        record = _live.pop(key, None)
        if record is None:
            return
        record.freed_at = here
        _freed.append(record)
    if getattr(_reclaiming, "when", None):
        _reclaiming.records.append(record)


def on_reclaimed(regions: list) -> None:
    """A reset freed these regions on the program's behalf: each one the program allocated leaked."""
    for region in regions:
        _forget(("mem", region))


def _freed_record(match) -> _Record | None:
    with _lock:
        for record in reversed(_freed):
            if match(record):
                return record
    return None


def on_bad_free(addr: int) -> None:
    """A free of an address that is not live: a double free if the program freed memory there before."""
    record = _freed_record(lambda r: r.address == addr and r.size > 0)
    if record is not None:
        _record(
            Finding(
                "double-free",
                f"{record.label} freed twice",
                record.size,
                addr,
                (("freed again", site()), ("first freed", record.freed_at or ()), ("allocated", record.site)),
            )
        )


def on_bad_access(addr: int, size: int, what: str) -> None:
    """An access to memory that is no longer live: a use after free if the program freed it."""
    record = _freed_record(lambda r: r.size > 0 and r.address <= addr < r.address + r.size)
    if record is not None:
        _record(
            Finding(
                "use-after-free",
                f"{what} in {record.label} that was freed",
                size,
                addr,
                (("access", site()), ("freed", record.freed_at or ()), ("allocated", record.site)),
            )
        )


def on_overrun(region: object, region_size: int, addr: int, size: int, fit: int, what: str) -> None:
    """An access of ``size`` bytes from ``addr`` of which only ``fit`` lie inside the allocation it starts in."""
    with _lock:
        record = _live.get(("mem", region))
    label = record.label if record is not None else "host object"
    _record(
        Finding(
            "overrun",
            f"{what} runs {size - fit} bytes past the end of a {region_size}-byte {label} allocation",
            size,
            addr,
            (("access", site()), ("allocated", record.site if record is not None else ())),
        )
    )


# ----- handles -----


def on_create(kind: str, handle: int) -> None:
    with _lock:
        _live[(kind, handle)] = _Record(kind, handle, 0, site())


def disown(kind: str, handle: int) -> None:
    """A handle the runtime made for itself (a desc a dataset owns): not the program's to destroy."""
    with _lock:
        _live.pop((kind, handle), None)


def on_destroy(kind: str, handle: int) -> None:
    _forget((kind, handle))
    if kind == "stream":  # destroying a stream waits for its tasks
        _ordered(handle)


def _facade_call() -> str:
    """The name of the pyACL function the program called (the outermost frame in ``openacl/acl/``), or ""."""
    facade = os.path.join(_PACKAGE_DIR, "acl", "")
    for summary in traceback.extract_stack():
        if summary.filename.startswith(facade) and not summary.filename.endswith("_args.py"):
            return summary.name
    return ""


def on_stale_handle(kind: str, handle: int, destroying: bool) -> None:
    """A handle that is not live: destroyed twice, or used after it was destroyed. A destroy call looks its
    handle up before removing it, so the pyACL function called decides which."""
    record = _freed_record(lambda r: r.label == kind and r.address == handle)
    if record is None:
        return
    destroying = destroying or "destroy" in _facade_call()
    bug, verb = ("double-free", "destroyed twice") if destroying else ("use-after-free", "used after it was destroyed")
    _record(
        Finding(
            bug,
            f"{kind} {handle:#x} {verb}",
            0,
            handle,
            (("access", site()), ("destroyed", record.freed_at or ()), ("created", record.site)),
        )
    )


# ----- races: host accesses against the tasks queued on streams that the host is not ordered after yet -----
#
# A task's ranges are recorded when it is queued. The host is ordered after a stream's queued tasks by a
# synchronize of that stream (or the device), a query that finds it done, a synchronize (or done query) of an event
# recorded on it after them, the stream's destruction, or a callback queued on it after them (while and after it
# runs). Order, not timing, decides: a read of a task's output before any of those is a race even if the task
# happened to be done.


@dataclass
class _Queued:
    """A task enqueued on a stream that the host has not synchronized with yet: what it reads and writes."""

    what: str
    stream_id: int
    reads: tuple[tuple[int, int], ...]
    writes: tuple[tuple[int, int], ...]
    site: Site
    serial: int = field(default_factory=lambda: next(_serials))


_queued: dict[int, list[_Queued]] = {}  # by stream handle: the tasks the host is not ordered after yet
_event_marks: dict[int, tuple[int, int]] = {}  # id(event) -> (stream handle, serial) of its newest record


def on_task(stream: object, what: str, reads: list[tuple[int, int]], writes: list[tuple[int, int]]) -> None:
    entry = _Queued(what, getattr(stream, "id", 0), tuple(reads), tuple(writes), site())
    with _lock:
        _queued.setdefault(stream.handle, []).append(entry)  # type: ignore[attr-defined]


def _ordered(handle: int, up_to: int | None = None) -> None:
    if handle not in _queued:  # nothing queued on it (a dict lookup is atomic): no lock for each callback
        return
    with _lock:
        if up_to is None:
            _queued.pop(handle, None)
        elif handle in _queued:
            _queued[handle] = [q for q in _queued[handle] if q.serial > up_to]


def on_host_ordered(stream: object) -> None:
    """The host waited for everything queued on ``stream`` (synchronize, a done query, destroy)."""
    _ordered(stream.handle)  # type: ignore[attr-defined]


def on_record(event: object, stream: object) -> None:
    with _lock:
        _event_marks[id(event)] = (stream.handle, next(_serials))  # type: ignore[attr-defined]


def on_event_reached(event: object) -> None:
    """The host saw ``event`` complete: it is ordered after what its stream had queued before the record."""
    with _lock:
        mark = _event_marks.get(id(event))
    if mark is not None:
        _ordered(*mark)


def ordered_callback(stream: object, fn):
    """``fn`` as a stream callback: when it runs, the host is ordered after what was queued before it."""
    handle, up_to = stream.handle, next(_serials)  # type: ignore[attr-defined]

    def callback(*args: object) -> object:
        _ordered(handle, up_to)
        return fn(*args)

    return callback


def _overlap(ranges: tuple[tuple[int, int], ...], addr: int, size: int) -> bool:
    return any(a < addr + size and addr < a + n for a, n in ranges)


def on_host_access(what: str, reads: list[tuple[int, int]] = (), writes: list[tuple[int, int]] = ()) -> bool:
    """A host access by the program: a race if a queued task will still write what it reads, or will still read
    or write what it writes. Returns whether it raced (then its reads are not also reported as uninitialized)."""
    with _lock:
        queued = [q for entries in _queued.values() for q in entries]
    raced = False
    for q in queued:
        for addr, size in reads:
            if size and _overlap(q.writes, addr, size):
                _race(what, "reads", addr, size, q, "will write")
                raced = True
        for addr, size in writes:
            if size and (_overlap(q.reads, addr, size) or _overlap(q.writes, addr, size)):
                _race(what, "writes", addr, size, q, "will still use")
                raced = True
    return raced


def _race(what: str, verb: str, addr: int, size: int, q: _Queued, task_verb: str) -> None:
    _record(
        Finding(
            "race",
            f"{what} {verb} memory that {q.what} queued on stream {q.stream_id} {task_verb}, before anything "
            "ordered the host after it",
            size,
            addr,
            (("access", site()), ("queued", q.site)),
        )
    )


def on_stream_destroy(stream: object) -> None:
    """``destroy_stream`` (not forced): CANN requires the stream's tasks done first (``synchronize_stream``); openacl
    waits for them, a device need not. Misuse if the host never waited for a task queued on it."""
    with _lock:
        queued = list(_queued.get(stream.handle, ()))  # type: ignore[attr-defined]
    if queued:
        _record(
            Finding(
                "misuse",
                f"destroy_stream of stream {queued[0].stream_id} with {len(queued)} task(s) queued that the host never "
                f"waited for ({queued[0].what} first): synchronize_stream before destroying it",
                0,
                0,
                (("access", site()), ("queued", queued[0].site)),
            )
        )


def _forget_queued_in(addr: int, size: int) -> None:
    """Memory freed: the tasks' ranges in it mean nothing any more (the address may be handed out again)."""
    with _lock:
        for handle, entries in list(_queued.items()):
            _queued[handle] = [
                q for q in entries if not (_overlap(q.reads, addr, size) or _overlap(q.writes, addr, size))
            ]


# ----- uninitialized: reads of device memory that nothing wrote -----
#
# Writes are noted when they happen (a task's when it runs, a call's when it is made), reads likewise, so a read
# queued behind the task that fills its memory is not reported. Only a read that finds no written byte at all in
# its range is reported (a model input never filled), never a partly written one, and only of memory allocated
# while checking was on.

_written: dict[object, list[tuple[int, int]]] = {}  # device region -> written [start, end) spans


def on_write(region: object, addr: int, size: int) -> None:
    if size <= 0:
        return
    with _lock:
        spans = _written.setdefault(region, [])
        spans.append((addr, addr + size))
        if len(spans) > 32:
            spans[:] = _merged(spans)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def on_read(region: object, addr: int, size: int, what: str, at: Site | None = None) -> None:
    """A read of ``[addr, addr + size)`` in a device region: uninitialized if nothing wrote any of it."""
    if size <= 0:
        return
    with _lock:
        record = _live.get(("mem", region))
        written = any(s < addr + size and addr < e for s, e in _written.get(region, ()))
    if record is None or written:  # not tracked since its allocation, or written
        return
    _record(
        Finding(
            "uninitialized",
            f"{what} reads {record.label} that nothing wrote",
            size,
            addr,
            (("access", at if at is not None else site()), ("allocated", record.site)),
        )
    )


# ----- leaks -----


@contextlib.contextmanager
def reclaiming(when: str) -> Iterator[None]:
    """Around a teardown (``reset_device``): whatever the program made that it frees is reported as leaked."""
    if not enabled or getattr(_reclaiming, "when", None):
        yield
        return
    _reclaiming.when, _reclaiming.records = when, []
    try:
        yield
    finally:
        records, _reclaiming.records, _reclaiming.when = _reclaiming.records, [], None
        _report(records, when)


def report_leaks(when: str, since: int = 0) -> None:
    """Everything the program made (after ``since``) and still holds is leaked (``finalize``, exit)."""
    with _lock:
        leaked = {key: record for key, record in _live.items() if record.serial > since}
        for key in leaked:
            del _live[key]
    _report(list(leaked.values()), when)


def _report(records: list[_Record], when: str) -> None:
    groups: dict[tuple[str, Frame], list[_Record]] = {}  # by the line that made them (whoever called it)
    for record in records:
        if record.site:  # made by the runtime for itself, not by a line of the program
            groups.setdefault((record.label, record.site[0]), []).append(record)

    def order(item: tuple[tuple[str, Frame], list[_Record]]) -> tuple[int, str]:
        label = item[0][0]
        return (_LEAK_ORDER.index(label) if label in _LEAK_ORDER else len(_LEAK_ORDER), label)

    for (label, _), group in sorted(groups.items(), key=order):
        where = group[0].site
        count, size = len(group), sum(r.size for r in group)
        noun = f"{label} allocation" if label.endswith("memory") else label
        _record(
            Finding(
                "leak",
                f"{count} {noun}{'' if count == 1 else 's'} still alive at {when}",
                size,
                group[0].address if group[0].size else 0,
                (("allocated" if group[0].size else "created", where),),
                count,
            )
        )


def write_json(path: str) -> None:
    """Every finding, as one JSON document."""
    document = {"findings": [f.as_json() for f in findings()]}
    atomicfile.write_text(path, json.dumps(document, indent=2) + "\n")  # complete or absent
