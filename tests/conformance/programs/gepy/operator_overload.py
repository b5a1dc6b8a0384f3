"""GE-PY style: a float32 input plus two int64 inputs through TensorHolder's `+` (GE promotes to float)."""

from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def build():
    builder = GraphBuilder("OverloadGraph")
    a = builder.create_input(index=0, name="a", data_type=DataType.DT_FLOAT, shape=[2, 3])
    b = builder.create_input(index=1, name="b", data_type=DataType.DT_INT64, shape=[2, 3])
    c = builder.create_input(index=2, name="c", data_type=DataType.DT_INT64, shape=[2, 3])
    builder.set_graph_output(a + b + c, 0)
    return builder.build_and_reset()


def main():
    graph = build()
    graph.dump_to_file(format=DumpFormat.kOnnx, suffix="overload")
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(7, graph) == 0
        a = Tensor([0.5, 1.5, 2.5, 3.5, 4.5, 5.5], None, DataType.DT_FLOAT, Format.FORMAT_ND, shape=[2, 3])
        b = Tensor([1.9, 2.0, 3.0, 4.0, 5.0, 6.0], None, DataType.DT_INT64, Format.FORMAT_ND, shape=[2, 3])
        c = Tensor([10, 20, 30, 40, 50, 60], None, DataType.DT_INT64, Format.FORMAT_ND, shape=[2, 3])
        for idx, tensor in enumerate(session.run_graph(7, [a, b, c]), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
