"""Small ONNX models with gears (``dynamic_batch_size`` / ``dynamic_image_size`` / ``dynamic_dims`` metadata),
and a driver that runs them through ``acl.mdl`` the way Ascend's dynamic-batch samples do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl
from tests.model_io import ModelIO

H2D, D2H = 1, 2
GEAR_INPUT = "ascend_mbatch_shape_data"
_OPSET = [helper.make_opsetid("", 13)]


def _save(graph, path: Path, metadata: dict[str, str], opsets=None) -> Path:
    model = helper.make_model(graph, opset_imports=opsets or _OPSET)
    model.ir_version = 8
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def batch_model(path: Path, gears: str | None = "1,2,4,8", **extra: str) -> Path:
    """data [N,3,4,4] -> scaled [N,48] (relu(data * 0.5) flattened) and total [N] (sum of each sample)."""
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    axes = numpy_helper.from_array(np.array([1, 2, 3], np.int64), "axes")
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["data", "scale"], ["scaled_4d"]),
            helper.make_node("Relu", ["scaled_4d"], ["relu"]),
            helper.make_node("Flatten", ["relu"], ["scaled"], axis=1),
            helper.make_node("ReduceSum", ["data", "axes"], ["total"], keepdims=0),
        ],
        "batchnet",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 3, 4, 4])],
        [
            helper.make_tensor_value_info("scaled", TensorProto.FLOAT, ["N", 48]),
            helper.make_tensor_value_info("total", TensorProto.FLOAT, ["N"]),
        ],
        [scale, axes],
    )
    metadata = {"dynamic_batch_size": gears} if gears is not None else {}
    return _save(graph, path, {**metadata, **extra})


def hw_model(path: Path, gears: str = "8,8;16,12;32,32") -> Path:
    """image [1,3,H,W] -> conv 3x3 (2 channels, pad 1) -> max-pool 2x2: [1,2,H/2,W/2]."""
    weight = np.random.default_rng(7).standard_normal((2, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["image", "w"], ["conv"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("MaxPool", ["conv"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        "hwnet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "H", "W"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 2, "h", "w"])],
        [numpy_helper.from_array(weight, "w")],
    )
    return _save(graph, path, {"dynamic_image_size": gears})


def dims_model(path: Path, gears: str = "2,3,5;4,1,1;3,2,2") -> Path:
    """a [1,-1,4] and b [-1,-1] -> a summed over its dynamic axis [1,4], and b doubled [-1,-1]."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    graph = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["a", "axes"], ["a_sum"], keepdims=0),
            helper.make_node("Mul", ["b", "two"], ["b_twice"]),
        ],
        "dimsnet",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, "S", 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["R", "C"]),
        ],
        [
            helper.make_tensor_value_info("a_sum", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("b_twice", TensorProto.FLOAT, ["R", "C"]),
        ],
        [axes, two],
    )
    return _save(graph, path, {"dynamic_dims": gears})


def contrib_batch_model(path: Path) -> Path:
    """data [N,6] -> com.microsoft Gelu: ONNX shape inference cannot see through it, onnxruntime runs it."""
    graph = helper.make_graph(
        [helper.make_node("Gelu", ["data"], ["out"], domain="com.microsoft")],
        "contribnet",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 6])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    opsets = [*_OPSET, helper.make_opsetid("com.microsoft", 1)]
    return _save(graph, path, {"dynamic_batch_size": "2,5"}, opsets)


def reference(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's own answer, run directly on the gear's shapes."""
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


class GearIO(ModelIO):
    """A loaded gear model with device buffers sized as the description says (largest gear), in datasets."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gear_index, ret = acl.mdl.get_input_index_by_name(self.desc, GEAR_INPUT)
        assert ret == 0
        self._hosts: list[bytes] = []

    def load(self, *arrays: np.ndarray) -> None:
        """Copy each array into the leading bytes of its input buffer."""
        for (ptr, size), array in zip(self.inputs[1], arrays, strict=False):
            data = np.ascontiguousarray(array).tobytes()
            self._hosts.append(data)
            assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), H2D) == 0

    def execute(self) -> int:
        return acl.mdl.execute(self.model_id, self.inputs[0], self.outputs[0])

    def read_outputs(self) -> list[np.ndarray]:
        out = []
        for i, (ptr, _size) in enumerate(self.outputs[1]):
            dims, ret = acl.mdl.get_cur_output_dims(self.desc, i)
            assert ret == 0
            count = int(np.prod(dims["dims"]))
            data = acl.util.ptr_to_bytes(ptr, count * 4)
            out.append(np.frombuffer(data, np.float32).reshape(dims["dims"]).copy())
        return out


def nhwc_classifier(path: Path, gears: str = "32,32;48,64;64,48") -> Path:
    """A TF-style classifier, ATC's ``--input_format=NHWC``: image [1,H,W,3] -> transpose -> conv 3x3 (4 channels)
    -> relu -> global average pool -> gemm (5 classes) -> softmax ``prob`` [1,5]."""
    rng = np.random.default_rng(12)
    conv = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    fc = rng.standard_normal((4, 5)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["image"], ["nchw"], perm=[0, 3, 1, 2]),
            helper.make_node("Conv", ["nchw", "conv_w"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["conv"], ["relu"]),
            helper.make_node("GlobalAveragePool", ["relu"], ["pooled"]),
            helper.make_node("Flatten", ["pooled"], ["flat"]),
            helper.make_node("MatMul", ["flat", "fc_w"], ["logits"]),
            helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
        ],
        "nhwcnet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, "H", "W", 3])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(conv, "conv_w"), numpy_helper.from_array(fc, "fc_w")],
    )
    return _save(graph, path, {"dynamic_image_size": gears, "input_format": "NHWC"})
