"""The call plan of ``execute_v2``: a repeated identical call takes it, and any change behind its handles is seen.

Each test makes a plan (one call), changes one thing the plan was worked out from, calls again with the same
handles and checks what a call without a plan would do: the new desc, attribute, buffer or memory is used, or the
same error code is returned.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import acl
from openacl.dump import sink
from openacl.errors import AclCode
from openacl.op import compiled, execute, plan
from openacl.op import tensor_desc as _desc
from openacl.runtime import checker, memory
from openacl.runtime.sched.lock import LOCK
from tests.op.conftest import desc_for, from_device, make_attr, to_device

F32 = np.float32
INVALID = AclCode.ACL_ERROR_INVALID_PARAM
ACL_FLOAT16, ACL_INT32, NCHW = 1, 3, 0
ACL_MEMTYPE_HOST = 1


class Call:
    """One execute_v2 call's handles, called again and again as a program's loop does."""

    def __init__(self, op_type: str, inputs: list[np.ndarray], out_shape: tuple[int, ...], attrs: dict | None = None,
                 out_size: int = 0):  # fmt: skip
        self.op_type = op_type
        self.in_descs = [desc_for(x) for x in inputs]
        self.in_ptrs = [to_device(x) for x in inputs]
        self.ins = [acl.create_data_buffer(ptr, x.nbytes) for ptr, x in zip(self.in_ptrs, inputs, strict=True)]
        self.out_shape = out_shape
        self.out_desc = desc_for(np.zeros(out_shape, F32))
        self.out_size = out_size or int(np.prod(out_shape)) * 4
        self.out_ptr = to_device(np.zeros(self.out_size, np.uint8))
        self.outs = [acl.create_data_buffer(self.out_ptr, self.out_size)]
        self.attr = make_attr(attrs or {})

    def __call__(self, stream: int, sync: bool = True) -> int:
        ret = acl.op.execute_v2(self.op_type, self.in_descs, self.ins, [self.out_desc], self.outs, self.attr, stream)
        if ret == 0 and sync:
            assert acl.rt.synchronize_stream(stream) == 0
        return ret

    def result(self, dtype=F32, shape=None) -> np.ndarray:
        return from_device(self.out_ptr, dtype, shape or self.out_shape)


@pytest.fixture(autouse=True)
def fresh():
    compiled.cache.clear()
    execute.plans.clear()


def test_a_repeated_call_takes_its_plan(stream):
    x = np.arange(6, dtype=F32).reshape(2, 3)
    add = Call("Add", [x, x], (2, 3))
    for _ in range(3):
        assert add(stream) == 0
    assert len(execute.plans) == 1
    assert compiled.cache.statistics() == {"entries": 1, "builds": 1, "hits": 2}
    np.testing.assert_array_equal(add.result(), x + x)


def test_a_plan_checks_no_memory_again(stream, monkeypatch):
    """The steady state: no address is looked up in the memory table (the generation says nothing changed)."""
    x = np.ones((2, 3), F32)
    add = Call("Add", [x, x], (2, 3))
    assert add(stream) == 0
    elsewhere = memory.Region(1 << 12, 16, memory.Kind.USER, None)
    memory.space.add(elsewhere)  # a region added takes nothing from the plan's: nothing is checked again
    host = b"\x01" * 64
    acl.util.bytes_to_ptr(host)  # as a loop that registers each new input does
    finds = []
    real = memory.space.find
    monkeypatch.setattr(memory.space, "find", lambda *a: (finds.append(a), real(*a))[1])
    assert add(stream) == 0
    assert add(stream) == 0
    assert finds == []
    memory.space.discard(elsewhere)  # a region removed: checked again
    assert add(stream) == 0
    assert finds


def test_a_desc_reshaped_after_the_plan_is_used(stream):
    x = np.arange(6, dtype=F32)
    reduce = Call("ReduceSumD", [x.reshape(2, 3)], (2,), {"axes": ("list_int", [1])}, out_size=12)
    assert reduce(stream) == 0
    np.testing.assert_array_equal(reduce.result(), [3, 12])
    assert acl.set_tensor_shape(reduce.in_descs[0], [3, 2]) == 0
    assert acl.set_tensor_shape(reduce.out_desc, [3]) == 0
    assert reduce(stream) == 0
    np.testing.assert_array_equal(reduce.result(shape=(3,)), [1, 5, 9])


def test_a_desc_dtype_changed_after_the_plan_is_used(stream):
    """A desc's dtype changes only from inside openacl (a model publishing an output): any field change counts."""
    x = np.array([1.5, -2.25, 3.0], F32)
    cast = Call("Cast", [x], (3,))
    half = acl.create_tensor_desc(ACL_FLOAT16, [3], 2)
    cast.out_desc = half
    assert cast(stream) == 0
    np.testing.assert_array_equal(cast.result(np.float16, (3,)), x.astype(np.float16))
    _desc.get(half).dtype = ACL_INT32
    assert cast(stream) == 0
    np.testing.assert_array_equal(cast.result(np.int32, (3,)), x.astype(np.int32))


def test_a_desc_format_changed_after_the_plan_is_used(stream):
    x = np.ones((1, 2, 2, 2), F32)
    add = Call("Add", [x, x], (1, 2, 2, 2))
    assert add(stream) == 0
    for desc in (*add.in_descs, add.out_desc):
        assert acl.set_tensor_format(desc, NCHW) == 0
    assert add(stream) == 0
    assert compiled.cache.statistics()["builds"] == 2  # a new signature: compiled again, not the plan's operator


def test_an_attr_changed_after_the_plan_is_used(stream):
    x = np.array([-2.0, 4.0], F32)
    relu = Call("LeakyRelu", [x], (2,), {"negative_slope": ("float", 0.5)})
    assert relu(stream) == 0
    np.testing.assert_array_equal(relu.result(), [-1.0, 4.0])
    assert acl.op.set_attr_float(relu.attr, "negative_slope", 0.25) == 0
    assert relu(stream) == 0
    np.testing.assert_array_equal(relu.result(), [-0.5, 4.0])


def test_a_buffer_re_pointed_after_the_plan_is_used(stream):
    x, y = np.ones(4, F32), np.full(4, 7, F32)
    add = Call("Add", [x, x], (4,))
    assert add(stream) == 0
    other = to_device(y)
    assert acl.update_data_buffer(add.ins[1], other, 16) == 0
    assert add(stream) == 0
    np.testing.assert_array_equal(add.result(), x + y)
    assert acl.update_data_buffer(add.ins[1], other, 8) == 0  # too small now: refused as without a plan
    assert add(stream) == INVALID


def test_memory_freed_and_allocated_again_smaller_at_the_same_address(stream):
    """The output's memory goes and the same address is handed out again, smaller (virtual memory makes it
    certain: two pages unmapped, one mapped again at the start of the range): the plan's checks, made for the
    old allocation, no longer hold, and the call is refused as any call writing past an allocation is."""
    prop = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": 0, "type": 1}, "reserve": 0}
    page, _ = acl.rt.mem_get_allocation_granularity(prop, 0)
    x = np.ones(2 * page // 4, F32)
    add = Call("Add", [x, x], x.shape)
    base, _ = acl.rt.reserve_mem_address(2 * page, 0, 0, 0)
    two, _ = acl.rt.malloc_physical(2 * page, prop, 0)
    one, _ = acl.rt.malloc_physical(page, prop, 0)
    assert acl.rt.map_mem(base, 2 * page, 0, two, 0) == 0
    assert acl.update_data_buffer(add.outs[0], base, 2 * page) == 0
    assert add(stream) == 0
    np.testing.assert_array_equal(from_device(base, F32, x.shape), x + x)
    assert acl.rt.unmap_mem(base) == 0
    assert acl.rt.map_mem(base, page, 0, one, 0) == 0
    assert add(stream) == INVALID
    assert acl.rt.unmap_mem(base) == 0
    assert add(stream) == INVALID  # gone: unknown to new calls
    for handle in (two, one):
        assert acl.rt.free_physical(handle) == 0
    assert acl.rt.release_mem_address(base) == 0


def test_destroyed_handles_behind_a_plan_are_refused(stream):
    x = np.ones(4, F32)
    for destroy in (
        lambda call: acl.destroy_data_buffer(call.ins[0]),
        lambda call: acl.destroy_data_buffer(call.outs[0]),
        lambda call: acl.destroy_tensor_desc(call.in_descs[1]),
        lambda call: acl.destroy_tensor_desc(call.out_desc),
        lambda call: acl.op.destroy_attr(call.attr),
    ):
        add = Call("Add", [x, x], (4,))
        assert add(stream) == 0
        destroy(add)
        assert add(stream) == INVALID


def test_a_destroyed_stream_behind_a_plan_is_refused(ctx):
    x = np.ones(4, F32)
    add = Call("Add", [x, x], (4,))
    stream, _ = acl.rt.create_stream()
    assert add(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert add(stream) == INVALID
    other, _ = acl.rt.create_stream()  # the same plan on another stream
    assert add(other) == 0
    np.testing.assert_array_equal(add.result(), x + x)
    assert acl.rt.destroy_stream(other) == 0


def test_a_plan_keeps_no_memory_alive(stream):
    """Freed memory goes when the program frees it, not when the plan is dropped."""
    import weakref

    x = np.ones(4, F32)
    add = Call("Add", [x, x], (4,))
    assert add(stream) == 0
    region = memory.space.find(add.out_ptr, 16)
    gone = weakref.ref(region)
    del region
    assert acl.rt.free(add.out_ptr) == 0
    assert gone() is None
    assert len(execute.plans) == 1


def test_one_plan_on_two_streams_from_two_threads(ctx):
    """Two threads run the same handles on their own streams at once: each run takes its own IO binding."""
    x = np.arange(256, dtype=F32)
    add = Call("Add", [x, x], (256,))
    errors = []

    def loop() -> None:
        assert acl.rt.set_context(ctx) == 0
        stream, _ = acl.rt.create_stream()
        for _ in range(300):
            ret = add(stream)
            if ret:
                errors.append(ret)
        acl.rt.destroy_stream(stream)

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(execute.plans) == 1
    np.testing.assert_array_equal(add.result(), x + x)


def test_plans_past_capacity_drop_the_oldest(stream, monkeypatch):
    monkeypatch.setattr(execute.plans, "capacity", 2)
    x = np.ones(2, F32)
    calls = [Call("Add", [x, x], (2,)) for _ in range(3)]
    for call in calls:
        assert call(stream) == 0
    assert len(execute.plans) == 2
    assert calls[0](stream) == 0  # worked out again
    np.testing.assert_array_equal(calls[0].result(), x + x)


def test_reset_drops_the_plans(stream):
    x = np.ones(2, F32)
    add = Call("Add", [x, x], (2,))
    assert add(stream) == 0
    execute.reset()
    assert len(execute.plans) == 0


def test_plan_reads_and_writes_are_the_task_ranges(stream):
    """The one place a task's ranges are known: what it reads, what it writes."""
    x = np.ones(4, F32)
    add = Call("Add", [x, x], (4,))
    assert add(stream) == 0
    (made,) = execute.plans._plans.values()
    assert isinstance(made, plan.Plan)
    assert made.reads == ((add.in_ptrs[0], 16), (add.in_ptrs[1], 16))
    assert made.writes == ((add.out_ptr, 16),)


def test_every_change_renews_a_stamp():
    """What the plan's check rests on: any assignment to a desc's fields, any attribute set, any buffer update,
    and each destruction, gives the object a stamp it never had."""
    import dataclasses

    from openacl.op import attr as _attr
    from openacl.runtime import buffers

    desc = _desc.get(acl.create_tensor_desc(0, [2], 2))
    seen = {desc.version}
    for item in dataclasses.fields(desc):
        if item.name != "version":
            setattr(desc, item.name, getattr(desc, item.name))  # even the same value
            assert desc.version not in seen
            seen.add(desc.version)
    handle = desc.handle
    acl.destroy_tensor_desc(handle)
    assert desc.version not in seen
    attr = _attr.get(acl.op.create_attr())
    before = attr.version
    assert acl.op.set_attr_int(attr.handle, "n", 1) == 0
    assert attr.version != before
    buffer = buffers.data_buffers.get(acl.create_data_buffer(0, 0))
    before = buffer.version
    assert acl.update_data_buffer(buffer.handle, 0, 0) == 0
    assert buffer.version != before
    before = buffer.version
    assert acl.destroy_data_buffer(buffer.handle) == 0
    assert buffer.version != before


def test_every_change_moves_the_epoch_on():
    """What lets a plan skip reading its stamps: each change (an attribute set, a buffer update, a desc field, a
    destruction) writes a new ``versions.epoch``, a value the epoch never had."""
    from openacl.runtime import versions

    epochs = [versions.epoch]
    attr = acl.op.create_attr()
    desc = acl.create_tensor_desc(0, [2], 2)
    buffer = acl.create_data_buffer(0, 0)
    for change in (
        lambda: acl.op.set_attr_int(attr, "n", 1),
        lambda: acl.op.destroy_attr(attr),
        lambda: acl.set_tensor_shape(desc, [3]),
        lambda: acl.destroy_tensor_desc(desc),
        lambda: acl.update_data_buffer(buffer, 0, 0),
        lambda: acl.destroy_data_buffer(buffer),
    ):
        change()
        assert versions.epoch not in epochs
        epochs.append(versions.epoch)


def test_regression_a_change_elsewhere_keeps_the_plan_and_a_later_change_behind_it_is_seen(stream):
    """The plan skips reading its stamps while the epoch is the one it last found them equal at: a change to an
    object it does not hold moves the epoch (stamps read again, all equal: the plan is kept), and a change to one it
    holds after that is still seen (a plan that kept its first epoch, or took the new one before its stamps were
    found equal, would run with the old desc)."""
    x = np.arange(6, dtype=F32)
    reduce = Call("ReduceSumD", [x.reshape(2, 3)], (2,), {"axes": ("list_int", [1])}, out_size=12)
    assert reduce(stream) == 0 and reduce(stream) == 0
    other = acl.op.create_attr()
    assert acl.op.set_attr_int(other, "n", 1) == 0  # not behind the plan: the epoch moves
    assert reduce(stream) == 0
    assert compiled.cache.statistics()["hits"] == 2 and len(execute.plans) == 1  # the plan was kept
    assert acl.set_tensor_shape(reduce.in_descs[0], [3, 2]) == 0
    assert acl.set_tensor_shape(reduce.out_desc, [3]) == 0
    assert reduce(stream) == 0
    np.testing.assert_array_equal(reduce.result(shape=(3,)), [1, 5, 9])
    acl.op.destroy_attr(other)


@pytest.mark.parametrize("other", [float, np.uint64, np.int64], ids=["float", "uint64", "int64"])
def test_a_handle_equal_to_a_planned_one_but_not_an_int_is_still_refused(stream, other):
    """A plan is keyed by its handles, and a float or a numpy integer equal to a handle finds that key: the call
    is refused all the same (``handle_list``'s TypeError), and the plan stays."""
    x = np.arange(6, dtype=F32).reshape(2, 3)
    add = Call("Add", [x, x], (2, 3))
    assert add(stream) == 0
    with pytest.raises(TypeError, match="not an int"):
        acl.op.execute_v2("Add", add.in_descs, [other(add.ins[0]), add.ins[1]], [add.out_desc], add.outs, add.attr,
                          stream)  # fmt: skip
    with pytest.raises(TypeError, match="not an int"):
        acl.op.execute_v2("Add", add.in_descs, add.ins, [other(add.out_desc)], add.outs, add.attr, stream)
    assert add(stream) == 0
    assert compiled.cache.statistics()["hits"] == 1 and len(execute.plans) == 1


def test_a_bool_or_int_subclass_handle_takes_the_whole_way_and_runs(stream):
    """What ``handle_list`` accepts and converts (an int subclass) is not a plain handle: the call goes the whole
    way, finds the plan there, and runs."""

    class Handle(int):
        pass

    x = np.arange(6, dtype=F32).reshape(2, 3)
    add = Call("Add", [x, x], (2, 3))
    assert add(stream) == 0
    ret = acl.op.execute_v2("Add", add.in_descs, [Handle(h) for h in add.ins], [add.out_desc], add.outs, add.attr,
                            stream)  # fmt: skip
    assert ret == 0 and acl.rt.synchronize_stream(stream) == 0
    assert compiled.cache.statistics()["hits"] == 1
    np.testing.assert_array_equal(add.result(), x + x)


def _spy_on_runs(monkeypatch) -> list[tuple[bool, str]]:
    """Each onnxruntime run of an operator: whether the scheduling lock was held, and on which thread."""
    runs: list[tuple[bool, str]] = []
    real = compiled.CompiledOp.run_into

    def run_into(self, key):
        runs.append((LOCK.locked(), threading.current_thread().name))
        return real(self, key)

    monkeypatch.setattr(compiled.CompiledOp, "run_into", run_into)
    return runs


def test_regression_a_repeat_runs_onnxruntime_with_no_lock_of_the_runtime_held(stream, monkeypatch):
    """A repeated small call runs on the calling thread, straight from the stream, with the scheduling lock free:
    onnxruntime's run gives the GIL up and comes back through Python code, where a garbage-collector finalizer or
    a signal handler (user code) may run; under the lock, one that calls the runtime would wait for itself."""
    runs = _spy_on_runs(monkeypatch)
    here = threading.current_thread().name
    x = np.arange(16, dtype=F32)
    tiny = Call("Add", [x, x], (16,))
    assert tiny(stream) == 0 and tiny(stream) == 0 and tiny(stream) == 0
    assert runs == [(False, here)] * 3
    np.testing.assert_array_equal(tiny.result(), x + x)


def test_no_repeat_runs_here_where_operators_are_never_run_here(stream, monkeypatch):
    """``OPENACL_OP_INLINE_BYTES=0`` (every operator on an engine thread) holds for repeats too."""
    monkeypatch.setattr(execute, "INLINE_LIMIT", 0)
    runs = _spy_on_runs(monkeypatch)
    x = np.arange(16, dtype=F32)
    tiny = Call("Add", [x, x], (16,))
    assert tiny(stream) == 0 and tiny(stream) == 0
    assert [held for held, _ in runs] == [False, False]
    assert all(name.startswith("openacl-engine") for _, name in runs)


def test_a_repeat_in_place_over_an_input_copies_its_output(stream, monkeypatch):
    """An output over an input is copied after the run (``_run``), on the calling thread as any small repeat."""
    runs = _spy_on_runs(monkeypatch)
    x = np.arange(16, dtype=F32)
    ptr = to_device(x)
    desc = desc_for(x)
    buf = acl.create_data_buffer(ptr, x.nbytes)
    attr = make_attr({})
    for _ in range(2):
        assert acl.op.execute_v2("Add", [desc, desc], [buf, buf], [desc], [buf], attr, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
    assert runs == [(False, threading.current_thread().name)] * 2
    np.testing.assert_array_equal(from_device(ptr, F32, (16,)), x * 4)


def test_regression_a_finalizer_calling_the_runtime_during_small_operators_is_answered(ctx, stream):
    """The garbage collector runs a cycle's ``__del__`` (user code) at whatever allocation crosses its threshold;
    during a loop of small operators that must not be inside a hold of the scheduling lock, where a finalizer
    that calls the runtime would wait for its own thread (two seconds, then 200001)."""
    import gc

    other, _ = acl.rt.create_stream()
    answers: list[int] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            answers.append(acl.rt.stream_query(other)[1])

    x = np.arange(16, dtype=F32)
    tiny = Call("Add", [x, x], (16,))
    threshold = gc.get_threshold()
    gc.set_threshold(50)  # collections every few calls, wherever the allocation that crosses it happens
    try:
        for _ in range(300):
            Cycle()
            assert tiny(stream) == 0
    finally:
        gc.set_threshold(*threshold)
    gc.collect()
    assert acl.rt.destroy_stream(other) == 0
    assert answers and set(answers) == {0}


def test_an_onnxruntime_without_a_c_entry_runs_operators_through_its_public_method(stream, monkeypatch):
    """``onnxrt.bound_entry`` None (an onnxruntime whose session has no ``_sess``): ``run_with_iobinding``."""
    from openacl import onnxrt

    monkeypatch.setattr(onnxrt, "bound_entry", lambda session: None)
    x = np.arange(16, dtype=F32)
    add = Call("Add", [x, x], (16,))
    assert add(stream) == 0 and add(stream) == 0
    np.testing.assert_array_equal(add.result(), x + x)
    (entry,) = compiled.cache._entries.values()
    assert entry._run_bound is None


def test_regression_a_read_only_registration_over_a_planned_host_output_is_refused(stream):
    """An output in host memory (placement host), planned; then a read-only registration of the same bytes.
    The whole way refuses the write (100000), and the plan wrote anyway: an added region did not move the
    table's generation. A read-only one does now."""
    x = np.arange(6, dtype=F32)
    ptr = to_device(x)
    ins = [acl.create_data_buffer(ptr, x.nbytes)] * 2
    out = np.zeros(6, F32)
    out_ptr = memory.array_address(out)
    out_desc = desc_for(out)
    assert acl.set_tensor_place_ment(out_desc, 1) == 0  # ACL_MEMTYPE_HOST
    outs = [acl.create_data_buffer(out_ptr, out.nbytes)]
    in_descs = [desc_for(x), desc_for(x)]
    attr = make_attr({})

    def call() -> int:
        ret = acl.op.execute_v2("Add", in_descs, ins, [out_desc], outs, attr, stream)
        acl.rt.synchronize_stream(stream)
        return ret

    assert call() == 0 and call() == 0
    np.testing.assert_array_equal(out, x + x)
    frozen = out.view()
    frozen.flags.writeable = False
    memory.array_address(frozen)
    out[:] = 0
    assert call() == INVALID
    assert not out.any()


def test_a_call_over_a_loan_leaves_no_plan(stream):
    """An operator reading a dump chunk's memory (in the callback, during the loan) runs, but leaves no plan: a
    loan's end does not move the memory generation (``memory.AddressSpace``), so a kept plan could outlive the
    chunk's bytes."""
    x = np.arange(6, dtype=F32).reshape(2, 3)
    add = Call("Add", [x, x], (2, 3))
    part = np.zeros(sink.ChunkTarget.DIRECT_BYTES, np.uint8)
    part[: x.nbytes] = np.frombuffer(x.tobytes(), np.uint8)
    results = []

    host = desc_for(x)
    assert acl.set_tensor_place_ment(host, ACL_MEMTYPE_HOST) == 0

    def callback(chunk: dict) -> int:
        loaned = acl.create_data_buffer(chunk["data_buf"], x.nbytes)
        args = (add.op_type, [host, add.in_descs[1]], [loaned, add.ins[1]], [add.out_desc], add.outs, add.attr, stream)
        results.extend(acl.op.execute_v2(*args) for _ in range(2))
        results.append(acl.rt.synchronize_stream(stream))
        results.append(len(execute.plans))
        acl.destroy_data_buffer(loaned)
        return 0

    sink.ChunkTarget().write(sink.OutgoingFile("/dump", "file", [memoryview(part)], part.nbytes, callback=callback))
    assert results == [0, 0, 0, 0]
    np.testing.assert_array_equal(add.result(), x + x)


class _LoudHandle:
    """Not a handle: equal to nothing, and it notes every hash taken of it."""

    hashed = 0

    def __hash__(self) -> int:
        type(self).hashed += 1
        return 0


def test_regression_the_execute_entry_hashed_handles_that_are_not_ints(stream):
    """The execute_v2 entry built its plan key from the lists before it tested their handles: an unhashable
    one raised TypeError("unhashable type") out of the entry, and another object's own ``__hash__`` ran. Every
    handle is tested first now; such a call gets the wrapper's answer, as before the entry."""
    x = np.arange(6, dtype=F32).reshape(2, 3)
    add = Call("Add", [x, x], (2, 3))
    assert add(stream) == 0  # a plan, so that a key lookup could find something
    for odd in ([1, 8], {1, 2}, _LoudHandle()):
        args = ("Add", add.in_descs, [add.ins[0], odd], [add.out_desc], add.outs, add.attr, stream)
        with pytest.raises(TypeError) as entered:
            acl.op.execute_v2(*args)
        with pytest.raises(TypeError) as wrapped:
            acl.op.execute_v2.__wrapped__(*args)
        assert str(entered.value) == str(wrapped.value) and "unhashable" not in str(entered.value)
    assert _LoudHandle.hashed == 0


def test_regression_under_check_a_planned_call_on_a_destroyed_stream_was_reported_twice(ctx, checking):
    """The execute_v2 entry resolved a planned call's stream under check, which reports a destroyed one, then
    handed the refused call on to the whole way, which reported it again (count 2). Under check every call goes
    the whole way now: one resolve, one finding."""
    x = np.ones(4, F32)
    add = Call("Add", [x, x], (4,))
    stream, _ = acl.rt.create_stream()
    assert add(stream) == 0 and add(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert add(stream) == INVALID
    stale = [f for f in checker.findings() if "stream" in f.what and "destroyed" in f.what]
    assert [f.count for f in stale] == [1]
