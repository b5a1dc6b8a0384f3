"""A routing sub-graph in the style of GE-PY's transformer example: 0-dim inputs, TopK twice, scatter, masked fill."""

import sys

import numpy as np
from ge.es import GraphBuilder
from ge.es.all import (
    BroadcastTo,
    Cast,
    Fill,
    GatherElements,
    Identity,
    LogicalNot,
    MaskedFill,
    MatMul,
    RealDiv,
    ReduceSum,
    Reshape,
    ScatterElements,
    Shape,
    Sigmoid,
    TopKV2,
    Transpose,
    Unsqueeze,
    ZerosLike,
)
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

TOKENS, HIDDEN, EXPERTS = 12, 16, 8


def build():
    b = GraphBuilder("RouterGraph")
    tokens, weights, bias = b.create_inputs(3)
    flat = Reshape(tokens, [-1, HIDDEN])
    logits = MatMul(flat, Transpose(weights, b.create_vector_int64([1, 0])), None)
    scores = Sigmoid(logits)
    biased = Reshape(scores, [-1, EXPERTS]) + Cast(Unsqueeze(bias, axes=[0]), dst_type=DataType.DT_FLOAT)
    group_score = ReduceSum(TopKV2(biased, 2).values, [-1])
    top_groups = Cast(TopKV2(group_score, 3, sorted=False).indices, dst_type=DataType.DT_INT64)
    mask = ScatterElements(ZerosLike(group_score), top_groups, Fill(Shape(top_groups), b.create_scalar_float(1.0)))
    keep = Identity(BroadcastTo(Unsqueeze(mask, axes=[-1]), [TOKENS, EXPERTS]))
    masked = MaskedFill(biased, LogicalNot(Cast(keep, dst_type=DataType.DT_BOOL)), b.create_scalar_float(0.0))
    chosen = Cast(TopKV2(masked, 2).indices, dst_type=DataType.DT_INT64)
    weights_out = RealDiv(GatherElements(scores, chosen, dim=1), 2.0)
    b.set_graph_output(chosen, 0)
    b.set_graph_output(weights_out + b.create_scalar_float(0.5), 1)
    return b.build_and_reset()


def main():
    graph = build()
    graph.dump_to_file(format=DumpFormat.kOnnx, suffix="router")
    if GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}) != 0:
        return 1
    try:
        session = Session()
        assert session.add_graph(1, graph) == 0
        rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
        tokens = rng.standard_normal((3, 4, HIDDEN)).astype(np.float32)
        weights = rng.standard_normal((EXPERTS, HIDDEN)).astype(np.float32)
        bias = rng.standard_normal(EXPERTS).astype(np.float32)
        np.save("inputs.npy", {"tokens": tokens, "weights": weights, "bias": bias}, allow_pickle=True)
        inputs = [
            Tensor(tokens.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [3, 4, HIDDEN]),
            Tensor(weights.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [EXPERTS, HIDDEN]),
            Tensor(bias.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [EXPERTS]),
        ]
        for idx, tensor in enumerate(session.run_graph(1, inputs), start=1):
            print(f"Tensor{idx} details: {tensor}")
    finally:
        GeApi.ge_finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
