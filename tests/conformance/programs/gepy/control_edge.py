"""GE-PY style: nodes made inside control_dependency_scope run after the listed tensors' producers."""

from ge.es.graph_builder import GraphBuilder, control_dependency_scope
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def build():
    builder = GraphBuilder("ControlEdgeGraph")
    first = builder.create_input(index=0, name="first", data_type=DataType.DT_FLOAT, shape=[2, 2])
    second = builder.create_input(index=1, name="second", data_type=DataType.DT_FLOAT, shape=[2, 2])
    with control_dependency_scope([first, second]):
        third = builder.create_input(index=2, name="third", data_type=DataType.DT_FLOAT, shape=[2, 2])
        total = first + third
    builder.set_graph_output(total, 0)
    graph = builder.build_and_reset()
    for name in ("third", total.name):
        node = graph.find_node_by_name(name)
        print(f"[Info] {node.name} runs after {[n.name for n in node.get_in_control_nodes()]}")
    return graph


def main():
    graph = build()
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        inputs = [
            Tensor([1.0, 2.0, 3.0, 4.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 2]),
            Tensor([9.0, 9.0, 9.0, 9.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 2]),
            Tensor([0.5, 0.5, 0.5, 0.5], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 2]),
        ]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
