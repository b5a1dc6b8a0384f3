"""GE-PY style: Split along dim 1 into y_num=4 outputs, each a graph output."""

import numpy as np
from ge.es.all import Split
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def main():
    builder = GraphBuilder("SplitGraph")
    x = builder.create_input(index=0, name="x", data_type=DataType.DT_FLOAT, shape=[2, 8, 3])
    pieces = Split(1, x, 4, num_split=4)
    for i, piece in enumerate(pieces):
        builder.set_graph_output(piece, i)
    graph = builder.build_and_reset()
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(3, graph) == 0
        data = np.arange(48, dtype=np.float32) / 4
        inputs = [Tensor(data.tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, shape=[2, 8, 3])]
        for idx, tensor in enumerate(session.run_graph(3, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
