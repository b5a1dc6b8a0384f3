"""Device placement and ``run_graph_with_stream_async`` on openacl's own ``acl`` streams."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from ge.allocator import Allocator, MemBlock
from ge.error import GeError
from ge.es.all import Relu
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format, Placement
from ge.session import Session

import acl
from openacl.runtime import device as rt_device
from openacl.runtime import memory
from openacl.runtime.sched.task import work_task


@pytest.fixture
def device():
    assert acl.rt.set_device(0) == 0
    yield
    acl.rt.reset_device(0)


def relu_session(shape=(4,)):
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    b = GraphBuilder("relu")
    b.set_graph_output(Relu(b.create_input(0, data_type=DataType.DT_FLOAT, shape=list(shape) if shape else None)), 0)
    session = Session()
    assert session.add_graph(1, b.build_and_reset()) == 0
    return session


def device_tensor(values):
    return Tensor(list(values), None, DataType.DT_FLOAT, Format.FORMAT_ND, [len(values)], Placement.PLACEMENT_DEVICE)


def test_to_device_and_back(device):
    t = device_tensor([1.0, -2.0])
    assert t.get_placement() is Placement.PLACEMENT_DEVICE and t.get_shape() == [2]
    with pytest.raises(ValueError, match="on the device"):
        t.get_data()
    with pytest.raises(ValueError, match="already on the device"):
        t.to_device()
    assert t.to_host() is t and t.get_data() == [1.0, -2.0]


def test_to_device_without_a_context_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="current context"):
        device_tensor([1.0])


def test_outputs_are_written_in_stream_order(device):
    session = relu_session()
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    x = device_tensor([0.0, 0.0, 0.0, 0.0])
    host = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    # a copy queued before the run, on the same stream: the run must see it
    src, ret = acl.rt.malloc_host(16)
    assert ret == 0
    memory.view_array(src, (4,), np.dtype(np.float32))[...] = host
    assert acl.rt.memcpy_async(x._device.addr, 16, src, 16, 1, stream) == 0  # host to device
    [out] = session.run_graph_with_stream_async(1, stream, [x])
    assert out.get_placement() is Placement.PLACEMENT_DEVICE and out.get_shape() == [4]
    assert acl.rt.synchronize_stream(stream) == 0
    assert out.to_host().get_data() == [0.0, 2.0, 0.0, 4.0]
    acl.rt.free_host(src)
    acl.rt.destroy_stream(stream)


class CountingAllocator(Allocator):
    def __init__(self):
        self.live = {}

    def malloc(self, size):
        addr, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        self.live[addr] = size
        return MemBlock(addr, size)

    def free(self, block):
        del self.live[block.addr]
        acl.rt.free(block.addr)


def test_registered_allocator_owns_output_memory(device):
    session = relu_session()
    stream, _ = acl.rt.create_stream()
    pool = CountingAllocator()
    assert session.register_external_allocator(stream, pool) is None
    [out] = session.run_graph_with_stream_async(1, stream, [device_tensor([1.0, -1.0, 2.0, -2.0])])
    assert list(pool.live.values()) == [16]
    acl.rt.synchronize_stream(stream)
    assert out.to_host().get_data() == [1.0, 0.0, 2.0, 0.0]
    del out
    assert pool.live == {}
    session.unregister_external_allocator(stream)
    [_again] = session.run_graph_with_stream_async(1, stream, [device_tensor([1.0, 1.0, 1.0, 1.0])])
    assert pool.live == {}  # unregistered: the device's memory again
    acl.rt.synchronize_stream(stream)
    acl.rt.destroy_stream(stream)


def test_zero_dim_inputs_take_the_first_runs_shape_on_streams_too(device):
    session = relu_session(shape=None)  # 0-dim Data: the first run fixes the shape
    stream, _ = acl.rt.create_stream()
    session.run_graph_with_stream_async(1, stream, [device_tensor([1.0, 2.0])])
    assert acl.rt.synchronize_stream(stream) == 0
    with pytest.raises(GeError, match=r"RunGraphWithStreamAsync failed; graph_id=1, stream=0x"):
        session.run_graph_with_stream_async(1, stream, [device_tensor([1.0, 2.0, 3.0])])
    acl.rt.destroy_stream(stream)


def test_argument_errors(device):
    session = relu_session()
    with pytest.raises(TypeError, match="Stream"):
        session.run_graph_with_stream_async(1, "s", [])
    with pytest.raises(TypeError, match="allocator"):
        session.register_external_allocator(0, object())
    with pytest.raises(GeError, match="RegisterExternalAllocator failed"):
        session.register_external_allocator(0xDEAD, CountingAllocator())


# ----- outputs dropped before their run finished -----


class EventAllocator(Allocator):
    """The issue's allocator: ``free`` records an event on the stream (so a block is reused only after the work
    queued so far), then frees. It runs from a helper thread it waits for at most a few seconds, so that a
    ``free`` called under a runtime lock fails the test instead of deadlocking it."""

    def __init__(self, stream, event):
        self.stream, self.event, self.freed = stream, event, []

    def malloc(self, size):
        addr, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        return MemBlock(addr, size)

    def free(self, block):
        codes = []
        helper = threading.Thread(
            target=lambda: codes.append((acl.rt.record_event(self.event, self.stream), acl.rt.free(block.addr))),
            daemon=True,
        )
        helper.start()
        helper.join(5)
        self.freed.append(codes[0] if codes else "stuck: free() ran under a runtime lock")


def test_regression_outputs_dropped_before_their_run_finished_deadlocked_an_allocator_that_records_an_event(device):
    session = relu_session()
    stream, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    pool = EventAllocator(stream, event)
    session.register_external_allocator(stream, pool)
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))  # every run below stays queued
    x = device_tensor([1.0, -1.0, 2.0, -2.0])
    for _ in range(4):
        outs = session.run_graph_with_stream_async(1, stream, [x])  # drops the previous outputs: queued runs hold them
    del outs
    gate.set()
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == 0
    for _ in range(50):
        if len(pool.freed) == 4:
            break
        gc.collect()
        threading.Event().wait(0.1)
    assert pool.freed == [(0, 0)] * 4
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == 0  # the records free() queued
    acl.rt.destroy_event(event)
    acl.rt.destroy_stream(stream)


def test_regression_a_failed_run_let_go_of_its_outputs_under_lock(device):
    """The run fails on the stream (its input's memory was freed first); its outputs, dropped by the program,
    go back to the allocator once the failure is reported, outside LOCK."""
    session = relu_session()
    stream, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    pool = EventAllocator(stream, event)
    session.register_external_allocator(stream, pool)
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))
    x = device_tensor([1.0, -1.0, 2.0, -2.0])
    outs = session.run_graph_with_stream_async(1, stream, [x])
    assert acl.rt.free(x._device.addr) == 0  # the run reads it when the stream reaches it: the run fails
    del outs
    gate.set()
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) not in (0, 507046)  # the run's failure
    for _ in range(50):
        if pool.freed:
            break
        gc.collect()
        threading.Event().wait(0.1)
    assert pool.freed == [(0, 0)]
    assert acl.rt.synchronize_stream_with_timeout(stream, 30_000) == 0
    x._device = None  # its block is freed already
    acl.rt.destroy_event(event)
    acl.rt.destroy_stream(stream)


ISSUE_PROGRAM = r"""
import openacl

openacl.install()  # what ``openacl run`` does before the program
import acl
from ge.allocator import Allocator, MemBlock
from ge.es.all import Relu
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format, Placement
from ge.session import Session

acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
event, _ = acl.rt.create_event()


class EventAllocator(Allocator):
    def malloc(self, size):
        addr, _ = acl.rt.malloc(size, 0)
        return MemBlock(addr, size)

    def free(self, block):
        acl.rt.record_event(event, stream)  # the block is reused once the stream is past this point
        acl.rt.free(block.addr)


GeApi.ge_initialize({"ge.exec.deviceId": "0"})
b = GraphBuilder("relu")
b.set_graph_output(Relu(b.create_input(0, data_type=DataType.DT_FLOAT, shape=[1024])), 0)
session = Session()
session.add_graph(1, b.build_and_reset())
session.register_external_allocator(stream, EventAllocator())
x = Tensor([1.0] * 1024, None, DataType.DT_FLOAT, Format.FORMAT_ND, [1024], Placement.PLACEMENT_DEVICE)
for _ in range(200):
    outs = session.run_graph_with_stream_async(1, stream, [x])
print("synchronized", acl.rt.synchronize_stream_with_timeout(stream, 20_000), flush=True)
del outs
print("synchronized", acl.rt.synchronize_stream_with_timeout(stream, 20_000), flush=True)
GeApi.ge_finalize()
"""


@pytest.mark.subprocess
def test_regression_gepy_loop_reassigning_outputs_with_an_event_recording_allocator_deadlocked():
    """The issue's second program: every runtime call deadlocked, synchronize_stream_with_timeout included."""
    env = dict(os.environ, ASCEND_GLOBAL_LOG_LEVEL="3")
    try:
        done = subprocess.run(
            [sys.executable, "-c", ISSUE_PROGRAM], capture_output=True, text=True, timeout=90, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the program deadlocked")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["synchronized 0", "synchronized 0"], done.stdout + done.stderr[-2000:]
