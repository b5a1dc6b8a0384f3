"""A small Conv/BN/Relu network built with onnx.helper, and "device" runs of it in lower precision.

The device run emulates an NPU that keeps activations in fp16 (or bf16) and accumulates in fp32: node by node,
each node runs in fp32 on inputs and weights rounded to the device dtype, and its outputs are rounded again.
Errors therefore propagate through the network as on a device, not just at each tensor.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

BF16 = np.dtype(ml_dtypes.bfloat16)


def conv_bn_relu_net(*, seed: int = 0, blocks: int = 4, size: int = 16, named: bool = True) -> onnx.ModelProto:
    """``blocks`` of Conv -> BatchNormalization -> Relu, then GlobalAveragePool, Flatten and Gemm.

    With ``named=False`` the nodes have no names, so openacl names them from their index (``Relu_5``).
    """
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    current, channels = "input", 3
    for b in range(blocks):
        out_ch = 8 * (1 + b // 2)
        w = (rng.standard_normal((out_ch, channels, 3, 3)) / np.sqrt(9 * channels)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{b}"))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(out_ch)).astype(np.float32), f"b{b}"))
        for p, values in (
            ("scale", 1 + 0.2 * rng.standard_normal(out_ch)),
            ("shift", 0.1 * rng.standard_normal(out_ch)),
            ("mean", 0.1 * rng.standard_normal(out_ch)),
            ("var", 0.5 + rng.random(out_ch)),
        ):
            inits.append(numpy_helper.from_array(values.astype(np.float32), f"{p}{b}"))
        stride = 2 if b % 2 else 1
        nodes.append(
            helper.make_node(
                "Conv",
                [current, f"w{b}", f"b{b}"],
                [f"conv{b}"],
                name=f"conv{b}" if named else "",
                pads=[1, 1, 1, 1],
                strides=[stride, stride],
            )
        )
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"conv{b}", f"scale{b}", f"shift{b}", f"mean{b}", f"var{b}"],
                [f"bn{b}"],
                name=f"bn{b}" if named else "",
            )
        )
        nodes.append(helper.make_node("Relu", [f"bn{b}"], [f"relu{b}"], name=f"relu{b}" if named else ""))
        current, channels = f"relu{b}", out_ch
    fc = (rng.standard_normal((10, channels)) / np.sqrt(channels)).astype(np.float32)
    inits.append(numpy_helper.from_array(fc, "fc_w"))
    inits.append(numpy_helper.from_array(np.zeros(10, np.float32), "fc_b"))
    nodes.append(helper.make_node("GlobalAveragePool", [current], ["gap"], name="gap" if named else ""))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat" if named else ""))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc" if named else "", transB=1))
    graph = helper.make_graph(
        nodes,
        "convnet",
        [helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def insert_identity_scale(model: onnx.ModelProto, after: str) -> onnx.ModelProto:
    """A copy of ``model`` with one unnamed ``Mul`` by 1.0 inserted after the node producing tensor ``after``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    graph = copy.graph
    index = next(i for i, n in enumerate(graph.node) if after in n.output)
    graph.initializer.append(numpy_helper.from_array(np.array(1.0, np.float32), "one"))
    for node in graph.node[index + 1 :]:
        node.input[:] = [f"{after}_x1" if name == after else name for name in node.input]
    graph.node.insert(index + 1, helper.make_node("Mul", [after, "one"], [f"{after}_x1"]))
    return copy


def _round(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return array.astype(dtype).astype(np.float32) if array.dtype == np.float32 else array


def device_run(
    model: onnx.ModelProto, x: np.ndarray, dtype: np.dtype, *, scale_weight: tuple[str, float] | None = None
) -> dict[str, np.ndarray]:
    """Every tensor of ``model`` (by name) as an fp32-accumulating device with ``dtype`` storage computes it.

    Values are returned in ``dtype``; ``scale_weight=(name, factor)`` multiplies one initializer first (a real
    divergence, such as a wrongly converted weight).
    """
    values: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        array = numpy_helper.to_array(init)
        if scale_weight and init.name == scale_weight[0]:
            array = array * np.float32(scale_weight[1])
        values[init.name] = _round(array, dtype)
    values[model.graph.input[0].name] = _round(x, dtype)
    opset = model.opset_import
    for node in model.graph.node:
        inputs = [values[name] for name in node.input]
        graph = helper.make_graph(
            [node],
            "one",
            [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in node.input],
            [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in node.output],
        )
        one = helper.make_model(graph, opset_imports=opset)
        session = ort.InferenceSession(one.SerializeToString(), providers=["CPUExecutionProvider"])
        outputs = session.run(None, dict(zip(node.input, inputs, strict=True)))
        for name, array in zip(node.output, outputs, strict=True):
            values[name] = _round(array, dtype)
    return {name: array.astype(dtype) for name, array in values.items()}
