"""Linear regression trained through GE-PY (``import ge``), with TensorBoard summaries and safetensors checkpoints.

    openacl run examples/gepy_train_loop.py [outdir]      (default: ./gepy_train_loop_out)

Everything is GE-PY's API except one openacl extension, ``Session.register_callback_func`` (GE-PY has no way to
receive Summary or Save tensors), and ``Summary``'s ``name=`` keyword, which gives each summary its
MindSpore-style key. Three graphs share the session's variables ``w`` and ``b``:

- ``init`` assigns their first values (an init graph: it only writes them);
- ``train_step`` computes the loss and gradients, updates ``w`` with ``ApplyGradientDescent`` and ``b`` with
  ``Assign``, and hands ``loss[:Scalar]`` and ``w[:Histogram]`` to the Summary callback after every run;
- ``checkpoint`` is nothing but a ``Save`` over the variables, GE's checkpoint graph: running it hands
  ``{"w": ..., "b": ...}`` to the Save callback.

The callbacks fire because the session runs in train mode (``ge.graphRunMode`` "1").
"""

import sys
from pathlib import Path

import numpy as np
from ge.es.all import ApplyGradientDescent, Assign, MatMul, ReduceMean, Save, Square, Summary
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

from openacl.ge import SafetensorsCheckpointWriter, TensorBoardSummaryWriter

INIT, TRAIN, CHECKPOINT = 1, 2, 3
STEPS, CHECKPOINT_EVERY, LR, N = 120, 40, 0.1, 64
TRUE_W, TRUE_B = np.array([[2.0], [-3.0], [0.5]], np.float32), 1.0


def init_graph():
    b = GraphBuilder("init")
    Assign(b.create_variable(0, "w"), b.create_const_float([0.0, 0.0, 0.0], shape=[3, 1]))
    Assign(b.create_variable(1, "b"), b.create_const_float([0.0], shape=[1]))
    return b.build_and_reset()


def train_graph():
    b = GraphBuilder("train_step")
    x = b.create_input(0, name="x", data_type=DataType.DT_FLOAT, shape=[N, 3])
    y = b.create_input(1, name="y", data_type=DataType.DT_FLOAT, shape=[N, 1])
    w, bias = b.create_variable(0, "w"), b.create_variable(1, "b")
    error = MatMul(x, w, None) + bias - y
    loss = ReduceMean(Square(error), [0, 1])
    grad_w = MatMul(x, error, None, transpose_x1=True) * (2.0 / N)
    grad_b = ReduceMean(error, [0]) * 2.0
    ApplyGradientDescent(w, b.create_scalar_float(LR), grad_w)
    Assign(bias, bias - grad_b * LR)
    Summary(loss, name="loss[:Scalar]")
    Summary(w, name="w[:Histogram]")
    b.set_graph_output(loss, 0)
    return b.build_and_reset()


def checkpoint_graph():
    b = GraphBuilder("checkpoint")
    Save([b.create_variable(0, "w"), b.create_variable(1, "b")])
    return b.build_and_reset()


def main(outdir: Path) -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 3)).astype(np.float32)
    y = (x @ TRUE_W + TRUE_B).astype(np.float32)
    inputs = [
        Tensor(x.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [N, 3]),
        Tensor(y.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [N, 1]),
    ]
    assert GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "1"}) == 0
    summaries = TensorBoardSummaryWriter(outdir / "tb")
    checkpoints = SafetensorsCheckpointWriter(outdir / "ckpt", keep=3)
    try:
        session = Session({"ge.graphRunMode": "1"})
        session.register_callback_func("Summary", summaries)
        session.register_callback_func("Save", checkpoints)
        for graph_id, graph in ((INIT, init_graph()), (TRAIN, train_graph()), (CHECKPOINT, checkpoint_graph())):
            assert session.add_graph(graph_id, graph) == 0
        session.run_graph(INIT, [])
        for step in range(1, STEPS + 1):
            [loss] = session.run_graph(TRAIN, inputs)
            if step % CHECKPOINT_EVERY == 0:
                session.run_graph(CHECKPOINT, [])
                print(f"step {step}: loss {loss.get_data():.6f}, checkpoint written")
    finally:
        summaries.close()
        checkpoints.close()
        GeApi.ge_finalize()
    print(f"tensorboard --logdir {outdir / 'tb'}")
    print(f"checkpoints: {sorted(p.name for p in (outdir / 'ckpt').glob('*.safetensors'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "gepy_train_loop_out")))
