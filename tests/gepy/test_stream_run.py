"""Device placement and ``run_graph_with_stream_async`` on openacl's own ``acl`` streams."""

from __future__ import annotations

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
from openacl.runtime import memory


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
