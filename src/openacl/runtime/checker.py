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
- Freed memory stays out of the allocator's hands while its record is among the recent frees (``_QUARANTINE_BYTES``
  at most), so a stale pointer meets its free, not the next buffer put at the same address.
- A leak is what the program created and never destroyed: reported when ``finalize`` starts (everything still
  alive but GE sessions, which outlive pyACL), when a teardown reclaims what the program owned (``reset_device``,
  ``destroy_stream`` of a subscribed stream, ``acl.prof.finalize`` of a running window: ``reclaiming``), and at
  exit (``report_leaks``). Objects the runtime makes for itself (a device's primary context and default streams,
  a video channel's stream) are not tracked.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterator
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
_RAW_DEPTH = 4  # frames a raw site keeps: the program's innermost four, above the openacl frames a caller skips
_FREED_HISTORY = 4096
_OUTLIVES_ACL = ("GE session",)  # not pyACL's: alive at acl.finalize is fine, at exit it leaked
# Freed memory is kept (not handed back) while its record is in the history, up to this many bytes in all, so a
# stale pointer finds its freed record instead of whatever the allocator put at that address since (ASan's
# quarantine): without it, a freed device buffer's address comes back as the next numpy array, and a read through
# the stale pointer is an overrun of a host object, or no finding at all.
_QUARANTINE_BYTES = 256 * 1024 * 1024
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
    kept: object = field(default=None)  # a freed region held in quarantine
    reported: bool = False  # freed under a queued task: that task's use is reported already
    serial: int = field(default_factory=lambda: next(_serials))  # creation order (``mark``)


_lock = atfork.lock()
_serials = itertools.count(1)
_live: dict[object, _Record] = {}  # key: ("mem", region) by identity, or (table kind, handle)
_freed: deque[_Record] = deque()  # newest last, at most _FREED_HISTORY; looked up only on error paths
_quarantined = 0  # bytes of the regions the records in _freed keep
_findings: dict[tuple, Finding] = {}  # by (kind, what's kind, sites): recorded once, counted
_let_go: deque[tuple[str, int]] = deque()  # keys of _live the program let go of (``forget``), not yet removed
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
        if _is_programs(file):
            frames.append((file, frame.f_lineno or 0, code.co_name))
        frame = frame.f_back
    return tuple(frames)


def _is_programs(file: str) -> bool:
    return not (file.startswith(_PACKAGE_DIR) or file.endswith(_RUNNER_FILES) or any(d in file for d in _RUNNER_DIRS))


RawSite = tuple[tuple[object, int], ...]  # (code, instruction offset) of the calling frames, innermost first


def raw_site(skip: int = 0) -> RawSite:
    """``site()`` for a hot path whose site is rarely reported (a callback's launch): the frames' code and offset
    only, unfiltered (no file name is looked at, no line computed, no frame kept alive); ``site_of`` makes it a
    site when it is needed. It starts above the caller and ``skip`` of the caller's callers, those that are
    openacl's own for certain (each frame walked costs about 130 ns: Python makes its frame object on the
    way)."""
    frames = []
    try:
        frame = sys._getframe(2 + skip)  # jumps there, making no frame object for the frames skipped
    except ValueError:  # a shallower stack than ``skip`` says: nothing of the program's
        return ()
    for _ in range(_RAW_DEPTH):
        if frame is None:
            break
        frames.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return tuple(frames)


def site_of(raw: RawSite) -> Site:
    frames: list[Frame] = []
    for code, offset in raw:
        if len(frames) < _SITE_DEPTH and _is_programs(code.co_filename):  # type: ignore[attr-defined]
            line = next((n for start, end, n in code.co_lines() if start <= offset < end), None)  # type: ignore
            frames.append((code.co_filename, line or 0, code.co_name))  # type: ignore[attr-defined]
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
    global _quarantined
    with _lock:
        # let go after the lock: the last reference to a freed (quarantined) region may run a finalizer
        dropped = (list(_live), list(_freed), list(_written))
        _live.clear()
        _freed.clear()
        _quarantined = 0
        _queued.clear()
        _host_clock.clear()
        _stream_clocks.clear()
        _event_clocks.clear()
        _awaiting.clear()
        _notify_set.clear()
        _blind.clear()
        _written.clear()
    del dropped


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
    record = _forget(("mem", region), keep=region)
    with _lock:
        _written.pop(region, None)
    addr, size = region.addr, region.size  # type: ignore[attr-defined]
    if record is not None:
        _freed_under_queued(record, addr, size)
    _forget_queued_in(addr, size)


def _forget(key: object, keep: object = None) -> _Record | None:
    """The record of ``key`` moves to the freed history (``keep``: the freed region, held in quarantine)."""
    global _quarantined
    here = site()
    dropped: list[object] = []  # let go after the lock: a region's last reference may run a finalizer
    with _lock:
        record = _live.pop(key, None)
        if record is None:
            return None
        record.freed_at = here
        if keep is not None and record.size <= _QUARANTINE_BYTES:
            record.kept, _quarantined = keep, _quarantined + record.size
        _freed.append(record)
        while len(_freed) > _FREED_HISTORY:
            dropped.append(_unkeep(_freed.popleft()))
        for old in _freed:  # oldest first
            if _quarantined <= _QUARANTINE_BYTES:
                break
            dropped.append(_unkeep(old))
    dropped.clear()
    if getattr(_reclaiming, "when", None):
        _reclaiming.records.append(record)
    return record


def _unkeep(record: _Record) -> object:
    """Out of quarantine (``_lock`` held): returns the region it kept, for the caller to let go of."""
    global _quarantined
    kept, record.kept = record.kept, None
    if kept is not None:
        _quarantined -= record.size
    return kept


def on_reclaimed(regions: list) -> None:
    """A reset freed these regions on the program's behalf: each one the program allocated leaked."""
    for region in regions:
        _forget(("mem", region), keep=region)


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


def on_bad_access(addr: int, size: int, what: str) -> bool:
    """An access to memory that is no longer live: a use after free if the program freed it (then True)."""
    record = _freed_record(lambda r: r.size > 0 and r.address <= addr < r.address + r.size)
    if record is None:
        return False
    here = site()
    if not here and record.reported:  # a task on an engine thread, reported at the free
        return True
    _record(
        Finding(
            "use-after-free",
            f"{what} in {record.label} that was freed",
            size,
            addr,
            (("access", here), ("freed", record.freed_at or ()), ("allocated", record.site)),
        )
    )
    return True


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


def on_underrun(region: object, addr: int, size: int, what: str) -> None:
    """An access that starts before the allocation it runs into (refused: it starts outside every allocation)."""
    with _lock:
        record = _live.get(("mem", region))
    if record is None:
        return
    _record(
        Finding(
            "overrun",
            f"{what} starts {record.address - addr} bytes before the beginning of a {record.size}-byte "
            f"{record.label} allocation",
            size,
            addr,
            (("access", site()), ("allocated", record.site)),
        )
    )


# ----- handles -----


def on_create(kind: str, handle: int, size: int = 0) -> None:
    """A handle (or other thing the program must end) made; ``size`` for one that spans addresses from ``handle``
    (a reserved range, a mapping): its leak counts bytes, and an access after its end is a use after free."""
    with _lock:
        _live[(kind, handle)] = _Record(kind, handle, size, site())


def disown(kind: str, handle: int) -> None:
    """A handle the runtime made for itself (a desc a dataset owns): not the program's to destroy."""
    with _lock:
        _live.pop((kind, handle), None)


def forget(kind: str, handle: int) -> None:
    """The program let go of something it need not end itself (a GE session it no longer references). Takes no
    lock and leaves ``_live`` alone: a garbage collector's finalizer calls it, perhaps while this thread holds
    our lock or walks ``_live``; the leak report drains the queue first (keys are never reused)."""
    _let_go.append((kind, handle))  # deque.append is atomic


def on_destroy(kind: str, handle: int) -> None:
    _forget((kind, handle))
    if kind == "stream":  # destroying a stream waits for its tasks
        _forget_stream(handle)


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


# ----- races: happens-before between the host and the streams -----
#
# Order, not timing, decides: each stream and the host keep a vector clock (stream handle -> how many of that
# stream's range-declaring tasks they are ordered after). A task queued on a stream takes the next number of the
# stream's own component, after the host's clock is merged into the stream's (what the host did before the
# enqueue comes before the task). An event record carries its stream's clock, which ``stream_wait_event`` merges
# into the waiting stream's. The host merges a stream's clock when it synchronizes it (or the device, or destroys
# it, or a query finds it done), an event's when it synchronizes it or a query finds it done, and the clock a
# callback was queued with when the callback runs. All host threads are one host (a false negative at worst).
#
# Races: a host access against a queued task the host's clock does not cover (``on_host_access``), and a task
# against a task of another stream that the new task's stream clock does not cover, one of them writing
# (``on_task``). A read of a task's output that happened to come after the task ran is still a race.
#
# Invariant: ``_queued[h]`` holds, in queue order, the tasks of stream ``h`` the host's clock does not cover yet
# (at most ``_QUEUED_CAP``: the oldest are forgotten first), and no empty list; a task every clock will cover
# from now on (the host's covers it, and every enqueue merges the host's) cannot race again, so it is forgotten.

Clock = dict[int, int]  # stream handle -> the number of its newest task ordered before

_QUEUED_CAP = 1024  # per stream: the unordered tasks remembered (bounds memory and each enqueue's scan)


@dataclass
class _Queued:
    """A task enqueued on a stream that the host has not synchronized with yet: what it reads and writes."""

    what: str
    queue: str  # "stream 3", "vdec channel 0": what orders it, for the report
    reads: tuple[tuple[int, int], ...]
    writes: tuple[tuple[int, int], ...]
    site: Site
    epoch: int = 0  # its number on its stream (the stream's own clock component once it is queued)
    blind: bool = False  # queued behind a notify wait no record matched yet: its order with others is unknown


_queued: dict[int, list[_Queued]] = {}  # by stream handle: the tasks the host is not ordered after yet
_host_clock: Clock = {}
_stream_clocks: dict[int, Clock] = {}  # by stream handle: the clock of the stream's newest enqueue
_event_clocks: weakref.WeakKeyDictionary[object, Clock] = weakref.WeakKeyDictionary()  # of the newest record


def _join(into: Clock, other: Clock) -> None:
    for handle, epoch in other.items():
        if into.get(handle, 0) < epoch:
            into[handle] = epoch


def _enqueue_clock_locked(handle: int) -> Clock:
    """The clock of stream ``handle`` at an enqueue: whatever the host is ordered after comes before it."""
    clock = _stream_clocks.get(handle)
    if clock is None:
        clock = _stream_clocks[handle] = {}
    _join(clock, _host_clock)
    return clock


def _unordered(entries: list[_Queued], seen: int) -> list[_Queued]:
    """The tasks of ``entries`` (in queue order) numbered above ``seen``: a suffix, found from the end."""
    i = len(entries)
    while i and entries[i - 1].epoch > seen:
        i -= 1
    return entries[i:]


def _unordered_elsewhere(handle: int, clock: Clock) -> list[_Queued]:
    """The tasks of the other streams that ``clock`` (stream ``handle``'s) does not cover (``_lock`` held)."""
    found: list[_Queued] = []
    for other, entries in _queued.items():
        if other != handle:
            found.extend(q for q in _unordered(entries, clock.get(other, 0)) if not q.blind)
    return found


def on_task(stream: object, what: str, reads: list[tuple[int, int]], writes: list[tuple[int, int]]) -> None:
    """A task that reads and writes these ranges is queued on ``stream``: a race with any task of another stream
    that touches the same bytes, one of them writing, with nothing ordering the two."""
    _queue_task(stream.handle, f"stream {getattr(stream, 'id', 0)}", what, reads, writes)  # type: ignore[attr-defined]


def _queue_task(
    handle: int, queue: str, what: str, reads: list[tuple[int, int]], writes: list[tuple[int, int]]
) -> _Queued:
    entry = _Queued(what, queue, tuple(reads), tuple(writes), site())
    with _lock:
        clock = _enqueue_clock_locked(handle)
        entry.epoch = clock[handle] = clock.get(handle, 0) + 1
        entry.blind = handle in _blind
        others = [] if entry.blind else _unordered_elsewhere(handle, clock)
        entries = _queued.setdefault(handle, [])
        entries.append(entry)
        if len(entries) > _QUEUED_CAP:
            del entries[0]
    for q in others:
        _check_pair(entry, q)
    return entry


def _check_pair(new: _Queued, old: _Queued) -> None:
    """Two unordered tasks of two streams: a race if they touch the same bytes, one of them writing (once)."""
    for addr, size in new.writes:
        if size and _overlap(old.writes, addr, size):
            _stream_race(new, "writes", addr, size, old, "writes")
            return
        if size and _overlap(old.reads, addr, size):
            _stream_race(new, "writes", addr, size, old, "reads")
            return
    for addr, size in new.reads:
        if size and _overlap(old.writes, addr, size):
            _stream_race(new, "reads", addr, size, old, "writes")
            return


def _stream_race(new: _Queued, verb: str, addr: int, size: int, old: _Queued, old_verb: str) -> None:
    _record(
        Finding(
            "race",
            f"{new.what} queued on {new.queue} {verb} memory that {old.what} queued on {old.queue} {old_verb}, "
            "with nothing ordering them (no event recorded after one and waited for before the other, no "
            "synchronize in between)",
            size,
            addr,
            (("access", new.site), ("queued", old.site)),
        )
    )


def _host_joins(clock: Clock) -> None:
    """The host is ordered after everything ``clock`` covers: the tasks it now covers are forgotten."""
    if not _queued:  # nothing unordered (a dict's truth is atomic): a later task numbers above any of ``clock``
        return
    with _lock:
        _join(_host_clock, clock)
        for handle in [h for h in _queued if h in clock]:
            seen = _host_clock[handle]
            kept = [q for q in _queued[handle] if q.epoch > seen]
            if kept:
                _queued[handle] = kept
            else:
                del _queued[handle]


def _ordered(handle: int) -> None:
    """The host waited for everything queued on stream ``handle``."""
    with _lock:
        clock = dict(_stream_clocks.get(handle, ()))
    _host_joins(clock)


def on_host_ordered(stream: object) -> None:
    """The host waited for everything queued on ``stream`` (synchronize, a done query, destroy)."""
    _ordered(stream.handle)  # type: ignore[attr-defined]


def _forget_stream(handle: int) -> None:
    """A destroyed stream: the host is ordered after all of it, so no clock needs its component any more."""
    _ordered(handle)
    with _lock:
        _stream_clocks.pop(handle, None)
        _host_clock.pop(handle, None)
        for clock in itertools.chain(_stream_clocks.values(), _event_clocks.values()):
            clock.pop(handle, None)


def on_record(event: object, stream: object) -> None:
    """``record_event``: the event carries what its stream is ordered after, this record's tasks included."""
    with _lock:
        _event_clocks[event] = dict(_enqueue_clock_locked(stream.handle))  # type: ignore[attr-defined]


def on_wait(event: object, stream: object) -> None:
    """``stream_wait_event``: what ``stream`` runs from now on comes after the event's newest record."""
    with _lock:
        clock = _event_clocks.get(event)
        if clock:
            _join(_enqueue_clock_locked(stream.handle), clock)  # type: ignore[attr-defined]


# A notify's wait lets its stream go on at whichever record passes first, even one queued after the wait. A wait
# queued with no record pending leaves its stream *awaiting* until a record of that notify is queued, whose clock
# it then takes: the tasks queued on it meanwhile may run after tasks queued later elsewhere, so they are never
# checked against other streams' tasks, either way (a false negative at worst).
#
# Invariant: ``_awaiting[notify]`` holds the handles of the streams whose waits no queued record has matched yet,
# oldest first, and ``_blind[h]`` counts the entries of stream ``h`` among them; a record queued while none wait
# leaves its clock in ``_notify_set[notify]`` for the next wait (one record lets one wait through).

_awaiting: weakref.WeakKeyDictionary[object, list[int]] = weakref.WeakKeyDictionary()
_notify_set: weakref.WeakKeyDictionary[object, Clock] = weakref.WeakKeyDictionary()
_blind: dict[int, int] = {}


def on_notify_record(notify: object, stream: object) -> None:
    """``record_notify``: the first wait not matched yet (else the next one) comes after what ``stream`` queued."""
    with _lock:
        clock = dict(_enqueue_clock_locked(stream.handle))  # type: ignore[attr-defined]
        waiting = _awaiting.get(notify)
        if not waiting:
            _notify_set[notify] = clock
            return
        handle = waiting.pop(0)
        _join(_enqueue_clock_locked(handle), clock)
        _blind[handle] -= 1
        if not _blind[handle]:
            del _blind[handle]


def on_notify_wait(notify: object, stream: object) -> None:
    """``wait_and_reset_notify``: ``stream`` goes on after a record of ``notify``, queued already or still to come."""
    with _lock:
        clock = _notify_set.pop(notify, None)
        if clock is not None:
            _join(_enqueue_clock_locked(stream.handle), clock)  # type: ignore[attr-defined]
            return
        _awaiting.setdefault(notify, []).append(stream.handle)  # type: ignore[attr-defined]
        _blind[stream.handle] = _blind.get(stream.handle, 0) + 1  # type: ignore[attr-defined]


def on_event_reached(event: object) -> None:
    """The host saw ``event`` complete: it is ordered after what its stream had queued before the record."""
    with _lock:
        clock = _event_clocks.get(event)
    if clock:
        _host_joins(clock)


_holding = threading.local()  # .streams: {stream handle: its epoch} of the BLOCK callbacks this thread runs


def ordered_callback(stream: object, fn, blocking: bool, own_frames: int = 2) -> tuple[Callable, RawSite]:
    """``fn`` as a stream callback, and its launch site: when it runs, the host is ordered after what was queued
    before it (``fn`` itself when nothing was unordered). A BLOCK callback also holds its stream: what was queued
    after it cannot run before it returns, so the callback's own accesses do not race those tasks. The launch
    site is kept raw (its task carries it, for ``on_callbacks_dropped``), from above the ``own_frames`` frames
    that called this one and are openacl's for certain."""
    handle = stream.handle  # type: ignore[attr-defined]
    ordered = _ordered_after(handle, fn)
    if blocking:
        epoch = _stream_clocks.get(handle, {}).get(handle, 0)  # tasks queued after the callback number above it
        inner = ordered

        def ordered(*args: object) -> object:
            held = getattr(_holding, "streams", None)
            if held is None:
                held = _holding.streams = {}
            outer = held.get(handle)  # a nested callback of the same stream (process_report called in a callback)
            held[handle] = epoch
            try:
                return inner(*args)
            finally:
                if outer is None:
                    del held[handle]
                else:
                    held[handle] = outer

    return ordered, raw_site(skip=own_frames)


def _ordered_after(handle: int, fn):
    if not _queued:  # nothing unordered now: whatever is queued later is queued after the callback
        return fn
    with _lock:
        clock = dict(_enqueue_clock_locked(handle))

    def callback(*args: object) -> object:
        _host_joins(clock)
        return fn(*args)

    return callback


def on_callbacks_dropped(stream_id: int, sites: list[RawSite], why: str) -> None:
    """Callbacks launched on a stream that no thread will run any more: CANN leaves them undefined (the stream
    reaches a callback no thread serves); openacl drops them with a warning. Misuse, at the call that found them
    (a synchronize, an unsubscribe) and the first one's launch (``sites``: the launch sites of those launched
    under check)."""
    launched = [site_of(site) for site in sites]
    if launched:
        _record(
            Finding(
                "misuse",
                f"{len(launched)} callback(s) launched on stream {stream_id} never ran: {why}",
                0,
                0,
                (("access", site()), ("queued", launched[0])),
            )
        )


# ----- channels: a VDEC channel writes each frame's picture in send order, before that frame's callback -----
#
# A channel is ordered like a stream, under its desc's handle (handles are unique across kinds): each frame is a
# task of the channel, and its callback, when it runs, orders the host after it (as a stream callback does).


def on_channel_task(handle: int, queue: str, what: str, writes: list[tuple[int, int]], callback):
    """A frame sent to channel ``handle`` that writes ``writes`` before ``callback`` runs; returns the callback to
    call instead (the host is ordered after the frame from inside it) and the frame's token, for
    ``on_channel_task_refused``."""
    entry = _queue_task(handle, queue, what, [], writes)
    return _ordered_after(handle, callback), entry


def on_channel_task_refused(handle: int, token: object) -> None:
    """The frame ``on_channel_task`` gave ``token`` for was refused after all (its channel was being destroyed):
    it will never write, and is no longer queued (a destroy that ended before it was registered left it)."""
    with _lock:
        kept = [q for q in _queued.get(handle, ()) if q is not token]
        if kept:
            _queued[handle] = kept
        else:
            _queued.pop(handle, None)


def on_channel_closed(handle: int) -> None:
    """Every frame of the channel was delivered (or dropped): nothing it queued can race any more."""
    _forget_stream(handle)


def _overlap(ranges: tuple[tuple[int, int], ...], addr: int, size: int) -> bool:
    return any(a < addr + size and addr < a + n for a, n in ranges)


def on_host_access(what: str, reads: list[tuple[int, int]] = (), writes: list[tuple[int, int]] = ()) -> bool:
    """A host access by the program: a race if a queued task will still write what it reads, or will still read
    or write what it writes. Returns whether it raced (then its reads are not also reported as uninitialized)."""
    held = getattr(_holding, "streams", None) or {}
    with _lock:
        queued = [  # less what a BLOCK callback this thread runs holds back on its stream
            q for handle, entries in _queued.items() for q in entries if handle not in held or q.epoch <= held[handle]
        ]
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
            f"{what} {verb} memory that {q.what} queued on {q.queue} {task_verb}, before anything "
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
                f"destroy_stream of {queued[0].queue} with {len(queued)} task(s) queued that the host never "
                f"waited for ({queued[0].what} first): synchronize_stream before destroying it",
                0,
                0,
                (("access", site()), ("queued", queued[0].site)),
            )
        )


def on_foreign_stream(handle: int, stream_id: int, device_id: int, current_device_id: int) -> None:
    """A stream of one device used while a context of another is current: CANN checks a stream against the
    current context (107003 for the callback calls, which openacl returns too); openacl runs the rest on the
    stream's own device, a device need not. Misuse, at the call and the stream's creation."""
    with _lock:
        record = _live.get(("stream", handle))
    _record(
        Finding(
            "misuse",
            f"stream {stream_id} of device {device_id} used while a context of device {current_device_id} is "
            "current: set_context to the stream's context first",
            0,
            0,
            (("access", site()), ("created", record.site if record is not None else ())),
        )
    )


def _freed_under_queued(record: _Record, addr: int, size: int) -> None:
    """Memory freed while a task the host is not ordered after still reads or writes it: the task uses freed
    memory (whether it ran already is timing; order decides). Reported once, at the free, naming the task; the
    task's own failure on the engine thread, if it comes, adds nothing (``on_bad_access``)."""
    with _lock:
        users = [q for entries in _queued.values() for q in entries if _overlap(q.reads + q.writes, addr, size)]
    if users:
        record.reported = True
        q = users[0]  # the first queued on its stream
        _record(
            Finding(
                "use-after-free",
                f"{q.what} queued on {q.queue} uses {record.label} freed before anything ordered the host after it",
                size,
                addr,
                (("access", q.site), ("freed", record.freed_at or ()), ("allocated", record.site)),
            )
        )


def _forget_queued_in(addr: int, size: int) -> None:
    """Memory freed: the tasks' ranges in it mean nothing any more (the address may be handed out again)."""
    with _lock:
        for handle, entries in list(_queued.items()):
            kept = [q for q in entries if not (_overlap(q.reads, addr, size) or _overlap(q.writes, addr, size))]
            if kept:
                _queued[handle] = kept
            else:
                del _queued[handle]


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


def report_leaks(when: str, since: int = 0, *, process_end: bool = True) -> None:
    """Everything the program made (after ``since``) and still holds is leaked (``finalize``, exit). At
    ``acl.finalize`` (``process_end`` False) what outlives pyACL (GE sessions: GEFinalize ends them) is not."""
    with _lock:
        while _let_go:
            _live.pop(_let_go.popleft(), None)
        leaked = {
            key: record
            for key, record in _live.items()
            if record.serial > since and (process_end or record.label not in _OUTLIVES_ACL)
        }
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
