"""Peak memory of one model run, each side in a fresh process: a ViT-B/16-sized model and the programs that run it.

Each measurement is a child process of its own, so that one side's heap never counts for the other. Run as a
script, this module is that child, and prints its peak resident bytes last:

    python benchmarks/_memory.py onnxruntime MODEL      # a plain onnxruntime session, one run
    python benchmarks/_memory.py acl MODEL              # acl.mdl.load_from_file and one execute, no dump
    python benchmarks/_memory.py openacl dump MODEL ... # the openacl command line
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as oh

IMAGE = (1, 3, 224, 224)


class _Graph:
    """Nodes and random initializers, added one call at a time."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str, *shape: int) -> str:
        return self.constant(name, (self.rng.standard_normal(shape) * 0.02).astype(np.float32))

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes) -> str:
        self.nodes.append(oh.make_node(op, inputs, [output], name=output, **attributes))
        return output


def build_vit(blocks: int = 12, width: int = 768, heads: int = 12, mlp: int = 3072, seed: int = 0) -> onnx.ModelProto:
    """ViT-B/16's shape (patch embedding, ``blocks`` encoder blocks, exact-erf GELU, a 1000-way head), random weights.

    86M parameters (344 MB of float32) and 403 operators at the defaults: big enough that holding the weights or
    every intermediate twice shows in the peak, as it did on torchvision's vit_b_16.
    """
    g, tokens, head_width = _Graph(seed), IMAGE[2] // 16 * (IMAGE[3] // 16), width // heads
    x = g.node(
        "Conv", ["image", g.weight("patch_w", width, 3, 16, 16), g.weight("patch_b", width)], "patch", strides=[16, 16]
    )
    x = g.node("Reshape", [x, g.constant("flat_shape", np.array([1, width, tokens], np.int64))], "flat")
    x = g.node("Transpose", [x], "tokens", perm=[0, 2, 1])
    x = g.node("Add", [x, g.weight("position", 1, tokens, width)], "embedded")
    split = g.constant("heads_shape", np.array([1, tokens, heads, head_width], np.int64))
    merge = g.constant("tokens_shape", np.array([1, tokens, width], np.int64))
    scale = g.constant("scale", np.array(head_width**-0.5, np.float32))
    half, one = g.constant("half", np.array(0.5, np.float32)), g.constant("one", np.array(1.0, np.float32))
    root_half = g.constant("root_half", np.array(0.5**0.5, np.float32))

    def norm(x: str, name: str) -> str:
        gamma = g.constant(f"{name}_gamma", np.ones(width, np.float32))
        return g.node(
            "LayerNormalization", [x, gamma, g.constant(f"{name}_beta", np.zeros(width, np.float32))], name, axis=-1
        )

    def linear(x: str, name: str, rows: int, cols: int) -> str:
        product = g.node("MatMul", [x, g.weight(f"{name}_w", rows, cols)], f"{name}_matmul")
        return g.node("Add", [product, g.weight(f"{name}_b", cols)], name)

    for b in range(blocks):
        p, y = f"block{b}_", norm(x, f"block{b}_norm1")
        q, k, v = (
            g.node(
                "Transpose",
                [g.node("Reshape", [linear(y, p + t, width, width), split], p + t + "_heads")],
                p + t + "_t",
                perm=[0, 2, 3, 1] if t == "k" else [0, 2, 1, 3],
            )
            for t in "qkv"
        )
        attention = g.node(
            "Softmax",
            [g.node("Mul", [g.node("MatMul", [q, k], p + "scores"), scale], p + "scaled")],
            p + "attention",
            axis=-1,
        )
        context = g.node(
            "Transpose", [g.node("MatMul", [attention, v], p + "context")], p + "context_t", perm=[0, 2, 1, 3]
        )
        context = g.node("Reshape", [context, merge], p + "context_tokens")
        x = g.node("Add", [x, linear(context, p + "out", width, width)], p + "residual1")
        y = linear(norm(x, p + "norm2"), p + "fc1", width, mlp)
        erf = g.node(
            "Add",
            [g.node("Erf", [g.node("Mul", [y, root_half], p + "gelu_scaled")], p + "gelu_erf"), one],
            p + "gelu_shifted",
        )
        y = g.node("Mul", [g.node("Mul", [y, erf], p + "gelu_product"), half], p + "gelu")
        x = g.node("Add", [x, linear(y, p + "fc2", mlp, width)], p + "residual2")
    pooled = g.node(
        "ReduceMean", [norm(x, "final_norm"), g.constant("token_axis", np.array([1], np.int64))], "pooled", keepdims=0
    )
    g.node("Gemm", [pooled, g.weight("head_w", width, 1000), g.weight("head_b", 1000)], "logits")
    graph = oh.make_graph(
        g.nodes,
        "vit",
        [oh.make_tensor_value_info("image", TensorProto.FLOAT, list(IMAGE))],
        [oh.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])],
        g.initializers,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])


def peak_rss(program: list[str]) -> int:
    """Peak resident bytes of ``program`` (``onnxruntime MODEL``, ``acl MODEL`` or ``openacl ARGS...``), run as a
    fresh child process that reports its own high-water mark.

    The child reads ``VmHWM`` itself rather than the parent reading the child's rusage: ``ru_maxrss`` of a child
    starts from the parent's resident size at fork, which here is the whole benchmark's.
    """
    done = subprocess.run([sys.executable, __file__, *program], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{program} exited {done.returncode}: {done.stderr[-500:]}")
    return int(done.stdout.split()[-1])


def _high_water_mark() -> int:
    """This process's peak resident bytes (``VmHWM``, which exec resets)."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _run_onnxruntime(path: str) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    session.run(None, {"image": np.random.default_rng(0).standard_normal(IMAGE, dtype=np.float32)})


def _run_acl(path: str) -> None:
    import openacl

    openacl.install()
    import acl

    acl.init()
    acl.rt.set_device(0)
    model_id, ret = acl.mdl.load_from_file(path)
    assert ret == 0, ret
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    datasets = []
    for count, size_of in (
        (acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index),
        (acl.mdl.get_num_outputs, acl.mdl.get_output_size_by_index),
    ):
        dataset = acl.mdl.create_dataset()
        for i in range(count(desc)):
            size = size_of(desc, i)
            ptr, _ = acl.rt.malloc(size, 0)
            acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        datasets.append(dataset)
    assert acl.mdl.execute(model_id, *datasets) == 0


def _run_openacl(*argv: str) -> None:
    from openacl.cli import main

    assert main(list(argv)) == 0


if __name__ == "__main__":
    {"onnxruntime": _run_onnxruntime, "acl": _run_acl, "openacl": _run_openacl}[sys.argv[1]](*sys.argv[2:])
    print(_high_water_mark())
