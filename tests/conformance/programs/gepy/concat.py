"""GE-PY style: ConcatV2 over a dynamic input list of three tensors."""

import numpy as np
from ge.es.all import ConcatV2
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

ROWS = (3, 1, 2)


def main():
    builder = GraphBuilder("ConcatGraph")
    parts = [
        builder.create_input(index=i, name=f"part{i}", data_type=DataType.DT_FLOAT, shape=[rows, 2, 4])
        for i, rows in enumerate(ROWS)
    ]
    builder.set_graph_output(ConcatV2(parts, 0, N=len(parts)), 0)
    graph = builder.build_and_reset()
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        inputs = [
            Tensor(np.full(rows * 8, i + 1.0).tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, shape=[rows, 2, 4])
            for i, rows in enumerate(ROWS)
        ]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
