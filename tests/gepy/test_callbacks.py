"""openacl's extension of GE-PY: Summary/Save callbacks on ``ge.session.Session``, and the sinks reading them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ge.error import GeError
from ge.es.all import Assign, Mul, Save, Summary
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session
from safetensors.numpy import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from openacl.ge import SafetensorsCheckpointWriter, TensorBoardSummaryWriter

ROOT = Path(__file__).resolve().parents[2]


def init_graph():
    b = GraphBuilder("init")
    Assign(b.create_variable(0, "w"), b.create_const_float([1.0, 2.0], shape=[2]))
    return b.build_and_reset()


def step_graph():
    """w <- w * x; summaries of the old w (auto-named Summary_2: Mul_0, Assign_1 come first) and of w * x."""
    b = GraphBuilder("step")
    x = b.create_input(0, name="x", data_type=DataType.DT_FLOAT, shape=[2])
    w = b.create_variable(0, "w")
    new = Mul(w, x)
    Assign(w, new)
    Summary(w)
    Summary(new, name="new_w[:Tensor]")
    b.set_graph_output(new, 0)
    return b.build_and_reset()


def save_graph():
    b = GraphBuilder("save")
    Save([b.create_variable(0, "w")])
    return b.build_and_reset()


def x_tensor(values=(3.0, 0.5)):
    return Tensor(list(values), None, DataType.DT_FLOAT, Format.FORMAT_ND, [2])


def train_session(mode="1"):
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    session = Session({"ge.graphRunMode": mode})
    for graph_id, graph in enumerate((init_graph(), step_graph(), save_graph()), start=1):
        assert session.add_graph(graph_id, graph) == 0
    session.run_graph(1, [])
    return session


def test_summary_then_save_once_per_run_with_ge_py_tensors():
    session = train_session()
    calls = []
    session.register_callback_func("Summary", lambda gid, params: calls.append(("Summary", gid, params)) or 0)
    session.register_callback_func("Save", lambda gid, params: calls.append(("Save", gid, params)) or 0)
    [out] = session.run_graph(2, [x_tensor()])
    assert out.get_data() == [3.0, 1.0]  # the Summary tensors are taken out of the outputs in train mode
    [(kind, gid, params)] = calls
    assert (kind, gid) == ("Summary", 2) and sorted(params) == ["Summary_2", "new_w[:Tensor]"]
    assert all(isinstance(t, Tensor) for t in params.values())
    assert params["Summary_2"].get_data() == [1.0, 2.0] and params["new_w[:Tensor]"].get_data() == [3.0, 1.0]
    [saved] = session.run_graph(3, [])  # a Save's variables are outputs too (GE's SavePass)
    assert saved.get_data() == [3.0, 1.0]
    assert [c[0] for c in calls] == ["Summary", "Save"]
    assert calls[1][1] == 3 and calls[1][2]["w"].get_data() == [3.0, 1.0]


def test_prediction_mode_fires_nothing_and_returns_summaries_as_outputs():
    session = train_session("0")
    calls = []
    session.register_callback_func("Summary", lambda gid, params: calls.append(gid))
    outs = session.run_graph(2, [x_tensor()])
    assert [o.get_data() for o in outs] == [[3.0, 1.0], [1.0, 2.0], [3.0, 1.0]] and calls == []


def test_train_mode_without_a_summary_callback_fails_the_run():
    session = train_session()
    with pytest.raises(GeError, match="No summary callback found, graph_id:2"):
        session.run_graph(2, [x_tensor()])


def test_registration_errors():
    with pytest.raises(GeError, match=r"RegisterCallBackFunc failed; key=Summary; .*not initialized"):
        Session().register_callback_func("Summary", print)
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    session = Session()
    with pytest.raises(TypeError):
        session.register_callback_func(b"Summary", print)
    with pytest.raises(TypeError):
        session.register_callback_func("Summary", "print")
    with pytest.raises(GeError, match="key=Checkpoint"):
        session.register_callback_func("Checkpoint", print)
    assert session.register_callback_func("Save", print) == 0


def test_a_raising_callback_is_logged_and_the_run_succeeds():
    session = train_session()

    def broken(graph_id, params):
        raise RuntimeError("disk full")

    session.register_callback_func("Summary", broken)
    assert session.run_graph(2, [x_tensor()])[0].get_data() == [3.0, 1.0]


def read_events(logdir) -> EventAccumulator:
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_sinks_take_ge_py_tensors(tmp_path):
    session = train_session()
    with TensorBoardSummaryWriter(tmp_path / "tb") as tb, SafetensorsCheckpointWriter(tmp_path / "ck") as ck:
        session.register_callback_func("Summary", tb)
        session.register_callback_func("Save", ck)
        session.run_graph(2, [x_tensor((2.0, 2.0))])
        session.run_graph(3, [])
    tensors = read_events(tmp_path / "tb").Tensors("new_w")
    assert [e.step for e in tensors] == [0]
    np.testing.assert_array_equal(load_file(tmp_path / "ck" / "3-0.safetensors")["w"], [2.0, 4.0])


@pytest.mark.subprocess
def test_training_loop_example_writes_both_sinks(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(ROOT / "examples" / "gepy_train_loop.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "step 120: loss" in result.stdout
    events = read_events(tmp_path / "tb")
    losses = [e.value for e in events.Scalars("loss")]
    assert len(losses) == 120 and losses[-1] < 1e-4 < losses[0]
    assert len(events.Histograms("w")) == 120
    checkpoints = sorted((tmp_path / "ckpt").glob("3-*.safetensors"))
    assert [p.name for p in checkpoints] == ["3-0.safetensors", "3-1.safetensors", "3-2.safetensors"]
    last = load_file(checkpoints[-1])
    np.testing.assert_allclose(last["w"], [[2.0], [-3.0], [0.5]], atol=1e-3)
    np.testing.assert_allclose(last["b"], [1.0], atol=1e-3)


def test_a_callback_registered_again_replaces_the_one_a_planned_graph_fires():
    session = train_session()
    seen = []
    session.register_callback_func("Summary", lambda gid, params: seen.append("first") or 0)
    for _ in range(2):
        session.run_graph(2, [x_tensor((1.0, 1.0))])
    assert 2 in session._session._plans
    session.register_callback_func("Summary", lambda gid, params: seen.append(params["Summary_2"].get_data()) or 0)
    session.run_graph(2, [x_tensor((1.0, 1.0))])
    assert seen == ["first", "first", [1.0, 2.0]]
