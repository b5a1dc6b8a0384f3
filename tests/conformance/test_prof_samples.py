"""The profiling programs under programs/, written like Ascend's samples, run under ``openacl run``: a profiled
inference loop whose op_summary CSV lists every operator of every execution, and a model subscription whose
reader thread parses every operator record from the pipe."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import onnx
from tests.tools.convnet import conv_bn_relu_net

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def openacl_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", *args], cwd=ROOT, capture_output=True, text=True, timeout=180
    )


def _model(tmp_path: Path) -> tuple[Path, list[tuple[str, str]]]:
    proto = conv_bn_relu_net(blocks=4, size=16)
    path = tmp_path / "net.onnx"
    onnx.save(proto, path)
    return path, [(node.name, node.op_type) for node in proto.graph.node]


def test_a_profiled_inference_loop_lists_every_operator(tmp_path):
    model, ops = _model(tmp_path)
    result = tmp_path / "prof"
    loops = 4
    run = openacl_run(str(PROGRAMS / "prof_classify.py"), str(model), str(result), str(loops))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "done"
    (output,) = result.glob("PROF_*/mindstudio_profiler_output")
    (summary,) = output.glob("op_summary_*.csv")
    with open(summary, newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted({r["Infer ID"] for r in rows}) == [str(i) for i in range(1, loops + 1)]
    for infer in range(1, loops + 1):
        assert [(r["Op Name"], r["OP Type"]) for r in rows if r["Infer ID"] == str(infer)] == ops
    assert len({r["Stream ID"] for r in rows}) == 2  # execute on the default stream, execute_async on its own
    (task_time,) = output.glob("task_time_*.csv")
    with open(task_time, newline="") as f:
        kinds = [r["kernel_type"] for r in csv.DictReader(f)]
    assert kinds.count("MODEL_EXECUTE") == loops and kinds.count("MEMCPY_ASYNC") == 1
    assert len(list(output.glob("msprof_*.json"))) == 1


def test_a_subscriber_reads_every_operator_record_from_the_pipe(tmp_path):
    model, ops = _model(tmp_path)
    loops = 3
    run = openacl_run(str(PROGRAMS / "prof_subscribe.py"), str(model), str(loops))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == f"records {loops * len(ops)}"
    records = [line.split() for line in lines[:-1]]
    assert [(name, op_type) for _, _, name, op_type, *_ in records] == ops * loops
    for _, model_id, _, _, start, end, duration in records:
        assert model_id == "1"
        assert 0 < int(start) <= int(end) and int(duration) == int(end) - int(start)
