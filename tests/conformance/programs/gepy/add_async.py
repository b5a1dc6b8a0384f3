"""GE-PY style: `a + b + c` run on an acl stream with device-placed inputs, first with GE's default output
allocator, then with a pooling Allocator over acl.rt.malloc registered for the stream."""

from ge.allocator import Allocator, MemBlock
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format, Placement
from ge.session import Session

import acl

DEVICE, GRAPH = 0, 5


class PoolAllocator(Allocator):
    """Keeps freed blocks by size and hands them out again."""

    def __init__(self):
        self.free_blocks = {}
        self.requests = 0

    def malloc(self, size):
        self.requests += 1
        pool = self.free_blocks.get(size)
        if pool:
            addr = pool.pop()
            print(f"[Pool] reuse {size} B")
        else:
            addr, ret = acl.rt.malloc(size, 2)
            assert ret == 0, ret
            print(f"[Pool] new {size} B")
        return MemBlock(addr, size)

    def free(self, block):
        self.free_blocks.setdefault(block.size, []).append(block.addr)
        print(f"[Pool] back {block.size} B")

    def release(self):
        for addrs in self.free_blocks.values():
            for addr in addrs:
                assert acl.rt.free(addr) == 0
        self.free_blocks.clear()


def build():
    builder = GraphBuilder("AsyncAddGraph")
    a = builder.create_input(index=0, name="a", data_type=DataType.DT_FLOAT, shape=[2, 3])
    b = builder.create_input(index=1, name="b", data_type=DataType.DT_INT64, shape=[2, 3])
    c = builder.create_input(index=2, name="c", data_type=DataType.DT_INT64, shape=[2, 3])
    builder.set_graph_output(a + b + c, 0)
    return builder.build_and_reset()


def device_inputs():
    return [
        Tensor(
            [0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
            None,
            DataType.DT_FLOAT,
            Format.FORMAT_ND,
            [2, 3],
            Placement.PLACEMENT_DEVICE,
        ),
        Tensor([1, 2, 3, 4, 5, 6], None, DataType.DT_INT64, Format.FORMAT_ND, [2, 3], Placement.PLACEMENT_DEVICE),
        Tensor([10, 10, 10, 20, 20, 20], None, DataType.DT_INT64, Format.FORMAT_ND, [2, 3], Placement.PLACEMENT_DEVICE),
    ]


def run_once(session, stream, label):
    outputs = session.run_graph_with_stream_async(GRAPH, stream, device_inputs())
    print(f"[Info] {label}: {len(outputs)} output(s), placement {int(outputs[0].get_placement())}")
    assert acl.rt.synchronize_stream(stream) == 0
    for idx, tensor in enumerate(outputs, start=1):
        print(f"Tensor{idx} details: {tensor.to_host()}")


def main():
    assert GeApi().ge_initialize({"ge.exec.deviceId": str(DEVICE), "ge.graphRunMode": "0"}) == 0
    assert acl.init() == 0
    assert acl.rt.set_device(DEVICE) == 0
    pool = PoolAllocator()
    try:
        session = Session()
        assert session.add_graph(GRAPH, build()) == 0
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        run_once(session, stream, "default allocator")
        session.register_external_allocator(stream, pool)
        run_once(session, stream, "pool allocator")
        run_once(session, stream, "pool allocator again")
        session.unregister_external_allocator(stream)
        print(f"[Info] the pool served {pool.requests} request(s)")
        session.remove_graph(GRAPH)
        assert acl.rt.destroy_stream(stream) == 0
    finally:
        pool.release()
        acl.rt.reset_device(DEVICE)
        acl.finalize()
        GeApi.ge_finalize()


main()
