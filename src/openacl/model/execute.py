"""Model execution: datasets in device memory → onnxruntime → datasets, synchronously or as a stream task.

Everything that can be checked is checked before anything runs: dataset sizes against the model's
description, every buffer's memory against the known allocations, output buffers writable. So a bad
dataset is an error code from ``execute``/``execute_async`` itself, never a half-run model.

A gear model (``openacl.model.dynamic``) runs on the gear its gear input buffer holds when ``execute`` or
``execute_async`` is called: each input is the leading bytes of its buffer (sized for the largest gear), and
each output is written for that gear.

Inputs are read when the model runs (for ``execute_async``, after the memcpys queued before it), through
views of the device memory, without copies; outputs are copied into the output buffers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from openacl.dtypes import acl_from_numpy
from openacl.dump import session as dump_session
from openacl.errors import AclCode, AclError
from openacl.model import aipp, dynamic, profiled
from openacl.model import dataset as _dataset
from openacl.model import plan as _plan
from openacl.model.dataset import datasets
from openacl.model.model import Model, TensorDesc
from openacl.runtime import checker, memory
from openacl.runtime import context as _context
from openacl.runtime.buffers import DataBuffer
from openacl.runtime.prof import session as prof_session
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import work_task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def _input_shape(
    desc: TensorDesc, buffer: DataBuffer, index: int, given: tuple[int, ...] | None = None
) -> tuple[int, ...]:
    """The static shape; for a dynamic one, the dims of the dataset's tensor desc (``given``) if it has one,
    else one dynamic dimension solved from the buffer's size."""
    if not desc.is_static and given is not None:
        return _given_shape(desc, buffer, index, given)
    if desc.is_static:
        if buffer.size < desc.size:
            raise AclError(
                _INVALID, f"input {index} ({desc.name}) needs {desc.size} bytes, its buffer has {buffer.size}"
            )
        return desc.shape
    unknown = [i for i, dim in enumerate(desc.shape) if dim < 0]
    known = math.prod(dim for dim in desc.shape if dim >= 0) * desc.dtype.itemsize
    if len(unknown) != 1 or known == 0 or buffer.size % known:
        raise AclError(
            _INVALID,
            f"input {index} ({desc.name}) has dynamic shape {desc.shape} that a {buffer.size}-byte buffer cannot fix",
        )
    shape = list(desc.shape)
    shape[unknown[0]] = buffer.size // known
    return tuple(shape)


def _given_shape(desc: TensorDesc, buffer: DataBuffer, index: int, given: tuple[int, ...]) -> tuple[int, ...]:
    """A dynamic input's dims from ``set_dataset_tensor_desc``: the model's rank, its static dims, and no more
    bytes than the buffer holds."""
    fits = len(given) == len(desc.shape) and all(
        g >= 0 and (d < 0 or g == d) for g, d in zip(given, desc.shape, strict=True)
    )
    if not fits:
        raise AclError(_INVALID, f"input {index} ({desc.name}): tensor desc dims {list(given)} do not fit {desc.shape}")
    need = math.prod(given) * desc.dtype.itemsize
    if buffer.size < need:
        raise AclError(
            _INVALID, f"input {index} ({desc.name}) needs {need} bytes for {list(given)}, buffer has {buffer.size}"
        )
    return given


def _gear(model: Model, inputs: list[DataBuffer]) -> tuple[int, ...] | None:
    """A gear model's gear: what its gear buffer (the dataset's last) holds now."""
    return None if model.gears is None else dynamic.read_gear(model.gears, inputs[-1])


def _gear_input(desc: TensorDesc, buffer: DataBuffer, index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A gear model's input runs on the leading bytes of its buffer, which must hold the gear's shape."""
    need = math.prod(shape) * desc.dtype.itemsize
    if buffer.size < need:
        raise AclError(
            _INVALID, f"input {index} ({desc.name}) needs {need} bytes on this gear, its buffer has {buffer.size}"
        )
    return shape


def prepare(model: Model, input_dataset: int, output_dataset: int) -> tuple[list[np.ndarray], list[OutputTarget]]:
    """Check both datasets against the model; return input views and where the outputs go."""
    inputs = datasets.get(input_dataset).resolve("input")
    outputs = datasets.get(output_dataset).resolve("output")
    if len(inputs) != len(model.acl_inputs):
        raise AclError(
            _INVALID, f"model {model.id} takes {len(model.acl_inputs)} inputs, the dataset has {len(inputs)}"
        )
    if len(outputs) < len(model.outputs):
        raise AclError(_INVALID, f"model {model.id} has {len(model.outputs)} outputs, the dataset has {len(outputs)}")
    gear = _gear(model, inputs)
    gear_shapes = model.gears.shapes(gear) if model.gears is not None and gear is not None else None
    feeds: list = []
    aipp_feeds = aipp.feeds(model.aipp, inputs, gear_shapes) if model.aipp is not None else {}
    for index, (desc, buffer) in enumerate(zip(model.inputs, inputs, strict=False)):
        if index in aipp_feeds:  # raw image bytes, turned into the model's input when it runs
            feeds.append(aipp_feeds[index])
            continue
        if gear_shapes is None:
            shape = _input_shape(desc, buffer, index, _dataset.input_dims(input_dataset, index))
        else:
            shape = _gear_input(desc, buffer, index, gear_shapes[index])
        feeds.append(memory.view_array(buffer.addr, shape, desc.dtype))
    output_shapes = model.gear_outputs[gear] if gear is not None else None
    targets = []
    for index, (desc, buffer) in enumerate(zip(model.outputs, outputs, strict=False)):
        need = desc.size if output_shapes is None else math.prod(output_shapes[index]) * desc.dtype.itemsize
        if (desc.is_static or output_shapes is not None) and buffer.size < need:
            raise AclError(_INVALID, f"output {index} ({desc.name}) needs {need} bytes, buffer has {buffer.size}")
        region = memory.region_for(buffer.addr, buffer.size, f"output {index} buffer", write=True)
        targets.append(OutputTarget(buffer.addr, buffer.size, region, output_dataset, desc.format))
    return feeds, targets


class OutputTarget(NamedTuple):
    """Where one output goes: memory checked in ``prepare``, pinned (``region``) until the model wrote it."""

    addr: int
    size: int
    region: memory.Region
    dataset: int = 0  # the output dataset, whose tensor desc for this output the run updates
    format: int = 0


def _write_outputs(model: Model, results: list[np.ndarray], targets: list[OutputTarget]) -> None:
    for index, (result, target) in enumerate(zip(results, targets, strict=False)):
        if result.nbytes > target.size:
            raise AclError(_INVALID, f"output {index} of model {model.id}: {result.nbytes} bytes, buffer {target.size}")
        result = np.ascontiguousarray(result)
        memory.task_write(target.addr, result, f"output {index} of model {model.id}", target.region)
        if target.dataset:
            _dataset.publish_output(
                target.dataset, index, int(acl_from_numpy(result.dtype)), result.shape, target.format
            )


def _outputs(
    model: Model,
    feeds: list[np.ndarray],
    buffers: list[OutputTarget],
    device_id: int,
    stream_id: int,
    step: int,
    plan: _plan.ExecPlan | None,
) -> None:
    """The program's outputs, into its buffers: on the pair's plan when the caller holds one (and its pins), else
    through the model's session (or its profiled twin) and copies."""
    if plan is not None:
        model.weights.check(plan.label, model_file=False)  # as ``Model.run`` does
        plan.run()
    else:
        _write_outputs(model, profiled.run(model, feeds, device_id, stream_id, step), buffers)


def run(
    model: Model,
    feeds: list[np.ndarray],
    buffers: list[OutputTarget],
    device_id: int,
    stream_id: int,
    plan: _plan.ExecPlan | None = None,
) -> None:
    """One execution, dumping it if the dump session says this step is dumped: the dump gets the operators (to
    plan, once) and each planned operator's tensors; it never reaches into the model.

    Decision: a dumped step's outputs come from the same optimised session as any other step's, and its dump from
    the observed run of the model's own operators beside it, so turning a dump on never changes what a program reads
    (the two runs differ by onnxruntime's fusions, ~1e-6 relative). The observed run comes first: it reads the
    inputs before the plain run writes the outputs (which may be the inputs' own buffers). A dumped step therefore
    costs one plain run more; docs/models-and-dumps.md gives the measured cost of this and of the alternatives. A
    profiled step (``acl.prof``) runs on the model's profiled twin instead (``openacl.model.profiled``)."""
    feeds = aipp.resolve(feeds)
    index = model.next_step()
    step = dump_session.step_for(model.id, model.name, index)
    if step is not None and step.needs_plan:
        observed = model.observed()
        step.plan(observed.ops, observed.skipped)
    if step is None or not step.start():
        if model.session is not None:  # a model loaded for dumps only has nothing to run when nothing is dumped
            _outputs(model, feeds, buffers, device_id, stream_id, index, plan)
        return
    observed = model.observed()
    try:
        observed.prepare(step.ops, [feed.shape for feed in feeds])
        for tensors in observed.run(feeds):
            step.emit(tensors, device_id, stream_id, borrowed=feeds)
    finally:
        step.seal()
    if model.session is not None:
        _outputs(model, feeds, buffers, device_id, stream_id, index, plan)
    else:  # a model loaded for dumps only: its outputs are the observed run's
        model.last_output_shapes = [output.shape for output in observed.outputs]
    step.wait()


def _ranges(feeds: list, targets: list[OutputTarget]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(what an execution reads, what it writes), for openacl check: input views and output buffers."""
    reads = [(memory.address_of(f), f.nbytes) for f in feeds if isinstance(f, np.ndarray)]
    return reads, [(t.addr, t.size) for t in targets]


def _note_reads(model: Model, feeds: list, at: tuple | None) -> None:
    """openacl check: the execution reads its input buffers (a model input never filled is uninitialized)."""
    for index, feed in enumerate(feeds):
        if isinstance(feed, np.ndarray):
            memory.note_read(memory.address_of(feed), feed.nbytes, f"input {index} of model {model.id}", at)


def execute(model: Model, input_dataset: int, output_dataset: int) -> None:
    """``aclmdlExecute``: on the pair's plan when it has one that still holds (``model.plan``), else the whole way."""
    key = (input_dataset, output_dataset)
    taken = None
    if not checker.enabled and not prof_session.active:
        taken = model.plans.take(key)  # its pins hold the memory's bytes until this frame ends, after the run
        if taken is not None and not dump_session.watches(model.id):
            model.next_step()  # first, as the whole way counts a step that fails its weights check
            model.weights.check(taken[0].label, model_file=False)
            taken[0].run()
            return
    # The whole way; a dumped step of a planned pair still runs its plain run on the plan (``run``), and its
    # observed run reads the plan's inputs, checked when the plan was made and pinned now.
    if taken is not None:
        feeds, buffers = taken[0].feeds(taken[1]), []
    else:
        feeds, buffers = prepare(model, input_dataset, output_dataset)
    if checker.enabled and not checker.on_host_access(f"execute of model {model.id}", *_ranges(feeds, buffers)):
        _note_reads(model, feeds, None)
    ctx = _context.current()
    device_id = ctx.device.id if ctx is not None else 0
    stream_id = ctx.default_stream.id if ctx is not None else 0
    run(model, feeds, buffers, device_id, stream_id, taken[0] if taken is not None else None)
    if taken is None and not checker.enabled and model.plans.ran_again(key):
        _plan_pair(model, input_dataset, output_dataset)


def _plan_pair(model: Model, input_dataset: int, output_dataset: int) -> None:
    """Leave a plan for the pair just run the whole way: its stamps first, then ``prepare``'s checks of it again
    (another thread may have changed it since the run; then it fails here, or its stamps are stale already)."""
    key = (input_dataset, output_dataset)
    seen = _plan.stamps(input_dataset, output_dataset, len(model.outputs))
    if model.plans.refused(key, seen):
        return
    try:
        feeds, targets = prepare(model, input_dataset, output_dataset)
    except AclError:
        return
    made = _plan.make(model, seen, feeds, targets)
    if made is None:
        model.plans.refuse(key, seen)
    else:
        model.plans.put(key, made)


def execute_async(model: Model, input_dataset: int, output_dataset: int, stream: Stream) -> None:
    feeds, buffers = prepare(model, input_dataset, output_dataset)
    at = checker.site() if checker.enabled else None
    if checker.enabled:
        checker.on_task(stream, f"execute_async of model {model.id}", *_ranges(feeds, buffers))

    def work() -> None:
        if checker.enabled:
            _note_reads(model, feeds, at)
        run(model, feeds, buffers, stream.device_id, stream.id)

    stream.enqueue(work_task(f"model_execute:{model.name}", work))
