"""GE-PY style: private attributes through attr_scope, and both ONNX and GE proto text dumps."""

from ge.es.all import Add, Sigmoid
from ge.es.graph_builder import GraphBuilder, attr_scope
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def main():
    builder = GraphBuilder("SigmoidAttrGraph")
    x = builder.create_input(index=0, name="x", data_type=DataType.DT_FLOAT, shape=[3])
    with attr_scope({"_stream_label": "s0"}):
        left = Sigmoid(x)
    with attr_scope({"_stream_label": "s1", "node_rank": 2, "fast": True}):
        right = Sigmoid(x)
    builder.set_graph_output(Add(left, right), 0)
    graph = builder.build_and_reset()
    graph.dump_to_file(format=DumpFormat.kOnnx, suffix="sigmoid")
    graph.dump_to_file(format=DumpFormat.kTxt, suffix="sigmoid")
    node = graph.find_node_by_name(right.name)
    print(f"[Info] {node.name}: _stream_label={node.get_attr('_stream_label')} node_rank={node.get_attr('node_rank')}")
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        inputs = [Tensor([-2.0, 0.0, 3.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [3])]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
