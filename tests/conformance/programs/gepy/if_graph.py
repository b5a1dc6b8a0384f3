"""GE-PY style: If with then/else subgraphs built by their own GraphBuilders, int64 consts plus float inputs.

Graph 1 leaves the If unwired (GE builds an empty NetOutput: no outputs); graph 2 returns its output, run
with cond 1 and 0.
"""

from ge.es.all import If
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def branch(name, const_value, const_first):
    builder = GraphBuilder(name)
    x = builder.create_input(index=0, name=f"{name}_x", data_type=DataType.DT_FLOAT, shape=[3])
    k = builder.create_const_int64(const_value)
    builder.set_graph_output(k + x if const_first else x * k, 0)
    return builder.build_and_reset()


def build(wired):
    builder = GraphBuilder("IfGraph")
    x = builder.create_input(index=0, name="x", data_type=DataType.DT_FLOAT, shape=[3])
    cond = builder.create_input(index=1, name="cond", data_type=DataType.DT_INT32, shape=[])
    result = If(cond, [x], 1, branch("then_branch", 5, True), branch("else_branch", 3, False))
    if wired:
        builder.set_graph_output(result[0], 0)
    return builder.build_and_reset()


def main():
    unwired, wired = build(False), build(True)
    unwired.dump_to_file(format=DumpFormat.kOnnx, suffix="if_graph")
    print(f"[Info] subgraphs: {[g.name for g in wired.get_all_subgraphs()]}")
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, unwired) == 0
        assert session.add_graph(2, wired) == 0
        x = Tensor([1.0, 2.0, 4.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [3])
        for graph_id, cond in ((1, 1), (2, 1), (2, 0)):
            flag = Tensor([cond], None, DataType.DT_INT32, Format.FORMAT_ND, [])
            outputs = session.run_graph(graph_id, [x, flag])
            print(f"[Info] graph {graph_id} cond {cond}: {len(outputs)} output(s)")
            for idx, tensor in enumerate(outputs, start=1):
                print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
