"""Build the small ONNX model openacl ships (``src/openacl/data/tinynet.onnx``) and its larger variants.

A real convolutional classifier in miniature: two convolutions with activations, pooling, a matmul head and a
softmax, so a dump has real intermediate tensors of several shapes. Node names follow PyTorch's exporter
(``/stem/conv/Conv``) so file-name sanitising is exercised. Weights come from a fixed seed: the file is
reproducible byte for byte.

    python scripts/make_demo_model.py            # rewrite the shipped model
    python scripts/make_demo_model.py --size 256 --out /tmp/big.onnx   # a heavier variant (benchmarks)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHIPPED = Path(__file__).resolve().parents[1] / "src" / "openacl" / "data" / "tinynet.onnx"


def build_model(
    size: int = 64, channels: tuple[int, int] = (8, 16), classes: int = 10, seed: int = 0
) -> onnx.ModelProto:
    """A ``1x3xSIZExSIZE`` float32 image classifier; ``size`` and ``channels`` scale its cost."""
    rng = np.random.default_rng(seed)
    c1, c2 = channels

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(data, name)

    initializers = [
        weight("stem.conv.weight", c1, 3, 3, 3),
        weight("stem.conv.bias", c1),
        weight("block.conv.weight", c2, c1, 3, 3),
        weight("block.conv.bias", c2),
        weight("head.fc.weight", c2, classes),
        weight("head.fc.bias", classes),
    ]
    nodes = [
        helper.make_node(
            "Conv",
            ["input", "stem.conv.weight", "stem.conv.bias"],
            ["/stem/conv/Conv_output_0"],
            name="/stem/conv/Conv",
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("Relu", ["/stem/conv/Conv_output_0"], ["/stem/act/Relu_output_0"], name="/stem/act/Relu"),
        helper.make_node(
            "Conv",
            ["/stem/act/Relu_output_0", "block.conv.weight", "block.conv.bias"],
            ["/block/conv/Conv_output_0"],
            name="/block/conv/Conv",
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
            strides=[2, 2],
        ),
        helper.make_node(
            "Sigmoid", ["/block/conv/Conv_output_0"], ["/block/act/Sigmoid_output_0"], name="/block/act/Sigmoid"
        ),
        helper.make_node(
            "Mul",
            ["/block/conv/Conv_output_0", "/block/act/Sigmoid_output_0"],
            ["/block/act/Mul_output_0"],
            name="/block/act/Mul",
        ),
        helper.make_node(
            "MaxPool",
            ["/block/act/Mul_output_0"],
            ["/pool/MaxPool_output_0"],
            name="/pool/MaxPool",
            kernel_shape=[2, 2],
            strides=[2, 2],
        ),
        helper.make_node(
            "GlobalAveragePool",
            ["/pool/MaxPool_output_0"],
            ["/gap/GlobalAveragePool_output_0"],
            name="/gap/GlobalAveragePool",
        ),
        helper.make_node(
            "Flatten",
            ["/gap/GlobalAveragePool_output_0"],
            ["/flatten/Flatten_output_0"],
            name="/flatten/Flatten",
            axis=1,
        ),
        helper.make_node(
            "MatMul",
            ["/flatten/Flatten_output_0", "head.fc.weight"],
            ["/head/fc/MatMul_output_0"],
            name="/head/fc/MatMul",
        ),
        helper.make_node("Add", ["/head/fc/MatMul_output_0", "head.fc.bias"], ["logits"], name="/head/fc/Add"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="/head/Softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tinynet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
        [
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, classes]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes]),
        ],
        initializer=initializers,
    )
    model = helper.make_model(graph, producer_name="openacl", opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model, full_check=True)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=64, help="input height and width (default 64)")
    parser.add_argument("--channels", type=int, nargs=2, default=(8, 16), metavar=("C1", "C2"))
    parser.add_argument("--out", type=Path, default=SHIPPED)
    args = parser.parse_args()
    model = build_model(args.size, tuple(args.channels))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
