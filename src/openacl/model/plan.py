"""An execution plan: what a repeated, identical ``acl.mdl.execute`` needs, worked out once.

A program that runs a model in a loop calls ``execute`` with the same two datasets again and again (or with two
pairs in turn, double buffering). The second such call of a pair leaves a plan: an onnxruntime IO binding of the input
buffers' and output buffers' addresses, so a later call runs the model reading its inputs and writing its
outputs in place, with no view made, no output copied and no check repeated. A later call takes the plan
(``op.plan.PlanCache.take``) while nothing it was worked out from has changed, which is seen without re-checking
anything, as an operator's plan sees it (``op.plan``):
- the two datasets (their buffers, their descs), each data buffer in them, and each output desc the output
  dataset holds, by their version stamps (``runtime.versions``);
- the memory table's generation: no free, unmapping or read-only registration since (``memory.AddressSpace``).
Anything else (a buffer re-pointed, added or destroyed, a desc set, memory freed) fails the match, and the call
goes the whole way (``model.execute``) with every check and its error code.

Planned: a model with fixed shapes and nothing between its buffers and onnxruntime (no gear input, no AIPP, no
bfloat16 value, no empty tensor), whose outputs have names of their own (a binding is by name: an output that
is an input, or two outputs of one value, would leave a buffer unwritten) and produce the shapes they declare,
and whose output buffers overlap neither an input nor each other (onnxruntime writes an output while it may
still read an input). A step that is dumped or profiled, and every step under
``openacl check``, goes the whole way.

Decision: a planned run that onnxruntime fails part-way may leave its outputs partly written, where the whole
way copies them only after a run that succeeded. The call returns the same error either way, and CANN promises
nothing of the output buffers of a failed execution.

Invariant: a plan never keeps memory alive. It holds its regions by weak reference; a call takes strong ones
(the pins ``take`` returns) and holds them until the run ends. A binding holds addresses only, and runs only
while the generation is the one its plan checked them at.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from openacl import atfork, onnxrt
from openacl.errors import AclCode, ExecutionFailed
from openacl.model.dataset import Dataset, datasets
from openacl.op import tensor_desc as _tensor_desc
from openacl.op.plan import PlanCache, referents_getter
from openacl.runtime import memory, versions
from openacl.runtime.buffers import data_buffers

PLANS_PER_MODEL = 8  # dataset pairs whose plans a model keeps (double buffering takes two)


@dataclass(frozen=True)
class Binding:
    """One input or output of a plan: its graph name, dtype, shape and the address onnxruntime reads or writes."""

    name: str
    dtype: np.dtype
    shape: list[int]
    addr: int


@dataclass(eq=False)
class ExecPlan:
    """One dataset pair's worked-out run: the fields ``PlanCache.take`` reads (see ``op.plan.Stamped``), and
    the bindings, one per caller at a time: taken out of the pool for a run and put back after it
    (``list.pop`` and ``append`` are atomic under the GIL)."""

    session: object
    label: str  # the model, as errors name it: "model 1 (resnet50)"
    inputs: tuple[Binding, ...]
    outputs: tuple[Binding, ...]
    objects: tuple[object, ...]
    versions: list[int]
    generation: int
    refs: tuple[weakref.ref, ...]
    epoch: int = -1
    referents: object = field(init=False)
    _pool: list = field(init=False, default_factory=list)
    _entry: object = field(init=False)

    def __post_init__(self) -> None:
        self.referents = referents_getter(len(self.refs))
        self._entry = onnxrt.bound_entry(self.session)

    def _bind(self):
        binding = self.session.io_binding()  # type: ignore[attr-defined]
        for item in self.inputs:
            binding.bind_input(item.name, "cpu", 0, item.dtype, item.shape, item.addr)
        for item in self.outputs:
            binding.bind_output(item.name, "cpu", 0, item.dtype, item.shape, item.addr)
        return binding

    def feeds(self, pins: tuple[memory.Region, ...]) -> list[np.ndarray]:
        """The bound inputs as views, for a dumped step's observed run: in the regions ``take`` pinned (the inputs'
        come first), as ``execute.prepare`` made them when the plan was made, and nothing checked again."""
        pinned = pins[: len(self.inputs)]
        return [
            memory.view_pinned(pin, item.addr, tuple(item.shape), item.dtype)
            for item, pin in zip(self.inputs, pinned, strict=True)
        ]

    def run(self) -> None:
        """Run once, reading and writing the bound addresses; the caller holds the pins ``take`` gave it."""
        try:
            binding = self._pool.pop()
        except IndexError:  # the first run, or every binding is in use by another thread's run
            binding = self._bind()
        try:
            if self._entry is not None:
                self._entry(binding._iobinding, None)  # type: ignore[operator]
            else:
                self.session.run_with_iobinding(binding)  # type: ignore[attr-defined]
        except Exception as exc:  # onnxruntime refused the data: the whole way's code and line (``Model.run``)
            raise ExecutionFailed(AclCode.ACL_ERROR_FAILURE, f"{self.label}: execution failed: {exc}") from None
        self._pool.append(binding)  # not pooled again after a failure


def plannable(model) -> bool:
    """Whether the model's executions can run on a plan: see the module's docstring."""
    descs = (*model.inputs, *model.outputs)
    outputs = [desc.name for desc in model.outputs]
    return (
        model.session is not None
        and model.gears is None
        and model.aipp is None
        and len(model.acl_inputs) == len(model.inputs)
        and not onnxrt.needs_ort_values(model.session)
        and all(desc.is_static and desc.size > 0 for desc in descs)
        and len(set(outputs)) == len(outputs)
        and not set(outputs) & {desc.name for desc in model.inputs}
    )


class ModelPlans:
    """A model's plans by dataset pair, and the pairs its recent calls ran the whole way: a plan is made the
    second time a pair goes the whole way with the memory table unchanged since the first, so a program that
    makes new datasets for every call makes none, nor one whose memory changes between calls (a free: a plan
    would be stale at the next call; a dump's loans move nothing, see ``memory.AddressSpace``). A pair found
    unplannable (its outputs overlap) is not worked out again while its stamps stay as they were."""

    def __init__(self, model) -> None:
        self.enabled = plannable(model)
        self.cache: PlanCache[ExecPlan] = PlanCache(PLANS_PER_MODEL)
        self.take = self.cache.take
        self.put = self.cache.put
        self.clear = self.cache.clear
        # Invariant: each holds at most PLANS_PER_MODEL pairs, oldest first, changed under _lock (which guards
        # nothing else and is never held while other code runs).
        self._lock = atfork.lock()
        self._seen: dict[Hashable, int] = {}  # pair -> the generation its last call the whole way ended at
        self._refused: dict[Hashable, list[int]] = {}  # pair -> the stamps it was found unplannable at

    def ran_again(self, key: Hashable) -> bool:
        """Whether a recent call the whole way ran ``key`` too (which this call now is), and the memory table is
        as that call left it."""
        if not self.enabled:
            return False
        generation = memory.space.generation
        with self._lock:
            again = self._seen.pop(key, None) == generation
            _remember(self._seen, key, generation)
        return again

    def refused(self, key: Hashable, seen: Stamps) -> bool:
        """Whether ``key`` was found unplannable with these very stamps."""
        return self._refused.get(key) == seen.versions

    def refuse(self, key: Hashable, seen: Stamps) -> None:
        with self._lock:
            _remember(self._refused, key, seen.versions)


def _remember(table: dict, key: Hashable, value: object) -> None:
    """``table[key] = value`` as its newest entry, the oldest dropped past PLANS_PER_MODEL (caller holds the lock)."""
    table.pop(key, None)
    table[key] = value
    if len(table) > PLANS_PER_MODEL:
        del table[next(iter(table))]


class Stamps(NamedTuple):
    """What a plan's objects were when it was worked out, read before anything else of them."""

    epoch: int
    generation: int
    objects: tuple[object, ...]
    versions: list[int]


def stamps(input_dataset: int, output_dataset: int, outputs: int) -> Stamps:
    """The epoch and generation, then the objects a plan of this pair depends on, each with its stamp read before
    its contents: the datasets before their lists, each buffer and desc before ``prepare`` checks it."""
    epoch = versions.epoch  # first: see versions' invariant
    generation = memory.space.generation
    pair: tuple[Dataset, Dataset] = (datasets.get(input_dataset), datasets.get(output_dataset))
    found = [pair[0].version, pair[1].version]
    objects: list[object] = [data_buffers.get(handle) for dataset in pair for handle in dataset.buffers]
    for index in range(outputs):
        desc = pair[1].tensor_descs.get(index)
        if desc is not None and desc in _tensor_desc.tensor_descs:
            objects.append(_tensor_desc.get(desc))
    found += [obj.version for obj in objects]  # type: ignore[attr-defined]
    return Stamps(epoch, generation, (*pair, *objects), found)


def _overlap(ranges: list[tuple[int, int]]) -> bool:
    """Whether any two of these ``(address, bytes)`` ranges share a byte."""
    ordered = sorted((addr, addr + size) for addr, size in ranges if size)
    return any(start < end for (_, end), (start, _) in itertools.pairwise(ordered))


def make(model, seen: Stamps, feeds: list[np.ndarray], targets: list) -> ExecPlan | None:
    """The plan of a pair from ``seen`` and what ``execute.prepare`` made of it after: the input views and the
    output targets, checked. None where an output overlaps an input or another output, or the last run gave an
    output of another shape than its desc declares (a binding of the declared shape would fail every run), or a
    buffer lies in a loan (a dump chunk's memory)."""
    if [tuple(shape) for shape in model.last_output_shapes] != [desc.shape for desc in model.outputs]:
        return None
    inputs = tuple(
        Binding(desc.name, desc.dtype, list(desc.shape), memory.address_of(feed))
        for desc, feed in zip(model.inputs, feeds, strict=True)
    )
    outputs = tuple(
        Binding(desc.name, desc.dtype, list(desc.shape), target.addr)
        for desc, target in zip(model.outputs, targets, strict=True)
    )
    written = [(item.addr, desc.size) for item, desc in zip(outputs, model.outputs, strict=True)]
    read = [(item.addr, feed.nbytes) for item, feed in zip(inputs, feeds, strict=True)]
    if _overlap(written) or any(_overlap([w, r]) for w in written for r in read):
        return None
    regions = [memory.region_for(item.addr, feed.nbytes, "input") for item, feed in zip(inputs, feeds, strict=True)]
    regions += [target.region for target in targets]
    if any(region.lent for region in regions):
        return None  # a loan's end does not move the generation (``memory.AddressSpace``)
    return ExecPlan(
        model.session,
        f"model {model.id} ({model.name})",
        inputs,
        outputs,
        seen.objects,
        seen.versions,
        seen.generation,
        tuple(weakref.ref(region) for region in regions),
        seen.epoch,
    )
