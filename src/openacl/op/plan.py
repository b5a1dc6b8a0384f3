"""A call plan: everything a repeated, identical ``execute_v2`` needs, worked out once by its first call.

The first call of a signature checks everything (``execute``) and leaves a plan: the compiled operator, the
addresses onnxruntime reads and writes, what the task reads and writes, the bytes it moves. A later call with the
same handles (op type, attr, descs, buffers; handles are never reused) takes the plan while nothing it was worked
out from has changed, which is seen without re-checking anything:
- every tensor desc, op attr and data buffer carries a version stamp, renewed by each change and by its
  destruction (``runtime.versions``); the plan keeps the stamps it saw before it read them;
- the memory table's generation (``memory.space.generation``) moves on with every free, unmapping, forgotten
  registration and read-only registration (see ``memory.AddressSpace``); the plan keeps the generation it found
  its memory at.
Equal stamps and generation mean that checking again would find exactly what the plan holds. While no stamp of any
object has been set since the plan's stamps were last found equal (``versions.epoch`` as it was then), they are
equal still, and the plan skips reading them. Anything else (a desc
reshaped or given another dtype or format, an attribute set, a buffer re-pointed or destroyed, memory freed, even
if allocated again at the same address) fails the match, and the call is worked out again with every check and its
error code. The stream is not part of a plan: each call resolves its own, so a destroyed stream is refused as ever.

Invariant: a plan never keeps memory alive. It holds its regions by weak reference; a call takes strong ones
(``pins``) for its task, which hold the bytes until the task ran. A region that is gone means a stale plan.
"""

from __future__ import annotations

import functools
import operator
import weakref
from collections.abc import Callable, Hashable
from dataclasses import InitVar, dataclass, field
from typing import Generic, Protocol, TypeVar

from openacl import atfork
from openacl.op.compiled import CompiledOp
from openacl.runtime import memory, versions

CAPACITY = 256  # plans kept; past it the oldest made goes (a program making new handles per call churns here)

_version = operator.attrgetter("version")


@functools.cache
def referents_getter(count: int) -> Callable[[tuple[weakref.ref, ...]], tuple]:
    """``lambda refs: (refs[0](), ..., refs[count - 1]())``, made once per count: a plan's pins with no map,
    generator or ``operator.call`` per referent (half the cost, on every repeated call)."""
    return eval(f"lambda refs: ({''.join(f'refs[{i}](), ' for i in range(count))})")  # its text: numbers only


@dataclass(frozen=True, eq=False)
class Output:
    """One output: its buffer's address and size, the bytes the operator writes, and whether onnxruntime writes
    them in place (else it allocates and they are copied after the run: in place over an input, or a shape known
    only after the run)."""

    addr: int
    size: int
    need: int
    direct: bool


@dataclass(eq=False)
class Plan:
    """One call's worked-out state. ``reads`` and ``writes`` are the one place where the task's ranges are known:
    ``(address, bytes)`` of every input it reads and every output it writes."""

    compiled: CompiledOp
    inputs: tuple[int, ...]  # per feed: the address onnxruntime reads
    outputs: tuple[Output, ...]
    objects: tuple[object, ...]  # the descs, attr and buffers the call named, each once ...
    versions: list[int]  # ... and their stamps, read before their contents (the first read of each)
    generation: int  # memory.space.generation before the memory was checked
    refs: tuple[weakref.ref, ...]  # per feed, then per output: the region its bytes lie in
    epoch: int = -1  # versions.epoch, read before the stamps were last found equal (-1: never)
    name: str = field(init=False)
    direct: tuple[int | None, ...] = field(init=False)  # per output: where onnxruntime writes, or None
    buffers: tuple[tuple[int, ...], tuple[int | None, ...]] = field(init=False)  # (inputs, direct): run_into's key
    reads: tuple[tuple[int, int], ...] = field(init=False)
    writes: tuple[tuple[int, int], ...] = field(init=False)
    moved: int = field(init=False)  # bytes in and out: what decides whether it may run on the calling thread ...
    inline_limit: InitVar[int] = 0  # ... the most it may move to do so ...
    small: bool = field(init=False)  # ... and whether it does
    copies: bool = field(init=False)  # whether an output is copied after the run (not written in place)
    referents: Callable[[tuple[weakref.ref, ...]], tuple] = field(init=False)  # refs' referents, in one call

    def __post_init__(self, inline_limit: int) -> None:
        self.name = f"op:{self.compiled.op_type}"
        self.direct = tuple(out.addr if out.direct else None for out in self.outputs)
        self.buffers = (self.inputs, self.direct)
        self.reads = tuple((addr, feed.nbytes) for addr, feed in zip(self.inputs, self.compiled.feeds, strict=True))
        self.writes = tuple((out.addr, out.need) for out in self.outputs)
        self.moved = self.compiled.input_bytes + sum(out.size for out in self.outputs)
        self.small = self.moved <= inline_limit
        self.copies = None in self.direct
        self.referents = referents_getter(len(self.refs))


class Stamped(Protocol):
    """What ``PlanCache.take`` reads of a plan: an operator's ``Plan``, a model's (``model.plan.ExecPlan``)."""

    objects: tuple[object, ...]  # the host objects the plan was worked out from ...
    versions: list[int]  # ... and their stamps, read before their contents
    generation: int  # memory.space.generation before the memory was checked
    refs: tuple[weakref.ref, ...]  # the regions its memory lies in
    epoch: int  # versions.epoch, read before the stamps were last found equal (-1: never)
    referents: Callable[[tuple[weakref.ref, ...]], tuple]  # refs' referents, in one call (``referents_getter``)


P = TypeVar("P", bound=Stamped)


class PlanCache(Generic[P]):
    """Plans by the handles of the call that made them. Reads take no lock (one dict lookup, atomic under the
    GIL); inserting takes it, and drops the oldest plan past ``capacity``."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._lock = atfork.lock()
        # Invariant: _plans is only ever changed in place (never rebound), so ``find`` stays its lookup.
        self._plans: dict[Hashable, P] = {}
        #: The plan made for ``key``, or None, as it is: no stamp, generation or region looked at (``take`` does).
        self.find: Callable[[Hashable], P | None] = self._plans.get

    def take(self, key: Hashable) -> tuple[P, tuple[memory.Region, ...]] | None:
        """The plan for ``key`` with its pins for one call (strong references to its regions, which hold the
        bytes until the call's task ran), if nothing it was worked out from has changed since: the memory table's
        generation and every stamp are as the plan saw them (``versions``), and no region of it is gone."""
        epoch = versions.epoch  # first: see versions' invariant
        plan = self.find(key)
        if plan is None or memory.space.generation != plan.generation:
            return None
        if epoch != plan.epoch:
            if list(map(_version, plan.objects)) != plan.versions:
                return None
            plan.epoch = epoch  # two threads may race here: either value was read before an equal look
        pins = plan.referents(plan.refs)
        return None if None in pins else (plan, pins)

    def put(self, key: Hashable, plan: P) -> None:
        dropped = []  # let go after the lock: the last reference to a compiled operator may go with a plan
        with self._lock:
            dropped.append(self._plans.pop(key, None))  # re-inserted last: a plan just made is the newest
            self._plans[key] = plan
            while len(self._plans) > self.capacity:
                dropped.append(self._plans.pop(next(iter(self._plans))))
        del dropped

    def clear(self) -> None:
        with self._lock:
            dropped = list(self._plans.values())  # let go after the lock, as in put
            self._plans.clear()
        del dropped

    def __len__(self) -> int:
        return len(self._plans)


plans: PlanCache[Plan] = PlanCache()
