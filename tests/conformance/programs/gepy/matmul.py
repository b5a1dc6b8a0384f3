"""GE-PY style: MatMul of two int32 inputs with the transpose_x1 attribute and no bias."""

import numpy as np
from ge.es.all import MatMul
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def main():
    builder = GraphBuilder("MatMulGraph")
    a = builder.create_input(index=0, name="a", data_type=DataType.DT_INT32, shape=[2, 3])
    b = builder.create_input(index=1, name="b", data_type=DataType.DT_INT32, shape=[2, 4])
    builder.set_graph_output(MatMul(a, b, None, transpose_x1=True, transpose_x2=False), 0)
    graph = builder.build_and_reset()
    graph.dump_to_file(format=DumpFormat.kOnnx, suffix="matmul")
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        a_data = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int32)
        b_data = np.array([[1, 0, 2, -1], [3, 1, 0, 2]], dtype=np.int32)
        inputs = [
            Tensor(a_data.flatten().tolist(), None, DataType.DT_INT32, Format.FORMAT_ND, [2, 3]),
            Tensor(b_data.flatten().tolist(), None, DataType.DT_INT32, Format.FORMAT_ND, [2, 4]),
        ]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx}详情：{tensor}")
    finally:
        GeApi.ge_finalize()


main()
