"""GE-PY style: BatchNorm in inference mode on an NCHW input; optional mean/variance given as graph inputs."""

import numpy as np
from ge.es.all import BatchNorm
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def main():
    builder = GraphBuilder("BatchNormGraph")
    x = builder.create_input(
        index=0, name="x", data_type=DataType.DT_FLOAT, format=Format.FORMAT_NCHW, shape=[2, 3, 1, 2]
    )
    mean = builder.create_input(index=1, name="mean", data_type=DataType.DT_FLOAT, shape=[3])
    variance = builder.create_input(index=2, name="variance", data_type=DataType.DT_FLOAT, shape=[3])
    scale = builder.create_const_float([1.0, 2.0, 0.5], shape=[3])
    offset = builder.create_const_float([0.0, 1.0, -1.0], shape=[3])
    out = BatchNorm(x, scale, offset, mean, variance, epsilon=1e-3, data_format="NCHW", is_training=False)
    builder.set_graph_output(out.y, 0)
    graph = builder.build_and_reset()
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        x_data = np.arange(12, dtype=np.float32)
        inputs = [
            Tensor(x_data.tolist(), None, DataType.DT_FLOAT, Format.FORMAT_NCHW, [2, 3, 1, 2]),
            Tensor([1.0, 5.0, 8.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [3]),
            Tensor([0.5, 2.0, 4.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [3]),
        ]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()


main()
