"""Linear regression trained by a GE graph, with TensorBoard summaries and safetensors checkpoints.

    python examples/ge_train_loop.py [outdir]          (default: ./ge_train_loop_out)

Graph 1 ("train_step") computes the loss and its gradients and updates the variables ``w`` and ``b`` with
Assign; its Summary nodes hand the loss (``loss[:Scalar]``) and ``w`` (``w[:Histogram]``) to the Summary
callback after every run. Graph 2 ("checkpoint") is nothing but a Save over the variables, GE's checkpoint
graph: running it hands ``{"w": ..., "b": ...}`` to the Save callback. The callbacks are openacl's ready sinks:
TensorBoard events under ``outdir/tb`` and the newest three checkpoints under ``outdir/ckpt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from openacl import ge

TRAIN, CHECKPOINT = 1, 2
STEPS, CHECKPOINT_EVERY, LR, N = 200, 50, 0.1, 64
TRUE_W, TRUE_B = np.array([[2.0], [-3.0], [0.5]], np.float32), np.float32(1.0)


def train_step_graph() -> ge.Graph:
    g = ge.Graph("train_step")
    x = g.data("x", index=0, shape=[N, 3], dtype="float32")
    y = g.data("y", index=1, shape=[N, 1], dtype="float32")
    w = g.variable("w", value=np.zeros((3, 1), np.float32))
    b = g.variable("b", value=np.zeros(1, np.float32))
    lr = g.const("lr", np.float32(LR))
    err = g.op("Sub", [g.op("Add", [g.op("MatMul", [x, w]), b]), y], name="err")
    loss = g.op("ReduceMean", [g.op("Mul", [err, err])], name="loss", keepdims=0)
    two_over_n = g.const("two_over_n", np.float32(2.0 / N))
    grad_w = g.op("Mul", [g.op("MatMul", [g.op("Transpose", [x]), err]), two_over_n], name="grad_w")
    grad_b = g.op("Mul", [g.op("ReduceMean", [err], axes=[0], keepdims=0), g.const("two", np.float32(2))])
    g.assign(w, g.op("Sub", [w, g.op("Mul", [grad_w, lr])]))
    g.assign(b, g.op("Sub", [b, g.op("Mul", [grad_b, lr])]))
    g.summary("loss[:Scalar]", loss)
    g.summary("w[:Histogram]", w)
    g.set_outputs([loss])
    return g


def checkpoint_graph() -> ge.Graph:
    g = ge.Graph("checkpoint")
    g.save([g.variable("w"), g.variable("b")], name="save")
    return g


def main(outdir: Path) -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 3)).astype(np.float32)
    y = (x @ TRUE_W + TRUE_B + 0.01 * rng.standard_normal((N, 1))).astype(np.float32)

    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    summaries = ge.TensorBoardSummaryWriter(outdir / "tb")
    checkpoints = ge.SafetensorsCheckpointWriter(outdir / "ckpt", keep=3)
    try:
        sess = ge.Session({"ge.graphRunMode": "1"})
        assert sess.register_callback_func("Summary", summaries) == 0
        assert sess.register_callback_func("Save", checkpoints) == 0
        assert sess.add_graph(TRAIN, train_step_graph()) == 0
        assert sess.add_graph(CHECKPOINT, checkpoint_graph()) == 0
        first = None
        for step in range(STEPS):
            (loss,), ret = sess.run_graph(TRAIN, [x, y])
            assert ret == 0, ret
            first = float(loss) if first is None else first
            if (step + 1) % CHECKPOINT_EVERY == 0:
                assert sess.run_graph(CHECKPOINT, [])[1] == 0
        (w, b), ret = sess.get_variables(["w", "b"])
        assert ret == 0
    finally:
        summaries.close()
        checkpoints.close()  # the last checkpoints are committed (fsynced and renamed) in the background
        ge.ge_finalize()

    print(f"trained {STEPS} steps: loss {first:.4f} -> {float(loss):.6f}")
    learned = ", ".join(f"{v:.3f}" for v in w.ravel())
    print(f"w = [{learned}] (true [2, -3, 0.5]), b = {float(b[0]):.3f} (true 1)")
    print(f"TensorBoard events: {sorted(p.name for p in (outdir / 'tb').iterdir())} under {outdir / 'tb'}")
    print(f"checkpoints kept: {[p.name for p in checkpoints.checkpoints(CHECKPOINT)]} under {outdir / 'ckpt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "ge_train_loop_out")))
