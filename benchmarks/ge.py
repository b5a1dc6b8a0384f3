"""GE sessions and sinks against their bare baselines, measured side by side in one run.

(a) run_graph of a training step (MatMuls, Assign, Save node, loss Summary) with do-nothing Summary and Save
    callbacks vs a bare onnxruntime run of the same compiled model.               target ratio <= 1.15
(a0) the same on a tiny graph (x + w, Assign, Summary): openacl's fixed cost per run.  target ratio <= 1.5
(a') the same for a checkpoint graph (large variables through a TransOp) where both Summary and Save fire.
                                                                                  target ratio <= 1.15
(b) TensorBoard sink, per scalar record, vs tensorboardX add_scalar alone.        target ratio <= 1.2
(c) safetensors sink, what one Save callback costs the training step (the file under a temporary name; the
    fsyncs and the rename follow on the committer thread), vs safetensors.numpy.save_file of the same
    tensors. Each round starts from a quiet disk: the committer idle, nothing dirty, two files at most
    on either side (the sink keeps its newest two).                              target ratio <= 1.3
(c') the sink with every checkpoint committed (N callbacks, then flush: temp file, fsync, rename, fsync dir)
    vs save_file + the same fsync/rename/fsync done by hand, N times: durability included on both sides.
(d) GE-PY (``import ge``): run_graph of an example-sized graph (the transformer example's router at a smaller
    size: MatMul, Sigmoid, TopKV2 twice, ScatterElements, MaskedFill, GatherElements) with ge.graph.Tensor
    inputs and outputs, vs a bare onnxruntime run of the compiled model.          target ratio <= 1.15
(d0) GE-PY run_graph of a tiny graph (x + 1): the facade's and the engine's fixed cost. target ratio <= 1.5
(a0 floor), (d0 floor): the same tiny runs against their floor, the least Python around the same onnxruntime run:
    onnxruntime's C entry point (``InferenceSession._sess.run``) with a prepared feed dict. The baseline above is
    the public ``InferenceSession.run``, which checks the feed names in Python on every call.

Both sides of a row run in the same process, alternating round by round, so that drift on a noisy machine
hits both alike; each side's figure is its best round, except the tiny rows: there, openacl, the baseline and
the floor alternate, each figure is the median of its rounds, and a note gives each side's spread (slowest /
fastest round), flagged where it passes 1.2.

Usage: python benchmarks/ge.py [--quick] [--json]
"""

from __future__ import annotations

import itertools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort
from _common import argument_parser, interleaved, per_call, print_rows
from safetensors.numpy import save_file
from tensorboardX import SummaryWriter

import openacl
from openacl import ge

openacl.install()

from ge.es import all as es  # noqa: E402  (GE-PY's names resolve to openacl after install)
from ge.es.graph_builder import GraphBuilder  # noqa: E402
from ge.graph import Tensor  # noqa: E402
from ge.graph.types import DataType, Format  # noqa: E402
from ge.session import Session  # noqa: E402

F32 = np.float32


def _noop(graph_id, params):
    return 0


# ----- (a) run_graph vs onnxruntime -----


def train_step_graph() -> ge.Graph:
    g = ge.Graph("train_step")
    x = g.data("x", index=0, shape=[256, 512], dtype="float32")
    rng = np.random.default_rng(0)
    w1 = g.variable("w1", value=rng.standard_normal((512, 512)).astype(F32) * 0.05)
    w2 = g.variable("w2", value=rng.standard_normal((512, 256)).astype(F32) * 0.05)
    h = g.op("Relu", [g.op("MatMul", [x, w1])])
    y = g.op("MatMul", [h, w2], name="y")
    loss = g.op("ReduceMean", [g.op("Mul", [y, y])], name="loss", keepdims=0)
    g.summary("loss[:Scalar]", loss)
    g.assign(w2, g.op("Mul", [w2, g.const("decay", F32(0.999))]))
    g.save([w1])
    g.set_outputs([loss])
    return g


def tiny_graph() -> ge.Graph:
    g = ge.Graph("tiny")
    x = g.data("x", index=0, shape=[4], dtype="float32")
    w = g.variable("t", value=np.zeros(4, F32))
    y = g.op("Add", [x, w])
    g.summary("y[:Scalar]", g.op("ReduceSum", [y], keepdims=0))
    g.assign(w, y)
    g.set_outputs([y])
    return g


def checkpoint_graph() -> ge.Graph:
    g = ge.Graph("checkpoint")
    a = g.variable("a", value=np.ones((1024, 1024), F32))
    b = g.variable("b", value=np.ones((1024, 1024), F32))
    g.summary("a[:Tensor]", a)
    g.save([g.op("Transpose", [a]), g.op("Transpose", [b])])
    return g


class GraphBench:
    """A built graph in a train session, and a bare onnxruntime session of the model it compiled to."""

    def __init__(self, sess: ge.Session, graph_id: int, graph: ge.Graph, inputs: list[np.ndarray]) -> None:
        assert sess.add_graph(graph_id, graph) == 0
        assert sess.build_graph(graph_id, inputs) == 0
        self.sess, self.graph_id, self.inputs = sess, graph_id, inputs
        model = sess.compiled_model(graph_id)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.bare = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in self.bare.get_inputs()]
        data_names = names[: len(inputs)]
        values, ret = sess.get_variables(names[len(inputs) :])
        assert ret == 0
        self.feeds = dict(zip(data_names, inputs, strict=True)) | dict(zip(names[len(inputs) :], values, strict=True))
        self.outputs = [o.name for o in self.bare.get_outputs()]

    def ours(self, n: int) -> float:
        run, graph_id, inputs = self.sess.run_graph, self.graph_id, self.inputs
        return per_call(lambda: run(graph_id, inputs), n)

    def baseline(self, n: int) -> float:
        run, outputs, feeds = self.bare.run, self.outputs, self.feeds
        return per_call(lambda: run(outputs, feeds), n)

    def floor(self, n: int) -> float:
        return bare_floor(self.bare, self.outputs, self.feeds, n)


def bare_floor(bare: ort.InferenceSession, outputs: list[str], feeds: dict[str, np.ndarray], n: int) -> float:
    """Seconds per run through onnxruntime's C entry point: no Python between the call and the run."""
    run = bare._sess.run
    return per_call(lambda: run(outputs, feeds, None), n)


Figures = tuple[list[float], list[float], list[float]]


def three_way(rounds: int, bench: GraphBench | GePyBench, n: int) -> Figures:
    """Every round's per-call seconds of openacl, the baseline and the floor, alternating round by round."""
    ours: list[float] = []
    base: list[float] = []
    floor: list[float] = []
    for _ in range(rounds):
        ours.append(bench.ours(n))
        base.append(bench.baseline(n))
        floor.append(bench.floor(n))
    return ours, base, floor


def tiny_rows(tag: str, label: str, figures: Figures) -> tuple[list[tuple[str, str, str, float, str]], str]:
    """The row against the baseline, the row against the floor (medians), and a note with each side's spread."""
    ours, base, floor = (statistics.median(f) for f in figures)
    spreads = [max(f) / min(f) for f in figures]
    flags = ", ".join(
        f"{side} {spread:.2f}{' (over 1.2: noisy)' if spread > 1.2 else ''}"
        for side, spread in zip(("openacl", "baseline", "floor"), spreads, strict=True)
    )
    us = f"{ours * 1e6:.1f} µs"
    rows = [
        (f"({tag}) {label}", us, f"{base * 1e6:.1f} µs", ours / base, "<= 1.5"),
        (f"({tag} floor) the same vs its floor", us, f"{floor * 1e6:.1f} µs", ours / floor, ""),
    ]
    return rows, f"({tag}) spread, slowest/fastest of {len(figures[0])} rounds: {flags}"


# ----- (b) TensorBoard sink vs add_scalar -----


def tb_sink(writer: ge.TensorBoardSummaryWriter, n: int) -> float:
    values = [{"loss[:Scalar]": np.array(i * 0.001, F32)} for i in range(n)]
    start = time.perf_counter()
    for params in values:
        writer(1, params)
    return (time.perf_counter() - start) / n


def tb_bare(writer: SummaryWriter, n: int, offset: list[int]) -> float:
    values = [i * 0.001 for i in range(n)]
    step = offset[0]
    start = time.perf_counter()
    for i, value in enumerate(values):
        writer.add_scalar("loss", value, step + i)
    offset[0] += n
    return (time.perf_counter() - start) / n


# ----- (c) safetensors sink vs save_file -----


def checkpoint_tensors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {"w1": rng.standard_normal((1024, 1024)).astype(F32), "b1": np.zeros(1024, F32)}


def by_hand(tensors: dict[str, np.ndarray], directory: Path) -> None:
    """The durable write the sink does, with nothing else: save, fsync, rename, fsync the directory."""
    tmp, final = directory / "hand.tmp", directory / "hand.safetensors"
    save_file(tensors, tmp)
    fd = os.open(tmp, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    os.replace(tmp, final)
    fd = os.open(directory, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


# ----- (d) GE-PY -----

TOKENS, HIDDEN, EXPERTS = 512, 1024, 256


def router_graph():
    """The transformer example's routing block, built with GE-PY's ES functions."""
    b = GraphBuilder("router")
    tokens, weights, bias = b.create_inputs(3)
    scores = es.Sigmoid(es.MatMul(es.Reshape(tokens, [-1, HIDDEN]), weights, None, transpose_x2=True))
    biased = scores + es.Unsqueeze(bias, axes=[0])
    group = es.ReduceSum(es.TopKV2(biased, 2).values, [-1])
    top = es.Cast(es.TopKV2(group, 64, sorted=False).indices, dst_type=DataType.DT_INT64)
    mask = es.ScatterElements(es.ZerosLike(group), top, es.Fill(es.Shape(top), b.create_scalar_float(1.0)))
    keep = es.BroadcastTo(es.Unsqueeze(mask, axes=[-1]), [TOKENS, EXPERTS])
    masked = es.MaskedFill(biased, es.LogicalNot(es.Cast(keep, dst_type=DataType.DT_BOOL)), 0.0)
    chosen = es.Cast(es.TopKV2(masked, 8).indices, dst_type=DataType.DT_INT64)
    return b.build_and_reset([chosen, es.GatherElements(scores, chosen, dim=1) + 2.5])


def tiny_gepy_graph():
    b = GraphBuilder("tiny")
    x = b.create_input(0, data_type=DataType.DT_FLOAT, shape=[4])
    return b.build_and_reset([x + 1.0])


class GePyBench:
    """A GE-PY graph in a GE-PY session, and a bare onnxruntime session of the model the engine compiled."""

    def __init__(self, session: Session, graph_id: int, graph, arrays: list[np.ndarray]) -> None:
        assert session.add_graph(graph_id, graph) == 0
        self.inputs = [
            Tensor(a.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, list(a.shape)) for a in arrays
        ]
        session.run_graph(graph_id, self.inputs)  # builds it (0-dim inputs take these shapes)
        self.session, self.graph_id = session, graph_id
        model = session._session.compiled_model(graph_id)  # the engine underneath the facade
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.bare = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        self.feeds = {i.name: a for i, a in zip(self.bare.get_inputs(), arrays, strict=True)}
        self.outputs = [o.name for o in self.bare.get_outputs()]

    def ours(self, n: int) -> float:
        run, graph_id, inputs = self.session.run_graph, self.graph_id, self.inputs
        return per_call(lambda: run(graph_id, inputs), n)

    def baseline(self, n: int) -> float:
        run, outputs, feeds = self.bare.run, self.outputs, self.feeds
        return per_call(lambda: run(outputs, feeds), n)

    def floor(self, n: int) -> float:
        return bare_floor(self.bare, self.outputs, self.feeds, n)


def gepy_rows(rounds: int, scale: int) -> tuple[list[tuple[str, str, str, float, str]], str]:
    rng = np.random.default_rng(3)
    arrays = [
        rng.standard_normal((TOKENS // 8, 8, HIDDEN)).astype(F32),
        rng.standard_normal((EXPERTS, HIDDEN)).astype(F32),
        rng.standard_normal(EXPERTS).astype(F32),
    ]
    session = Session()
    router = GePyBench(session, 11, router_graph(), arrays)
    tiny = GePyBench(session, 12, tiny_gepy_graph(), [np.ones(4, F32)])
    for bench in (router, tiny):
        bench.ours(5)
        bench.baseline(5)
        bench.floor(5)
    r_ours, r_base = interleaved(rounds, lambda: router.ours(50 // scale), lambda: router.baseline(50 // scale))
    t_rows, t_note = tiny_rows("d0", "GE-PY run_graph, tiny graph", three_way(2 * rounds, tiny, 2000 // scale))
    row = ("(d) GE-PY run_graph, router graph", f"{r_ours * 1e3:.3f} ms", f"{r_base * 1e3:.3f} ms", r_ours / r_base)
    return [(*row, "<= 1.15"), *t_rows], t_note


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    scale = 5 if args.quick else 1
    rounds = 3 if args.quick else 9

    assert ge.ge_initialize() == 0
    tmp = Path(tempfile.mkdtemp(prefix="openacl-bench-ge-"))
    tb_ours = ge.TensorBoardSummaryWriter(tmp / "tb-ours")
    tb_base = SummaryWriter(str(tmp / "tb-base"), flush_secs=1)
    try:
        sess = ge.Session({"ge.graphRunMode": "1"})
        assert sess.register_callback_func("Summary", _noop) == 0
        assert sess.register_callback_func("Save", _noop) == 0
        x = np.random.default_rng(2).standard_normal((256, 512)).astype(F32)
        step = GraphBench(sess, 1, train_step_graph(), [x])
        ckpt = GraphBench(sess, 2, checkpoint_graph(), [])
        tiny = GraphBench(sess, 3, tiny_graph(), [np.ones(4, F32)])
        for bench in (step, ckpt, tiny):  # warm up both sides
            bench.ours(5)
            bench.baseline(5)
        tiny.floor(5)
        a_ours, a_base = interleaved(rounds, lambda: step.ours(100 // scale), lambda: step.baseline(100 // scale))
        t_rows, t_note = tiny_rows("a0", "run_graph, tiny graph", three_way(2 * rounds, tiny, 2000 // scale))
        c_ours_, c_base_ = interleaved(rounds, lambda: ckpt.ours(100 // scale), lambda: ckpt.baseline(100 // scale))

        offset = [0]
        tb_sink(tb_ours, 200)
        tb_bare(tb_base, 200, offset)
        b_ours, b_base = interleaved(
            rounds, lambda: tb_sink(tb_ours, 5000 // scale), lambda: tb_bare(tb_base, 5000 // scale, offset)
        )

        tensors = checkpoint_tensors()
        sink = ge.SafetensorsCheckpointWriter(tmp / "ckpt", keep=2)
        n = 20 // scale
        serial = itertools.count()  # a new file each time, as the sink's: rewriting one file would stall on ext4

        def settled(measure: Callable[[], float]) -> Callable[[], float]:
            """Each round from a quiet disk: the committer idle, no dirty pages left by the other side's round
            (whose writeback would otherwise land on whichever side runs next), and the baseline's earlier files
            gone, as the sink keeps only its newest two (files piling up on one side slow that side's writes)."""

            def round_() -> float:
                sink.flush()
                for old in tmp.glob("plain-*.safetensors"):
                    old.unlink()
                os.sync()
                return measure()

            return round_

        s_ours, s_base = interleaved(
            rounds,
            settled(lambda: per_call(lambda: sink(1, tensors), n)),
            settled(lambda: per_call(lambda: save_file(tensors, tmp / f"plain-{next(serial)}.safetensors"), n)),
        )
        sink.flush()

        def durable() -> float:
            start = time.perf_counter()
            for _ in range(n):
                sink(1, tensors)
            sink.flush()
            return (time.perf_counter() - start) / n

        h_ours, h_base = interleaved(rounds, durable, lambda: per_call(lambda: by_hand(tensors, tmp), n))
        gepy, gepy_note = gepy_rows(rounds, scale)
    finally:
        tb_ours.close()
        tb_base.close()
        ge.ge_finalize()
        shutil.rmtree(tmp, ignore_errors=True)

    mb = sum(t.nbytes for t in tensors.values()) / 2**20
    rows = [
        ("(a) run_graph, train step", f"{a_ours * 1e3:.3f} ms", f"{a_base * 1e3:.3f} ms", a_ours / a_base, "<= 1.15"),
        *t_rows,
        (
            "(a') run_graph, checkpoint graph",
            f"{c_ours_ * 1e3:.3f} ms",
            f"{c_base_ * 1e3:.3f} ms",
            c_ours_ / c_base_,
            "<= 1.15",
        ),
        (
            "(b) TensorBoard scalar record",
            f"{b_ours * 1e6:.1f} µs",
            f"{b_base * 1e6:.1f} µs",
            b_ours / b_base,
            "<= 1.2",
        ),
        (
            f"(c) safetensors {mb:.1f} MiB vs save_file",
            f"{s_ours * 1e3:.2f} ms",
            f"{s_base * 1e3:.2f} ms",
            s_ours / s_base,
            "<= 1.3",
        ),
        (
            "(c') committed vs save_file+fsync+rename",
            f"{h_ours * 1e3:.2f} ms",
            f"{h_base * 1e3:.2f} ms",
            h_ours / h_base,
            "",
        ),
    ]
    rows += gepy
    print_rows(rows, args.json, [t_note, gepy_note])
    return 0


if __name__ == "__main__":
    sys.exit(main())
