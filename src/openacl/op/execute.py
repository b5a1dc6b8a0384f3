"""Running an operator on a stream: compile (or find) it, check every buffer, then queue it as one stream task.

Guarantees:
- Everything is checked before anything is queued: descs, attributes and the compiled operator (see
  ``compiled``), every data buffer handle, and every buffer's memory (inside a known allocation, large
  enough, device memory unless its desc's placement says host, outputs writable). A bad call is an error
  code from ``execute_v2`` itself and queues nothing.
- The operator runs when its stream reaches it, after every copy, event wait and callback queued before it,
  and reads its inputs then (through views of device memory, no copy); work queued after it sees its
  outputs. A failure while running (onnxruntime raising) fails the stream, as a model execution does.
- Descs and attributes are read at the call: changing or destroying them afterwards does not change an
  operator already queued.

Decisions where CANN does not say: ``execute_v2`` with descs and buffers of different lengths is
ACL_ERROR_INVALID_PARAM (pyACL passes only the buffers' count to C, which then reads past the desc array); a
const or absent (ACL_DT_UNDEFINED) input's buffer is not read and may be handle 0. An output desc with
dynamic dims (-1) gets the operator's real output shape written into it during the call, as CANN does for
operators with shape ranges.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from openacl.errors import AclCode, AclError
from openacl.op import attr as _attr
from openacl.op import tensor_desc as _desc
from openacl.op.compiled import CompiledOp, cache, infer
from openacl.op.tensor_desc import ACL_MEMTYPE_DEVICE, TensorDesc
from openacl.runtime import memory
from openacl.runtime import stream as _stream
from openacl.runtime.handles import HandleTable
from openacl.runtime.stream import Stream, Task

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM


# ----- the runtime, reached through these two functions only (the scheduler is being rewritten) -----


def resolve_stream(handle: int) -> Stream:
    """The stream a handle names; 0 is the current context's default stream."""
    return _stream.resolve(handle)


def enqueue(stream: Stream, name: str, work: Callable[[], None]) -> None:
    """Queue one operator's work on a stream, ordered with its copies, events and callbacks."""
    stream.enqueue(Task.work_task(name, work))


# ----- binding buffers -----


@dataclass(frozen=True)
class Target:
    """Where one output goes: memory checked at the call, kept alive (``keep``) until the operator wrote it."""

    addr: int
    size: int
    keep: object


def _check_memory(addr: int, size: int, desc: TensorDesc, what: str, *, write: bool) -> memory.Region:
    region = memory.region_for(addr, size, what, write=write)
    if desc.placement == ACL_MEMTYPE_DEVICE and region.kind is not memory.Kind.DEVICE:
        raise AclError(_INVALID, f"{what} {addr:#x} is {region.kind.value} memory; the desc's placement is device")
    return region


def bind_inputs(compiled: CompiledOp, in_descs: list[TensorDesc], in_bufs: list[int]) -> list[np.ndarray]:
    views = []
    for feed in compiled.feeds:
        what = f"{compiled.op_type} input {feed.index} buffer"
        buffer = memory.data_buffers.get(in_bufs[feed.index])
        if buffer.size < feed.nbytes:
            raise AclError(_INVALID, f"{what} has {buffer.size} bytes, the desc needs {feed.nbytes}")
        _check_memory(buffer.addr, feed.nbytes, in_descs[feed.index], what, write=False)
        views.append(memory.view_array(buffer.addr, feed.shape, feed.dtype))
    read = {feed.index for feed in compiled.feeds}
    for index, handle in enumerate(in_bufs):  # buffers not read must still be real handles (or 0)
        if handle and index not in read:
            memory.data_buffers.get(handle)
    return views


def bind_outputs(compiled: CompiledOp, out_descs: list[TensorDesc], out_bufs: list[int]) -> list[Target]:
    targets = []
    for index, (result, desc, handle) in enumerate(zip(compiled.results, out_descs, out_bufs, strict=True)):
        what = f"{compiled.op_type} output {index} buffer"
        if not desc.is_static and not result.is_static:
            raise AclError(
                AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                f"{compiled.op_type}: output {index} has dims {list(desc.dims)} and no shape can be inferred",
            )
        need = result.nbytes if result.is_static else desc.size()
        buffer = memory.data_buffers.get(handle)
        if buffer.size < need:
            raise AclError(_INVALID, f"{what} has {buffer.size} bytes, the output needs {need}")
        region = _check_memory(buffer.addr, need, desc, what, write=True)
        targets.append(Target(buffer.addr, buffer.size, region.keep))
    for desc, result in zip(out_descs, compiled.results, strict=True):
        if not desc.is_static:
            desc.dims = result.shape  # CANN rewrites an output desc of dynamic shape with the real one
    return targets


def _write(op_type: str, results: list[np.ndarray], targets: list[Target]) -> None:
    for index, (result, target) in enumerate(zip(results, targets, strict=True)):
        result = np.ascontiguousarray(result)
        if result.nbytes > target.size:
            raise AclError(_INVALID, f"{op_type} output {index}: {result.nbytes} bytes, its buffer {target.size}")
        ctypes.memmove(target.addr, result.ctypes.data, result.nbytes)  # inside the region checked at the call


def _queue(compiled: CompiledOp, views: list[np.ndarray], targets: list[Target], stream: Stream) -> None:
    def work() -> None:
        _write(compiled.op_type, compiled.run(views), targets)

    enqueue(stream, f"op:{compiled.op_type}", work)


def _descs(handles: list[int]) -> list[TensorDesc]:
    return [_desc.get(handle) for handle in handles]


def _check_lengths(in_descs: list, in_bufs: list, out_descs: list, out_bufs: list) -> None:
    if len(in_descs) != len(in_bufs) or len(out_descs) != len(out_bufs):
        raise AclError(
            _INVALID,
            f"{len(in_descs)} input descs for {len(in_bufs)} input buffers, "
            f"{len(out_descs)} output descs for {len(out_bufs)} output buffers",
        )


def execute(
    op_type: str,
    in_desc_handles: list[int],
    in_bufs: list[int],
    out_desc_handles: list[int],
    out_bufs: list[int],
    attr_handle: int,
    stream_handle: int,
) -> None:
    """``aclopExecuteV2``: run one operator asynchronously on a stream."""
    _check_lengths(in_desc_handles, in_bufs, out_desc_handles, out_bufs)
    in_descs, out_descs = _descs(in_desc_handles), _descs(out_desc_handles)
    attr = _attr.get(attr_handle)
    stream = resolve_stream(stream_handle)
    compiled = cache.get(op_type, in_descs, out_descs, attr)
    views = bind_inputs(compiled, in_descs, in_bufs)
    _queue(compiled, views, bind_outputs(compiled, out_descs, out_bufs), stream)


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


def create_handle(op_type: str, in_desc_handles: list[int], out_desc_handles: list[int], attr_handle: int) -> int:
    in_descs, out_descs = _descs(in_desc_handles), _descs(out_desc_handles)
    compiled = cache.get(op_type, in_descs, out_descs, _attr.get(attr_handle))
    return op_handles.add(OpHandle(compiled, _snapshot(in_descs), _snapshot(out_descs)))


def _cast_attr(truncate: int) -> _attr.OpAttr:
    attr = _attr.OpAttr()
    attr.set("truncate", _attr.BOOL, bool(truncate))
    return attr


def create_handle_for_cast(src_desc: int, dst_desc: int, truncate: int) -> int:
    in_descs, out_descs = [_desc.get(src_desc)], [_desc.get(dst_desc)]
    compiled = cache.get("Cast", in_descs, out_descs, _cast_attr(truncate))
    return op_handles.add(OpHandle(compiled, _snapshot(in_descs), _snapshot(out_descs)))


def destroy_handle(handle: int) -> None:
    op_handles.remove(handle)


def execute_with_handle(handle: int, in_bufs: list[int], out_bufs: list[int], stream_handle: int) -> None:
    op = op_handles.get(handle)
    _check_lengths(list(op.in_descs), in_bufs, list(op.out_descs), out_bufs)
    stream = resolve_stream(stream_handle)
    views = bind_inputs(op.compiled, list(op.in_descs), in_bufs)
    _queue(op.compiled, views, bind_outputs(op.compiled, list(op.out_descs), out_bufs), stream)


def cast(src_desc: int, src_buf: int, dst_desc: int, dst_buf: int, truncate: int, stream_handle: int) -> None:
    """``aclopCast``: a Cast operator from the source desc's dtype to the destination desc's."""
    in_descs, out_descs = [_desc.get(src_desc)], [_desc.get(dst_desc)]
    stream = resolve_stream(stream_handle)
    compiled = cache.get("Cast", in_descs, out_descs, _cast_attr(truncate))
    views = bind_inputs(compiled, in_descs, [src_buf])
    _queue(compiled, views, bind_outputs(compiled, out_descs, [dst_buf]), stream)
