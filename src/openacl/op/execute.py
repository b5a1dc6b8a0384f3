"""Running an operator on a stream: compile (or find) it, check every buffer, then queue it as one stream task.

Guarantees:
- Everything is checked before anything is queued: descs, attributes and the compiled operator (see
  ``compiled``), every data buffer handle, and every buffer's memory (inside a known allocation, large
  enough, device memory unless its desc's placement says host, outputs writable). A bad call is an error
  code from ``execute_v2`` itself and queues nothing. A call with the same handles as an earlier one, none of
  them changed nor the memory table, takes that call's plan (``plan``): the checks' answers are the same.
- The operator runs when its stream reaches it, after every copy, event wait and callback queued before it,
  and reads its inputs then, in place (onnxruntime is bound to the buffers' addresses, no copy); work
  queued after it sees its outputs. The memory stays alive until then, even if freed meanwhile. A failure
  while running (onnxruntime raising) fails the stream, as a model execution does.
- A small operator (``INLINE_LIMIT`` bytes in and out) on an idle stream runs on the calling thread, before
  ``execute_v2`` returns; any other runs on an engine thread. Either way the stream is busy with it.
- Descs and attributes are read at the call: changing or destroying them afterwards does not change an
  operator already queued.

Decisions where CANN does not say: ``execute_v2`` with descs and buffers of different lengths is
ACL_ERROR_INVALID_PARAM (pyACL passes only the buffers' count to C, which then reads past the desc array); a
const or absent (ACL_DT_UNDEFINED) input's buffer is not read and may be handle 0. An output desc with
dynamic dims (-1) gets the operator's real output shape written into it during the call, as CANN does for
operators with shape ranges.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from openacl.errors import AclCode, AclError
from openacl.op import attr as _attr
from openacl.op import tensor_desc as _desc
from openacl.op.compiled import CompiledOp, cache, infer
from openacl.op.plan import Output, Plan, plans
from openacl.op.tensor_desc import ACL_MEMTYPE_DEVICE, TensorDesc
from openacl.runtime import checker, memory, versions
from openacl.runtime import device as _device
from openacl.runtime.buffers import DataBuffer, data_buffers
from openacl.runtime.entry import NOT_GIVEN, hand_on
from openacl.runtime.handles import HandleTable
from openacl.runtime.sched.stream import Stream
from openacl.runtime.sched.task import work_task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def _inline_limit() -> int:
    try:
        return max(int(os.environ.get("OPENACL_OP_INLINE_BYTES", str(4 << 20))), 0)
    except ValueError:
        return 4 << 20


#: Operators moving at most this many bytes (inputs + outputs) run on the caller's thread when their stream is
#: idle (``OPENACL_OP_INLINE_BYTES``, read at import; default 4 MiB; 0: always on an engine thread).
INLINE_LIMIT = _inline_limit()


# ----- the runtime, reached through these two functions only -----


#: The stream a handle names; 0 is the current context's default stream (``device.resolve`` itself: one call less).
resolve_stream: Callable[[int], Stream] = _device.resolve
#: The stream of a handle other than 0, or None: ``resolve``'s first step (the hot path's, no call more).
_find_stream: Callable[[int], Stream | None] = _device.streams.find
_find_plan = plans.find


def enqueue(stream: Stream, name: str, work: Callable[..., None], args: tuple, small: bool) -> None:
    """Queue one operator's work, ``work(*args)``, on a stream, ordered with its copies, events and callbacks.

    A ``small`` operator on an idle stream runs on the calling thread instead: handing it to an engine thread
    and waking the caller's ``synchronize`` costs more than the operator (tens of microseconds against a few).
    The stream is busy with it meanwhile, so ordering and failures are as for any stream task; no task or
    partial is built for it unless it is queued.
    """
    if small and stream.run_here_if_idle(name, work, args):
        return
    stream.enqueue(work_task(name, functools.partial(work, *args)))


# ----- binding buffers -----


def _check_memory(addr: int, size: int, desc: TensorDesc, what: Callable[[], str], *, write: bool) -> memory.Region:
    """The region holding a buffer's bytes (``what`` names the buffer, built only for an error)."""
    region = memory.space.find(addr, size)
    if region is None or (write and not region.writable):
        memory.region_for(addr, size, what(), write=write)  # raises, saying which rule the memory breaks
    if desc.placement == ACL_MEMTYPE_DEVICE and region.kind is not memory.Kind.DEVICE:
        raise AclError(_INVALID, f"{what()} {addr:#x} is {region.kind.value} memory; the desc's placement is device")
    return region


def _buffer(handle: int, seen: list) -> DataBuffer:
    """A data buffer, with its stamp read before its contents (``runtime.versions``)."""
    buffer = data_buffers.get(handle)
    seen.append((buffer, buffer.version))
    return buffer


def _bind_inputs(
    compiled: CompiledOp, in_descs: list[TensorDesc], in_bufs: list[int], seen: list
) -> tuple[list[int], list[memory.Region]]:
    addrs, regions = [], []
    op_type = compiled.op_type
    for feed in compiled.feeds:
        buffer = _buffer(in_bufs[feed.index], seen)
        nbytes = feed.nbytes
        if buffer.size < nbytes:
            what = f"{op_type} input {feed.index} buffer"
            raise AclError(_INVALID, f"{what} has {buffer.size} bytes, the desc needs {nbytes}")
        region = _check_memory(
            buffer.addr, nbytes, in_descs[feed.index], lambda i=feed.index: f"{op_type} input {i} buffer", write=False
        )
        regions.append(region)
        addrs.append(buffer.addr)
    if len(in_bufs) != len(compiled.feeds):
        read = {feed.index for feed in compiled.feeds}
        for index, handle in enumerate(in_bufs):  # buffers not read must still be real handles (or 0)
            if handle and index not in read:
                _buffer(handle, seen)
    return addrs, regions


def bind(
    compiled: CompiledOp,
    in_descs: list[TensorDesc],
    in_bufs: list[int],
    out_descs: list[TensorDesc],
    out_bufs: list[int],
    seen: list | None = None,
    epoch: int = -1,
) -> tuple[Plan, tuple[memory.Region, ...]]:
    """Check every buffer of one call; rewrite dynamic output descs with the real shapes. Returns the call's plan
    and its pins. ``seen``: the call's descs and attr with their stamps, read before anything of them was; the
    buffers' are added (a plan made without them is only for this call). ``epoch``: ``versions.epoch`` read
    before any of those stamps."""
    seen = [] if seen is None else seen
    generation = memory.space.generation  # before any memory is looked at: a change meanwhile makes it stale
    addrs, regions = _bind_inputs(compiled, in_descs, in_bufs, seen)
    spans = [(addr, addr + feed.nbytes) for addr, feed in zip(addrs, compiled.feeds, strict=True)]
    op_type = compiled.op_type
    outputs = []
    for index, (result, desc, handle) in enumerate(zip(compiled.results, out_descs, out_bufs, strict=True)):
        if not result.is_static and not desc.is_static:
            raise AclError(
                AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                f"{op_type}: output {index} has dims {list(desc.dims)} and no shape can be inferred",
            )
        need = result.nbytes if result.is_static else desc.size()
        buffer = _buffer(handle, seen)
        addr = buffer.addr
        if buffer.size < need:
            raise AclError(
                _INVALID, f"{op_type} output {index} buffer has {buffer.size} bytes, the output needs {need}"
            )
        regions.append(_check_memory(addr, need, desc, lambda i=index: f"{op_type} output {i} buffer", write=True))
        # In place over an input, or of a shape known only after the run: onnxruntime allocates, we copy.
        overlaps = any(low < addr + need and addr < high for low, high in spans)
        outputs.append(Output(addr, buffer.size, need, direct=result.is_static and not overlaps))
    for desc, result in zip(out_descs, compiled.results, strict=True):
        if not desc.is_static:
            desc.dims = result.shape  # CANN rewrites an output desc of dynamic shape with the real one
    first: dict[int, tuple[object, int]] = {}  # each object once, with the stamp read first (a change since: stale)
    for obj, version in seen:
        first.setdefault(id(obj), (obj, version))
    plan = Plan(
        compiled,
        tuple(addrs),
        tuple(outputs),
        tuple(obj for obj, _ in first.values()),
        [version for _, version in first.values()],
        generation,
        tuple(weakref.ref(region) for region in regions),
        epoch,
        INLINE_LIMIT,
    )
    return plan, tuple(regions)


def _copy_out(plan: Plan, copies: list[np.ndarray | None], regions: tuple[memory.Region, ...]) -> None:
    for index, (result, out, region) in enumerate(zip(copies, plan.outputs, regions, strict=True)):
        if result is None:
            continue  # written in place
        result = np.ascontiguousarray(result)
        if result.nbytes > out.size:
            what = f"{plan.compiled.op_type} output {index}"
            raise AclError(_INVALID, f"{what}: {result.nbytes} bytes, its buffer {out.size}")
        memory.task_write(out.addr, result, f"{plan.compiled.op_type} output {index}", region)


def _check_direct(plan: Plan, regions: tuple[memory.Region, ...]) -> tuple[memory.Region, ...]:
    """Before onnxruntime writes outputs in place: each lands in live memory now; the regions pin them."""
    return tuple(
        memory.task_write_region(out.addr, out.need, f"{plan.compiled.op_type} output {index}", region)
        for index, (out, region) in enumerate(zip(plan.outputs, regions, strict=True))
        if out.direct
    )


def _run(plan: Plan, pins: tuple[memory.Region, ...], at: tuple | None = None) -> None:
    """The task's work. Outputs written in place are checked against live memory now (``task_write_region``),
    unless the memory table is as it was when the plan checked them (its generation): then the answer is the
    same. Under ``openacl check`` always, so the checker sees every write, and ``at`` (the program's site of the
    call) names the reads of inputs nothing wrote."""
    if at is not None:
        for index, (addr, size) in enumerate(plan.reads):
            memory.note_read(addr, size, f"operator {plan.compiled.op_type} input {index}", at)
    if checker.enabled or memory.space.generation != plan.generation:
        outs = pins[len(plan.inputs) :]
        live = _check_direct(plan, outs)
        copies = plan.compiled.run_into(plan.buffers)
        if plan.copies:
            _copy_out(plan, copies, outs)
        del live  # held until onnxruntime wrote in place
    elif plan.copies:
        _copy_out(plan, plan.compiled.run_into(plan.buffers), pins[len(plan.inputs) :])
    else:  # the steady state: every output in place, into memory as the plan checked it
        plan.compiled.run_into(plan.buffers)


def _declare(plan: Plan, stream: Stream) -> tuple:
    """``openacl check``: the operator's task reads its inputs and writes its outputs; the program's site."""
    checker.on_task(stream, f"operator {plan.compiled.op_type}", list(plan.reads), list(plan.writes))
    return checker.site()


def _queue(plan: Plan, pins: tuple[memory.Region, ...], stream: Stream) -> None:
    at = _declare(plan, stream) if checker.enabled else None
    enqueue(stream, plan.name, _run, (plan, pins, at), plan.small)


def _descs(handles: list[int]) -> list[TensorDesc]:
    return [_desc.get(handle) for handle in handles]


def _check_lengths(in_descs: list, in_bufs: list, out_descs: list, out_bufs: list) -> None:
    if len(in_descs) != len(in_bufs) or len(out_descs) != len(out_bufs):
        raise AclError(
            _INVALID,
            f"{len(in_descs)} input descs for {len(in_bufs)} input buffers, "
            f"{len(out_descs)} output descs for {len(out_bufs)} output buffers",
        )


def repeat_entry(whole: Callable[..., int]) -> Callable[..., int]:
    """``acl.op.execute_v2`` (and ``execute``) as programs call them (see ``runtime.entry``): a call identical to an
    earlier one is run or queued by that call's plan, straight from the program's arguments, and returns 0; any
    other call (no plan, an argument not plain) goes to ``whole``, with nothing done, and so the whole way
    (``handle_list`` and ``execute``).

    Plain means what the wrapper's parse and ``handle_list`` pass on as they are: an ASCII ``str`` op type
    without NUL, ``int`` attr and stream handles, and for each handle list a ``list`` of ``int`` handles. A
    plan's key holds only such handles, in range, so a plain list equal to its part of the key is exactly those
    handles; a float or a numpy integer that compares equal to one is not plain, and is refused by the whole
    way. Under ``openacl check`` every call goes the whole way, checked in full: a stale stream is resolved, and
    reported, once.

    The hot path of small operators, written out in the one frame the program calls (each Python frame less is
    measurable on a call of a few microseconds: calling ``take`` instead of its all-equal case inline measured
    0.05 to 0.15 more on the op benchmark's Add [16] ratio, four runs each, side by side): ``take`` when nothing
    changed since the plan's last look, inline; then, for a small operator writing every output in place on an
    idle stream, ``compiled.run_into`` at once, on the calling thread (``Stream.run_here``). Its memory is as the
    take found it (the generation): a free by another thread after the take is ordered after this call, and the
    pins keep the bytes until the run ends,
    so ``_run``'s look at the memory table at run time (for a task that waited in a queue) has nothing to add.
    """

    def execute_v2(
        op_type=NOT_GIVEN,
        in_desc_handles=NOT_GIVEN,
        in_bufs=NOT_GIVEN,
        out_desc_handles=NOT_GIVEN,
        out_bufs=NOT_GIVEN,
        attr_handle=NOT_GIVEN,
        stream_handle=NOT_GIVEN,
        /,
        *args,
        **kwargs,
    ) -> int:
        if (
            not (args or kwargs)
            and not checker.enabled  # under check the whole way: one resolve, one declaration, one finding
            and type(op_type) is str
            and type(attr_handle) is int
            and type(stream_handle) is int
            and type(in_desc_handles) is list
            and type(in_bufs) is list
            and type(out_desc_handles) is list
            and type(out_bufs) is list
            and op_type.isascii()
            and "\x00" not in op_type
        ):
            # Every handle a plain int (see above), before the key is hashed: hashing runs a handle's own __hash__.
            # One loop per list, written out: no tuple of the lists per call.
            plain = True
            for handle in in_desc_handles:
                if type(handle) is not int:
                    plain = False
                    break
            for handle in in_bufs if plain else ():
                if type(handle) is not int:
                    plain = False
                    break
            for handle in out_desc_handles if plain else ():
                if type(handle) is not int:
                    plain = False
                    break
            for handle in out_bufs if plain else ():
                if type(handle) is not int:
                    plain = False
                    break
            plan = None
            if plain:
                # The handles, each list closed by None (never a handle): lists of other lengths make other keys.
                try:
                    key = (
                        op_type,
                        attr_handle,
                        *in_desc_handles,
                        None,
                        *in_bufs,
                        None,
                        *out_desc_handles,
                        None,
                        *out_bufs,
                    )
                except MemoryError:  # nothing done: the wrapper's answer (ACL_ERROR_BAD_ALLOC, one line)
                    return whole(
                        op_type, in_desc_handles, in_bufs, out_desc_handles, out_bufs, attr_handle, stream_handle
                    )
                plan = _find_plan(key)
            if plan is not None:
                if plan.epoch == versions.epoch and plan.generation == memory.space.generation:
                    pins = plan.referents(plan.refs)  # what ``take`` does when no stamp was set since its last look
                    found = None if None in pins else (plan, pins)
                else:
                    found = plans.take(key)  # the stamps read again
                if found is not None:
                    plan, pins = found
                    try:
                        stream = _find_stream(stream_handle)
                        if stream is None:
                            stream = resolve_stream(stream_handle)  # the default stream (0), or an error
                        run_into, buffers = plan.compiled.run_into, plan.buffers
                        if not (plan.small and not plan.copies and stream.run_here(plan.name, run_into, buffers)):
                            enqueue(stream, plan.name, _run, (plan, pins, None), plan.small)  # as _queue does
                    except AclError:
                        pass  # refused before anything was done (a stream gone): the whole way's code and line
                    else:
                        cache.hits += 1  # a statistic (see OpCache.hits)
                        return 0
        given = (op_type, in_desc_handles, in_bufs, out_desc_handles, out_bufs, attr_handle, stream_handle)
        return hand_on(whole, given, args, kwargs)

    return execute_v2


def execute(
    op_type: str,
    in_desc_handles: list[int],
    in_bufs: list[int],
    out_desc_handles: list[int],
    out_bufs: list[int],
    attr_handle: int,
    stream_handle: int,
) -> None:
    """``aclopExecuteV2``, the whole way: run one operator asynchronously on a stream.

    The call is worked out and checked in full, and leaves its plan for the next identical call, which takes it
    (``repeat_entry``'s function, which the program calls first). A call whose output descs get their real shapes
    written here leaves none: its descs change with the call, so the plan would never match; nor does a call over a
    loan."""
    _check_lengths(in_desc_handles, in_bufs, out_desc_handles, out_bufs)
    epoch = versions.epoch  # before any stamp (versions)
    in_descs, out_descs = _descs(in_desc_handles), _descs(out_desc_handles)
    attr = _attr.get(attr_handle)
    seen = [(obj, obj.version) for obj in (*in_descs, *out_descs, attr)]  # stamps first, then contents
    stream = resolve_stream(stream_handle)
    compiled = cache.get(op_type, in_descs, out_descs, attr)
    rewritten = not all(desc.is_static for desc in out_descs)  # bind writes the real shapes into these
    plan, pins = bind(compiled, in_descs, in_bufs, out_descs, out_bufs, seen, epoch)
    # A plan over a loan (a dump chunk's memory) is for this call only: a loan's end does not move the memory
    # generation (``memory.AddressSpace``), so a kept one could outlive its bytes.
    if not rewritten and not any(region.lent for region in pins):  # the key as ``repeat_entry`` builds it
        plans.put(
            (op_type, attr_handle, *in_desc_handles, None, *in_bufs, None, *out_desc_handles, None, *out_bufs), plan
        )
    _queue(plan, pins, stream)


def update_params(op_type: str, in_desc_handles: list[int], out_desc_handles: list[int], attr_handle: int) -> None:
    """``aclopUpdateParams``: compile the operator now, so the first ``execute_v2`` finds it in the cache."""
    cache.get(op_type, _descs(in_desc_handles), _descs(out_desc_handles), _attr.get(attr_handle))


def infer_shape(op_type: str, in_desc_handles: list[int], num_outputs: int, out_desc_handles: list[int], attr: int):
    """``aclopInferShape``: write each output's inferred dims (-1 where unknown) into its desc.

    Only the descs are used: an input whose value decides a shape (Reshape's ``shape``) must be a const.
    """
    if num_outputs != len(out_desc_handles):
        raise AclError(_INVALID, f"num_outputs {num_outputs} but {len(out_desc_handles)} output descs")
    out_descs = _descs(out_desc_handles)
    results = infer(op_type, _descs(in_desc_handles), out_descs, _attr.get(attr))
    for desc, result in zip(out_descs, results, strict=True):
        desc.dims = result.shape


# ----- handles (aclopCreateHandle) -----


@dataclass(frozen=True)
class OpHandle:
    """An operator compiled for fixed descs and attributes; the descs are copies taken at creation."""

    compiled: CompiledOp
    in_descs: tuple[TensorDesc, ...]
    out_descs: tuple[TensorDesc, ...]


op_handles: HandleTable[OpHandle] = HandleTable("op handle")


def _snapshot(descs: list[TensorDesc]) -> tuple[TensorDesc, ...]:
    return tuple(TensorDesc(d.dtype, d.dims, d.format, d.name, d.const, d.placement) for d in descs)


def handle_for(op_type: str, in_descs: list[TensorDesc], out_descs: list[TensorDesc], attr: _attr.OpAttr) -> int:
    """A new op handle: the operator compiled (or found) for these descs, which it keeps copies of."""
    compiled = cache.get(op_type, in_descs, out_descs, attr)
    return op_handles.add(OpHandle(compiled, _snapshot(in_descs), _snapshot(out_descs)))


def create_handle(op_type: str, in_desc_handles: list[int], out_desc_handles: list[int], attr_handle: int) -> int:
    return handle_for(op_type, _descs(in_desc_handles), _descs(out_desc_handles), _attr.get(attr_handle))


def _cast_attr(truncate: int) -> _attr.OpAttr:
    attr = _attr.OpAttr()
    attr.set("truncate", _attr.BOOL, bool(truncate))
    return attr


def create_handle_for_cast(src_desc: int, dst_desc: int, truncate: int) -> int:
    return handle_for("Cast", [_desc.get(src_desc)], [_desc.get(dst_desc)], _cast_attr(truncate))


def destroy_handle(handle: int) -> None:
    op_handles.remove(handle)


def execute_with_handle(handle: int, in_bufs: list[int], out_bufs: list[int], stream_handle: int) -> None:
    op = op_handles.get(handle)
    _check_lengths(list(op.in_descs), in_bufs, list(op.out_descs), out_bufs)
    stream = resolve_stream(stream_handle)
    _queue(*bind(op.compiled, list(op.in_descs), in_bufs, list(op.out_descs), out_bufs), stream)


def execute_descs(
    op_type: str,
    in_descs: list[TensorDesc],
    in_bufs: list[int],
    out_descs: list[TensorDesc],
    out_bufs: list[int],
    attr: _attr.OpAttr,
    stream_handle: int,
) -> None:
    """``execute`` for callers that built the descs and attributes themselves (``acl.blas``)."""
    _check_lengths(in_descs, in_bufs, out_descs, out_bufs)
    stream = resolve_stream(stream_handle)
    compiled = cache.get(op_type, in_descs, out_descs, attr)
    _queue(*bind(compiled, in_descs, in_bufs, out_descs, out_bufs), stream)


def cast(src_desc: int, src_buf: int, dst_desc: int, dst_buf: int, truncate: int, stream_handle: int) -> None:
    """``aclopCast``: a Cast operator from the source desc's dtype to the destination desc's."""
    in_descs, out_descs = [_desc.get(src_desc)], [_desc.get(dst_desc)]
    stream = resolve_stream(stream_handle)
    compiled = cache.get("Cast", in_descs, out_descs, _cast_attr(truncate))
    _queue(*bind(compiled, in_descs, [src_buf], out_descs, [dst_buf]), stream)


def reset() -> None:
    """Forget every compiled operator and op handle (process reset and fork: onnxruntime sessions do not survive
    a fork). Tensor descs and attributes are host objects the program owns and stay."""
    op_handles.clear()
    plans.clear()
    cache.clear()
