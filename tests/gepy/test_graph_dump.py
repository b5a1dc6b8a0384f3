"""``Graph.dump_to_file`` / ``dump_to_stream``: GE's file names, ONNX text with GE's node types, GE proto text."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import onnx
import pytest
from ge.es.all import Relu
from ge.es.graph_builder import GraphBuilder
from ge.graph import DumpFormat, Graph
from google.protobuf import text_format


def graph():
    b = GraphBuilder("Dumped")
    x = b.create_input(0, name="x")
    b.set_graph_output(Relu(x), 0)
    return b.build_and_reset()


def test_names_and_contents(tmp_path, monkeypatch):
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path))
    g = graph()
    g.dump_to_file(format=DumpFormat.kOnnx, suffix="one")
    g.dump_to_file(format=DumpFormat.kTxt, suffix="one")
    g.dump_to_file(suffix="one")
    names = sorted(p.name for p in tmp_path.iterdir())
    onnx_name = next(n for n in names if n.startswith("ge_onnx_"))
    m = re.fullmatch(r"ge_onnx_(\d{8})_graph_0_one\.pbtxt", onnx_name)
    assert m
    first = int(m[1])
    assert f"ge_proto_{first + 1:08d}_one.txt" in names and f"ge_readable_{first + 2:08d}_one.txt" in names
    model = text_format.Parse((tmp_path / onnx_name).read_text(), onnx.ModelProto())
    assert [n.op_type for n in model.graph.node] == ["Data", "Relu", "NetOutput"]
    assert model.graph.node[-1].name == "NetOutput_Dumped"


def test_stream_and_type_errors():
    g = graph()
    assert 'type: "Relu"' in g.dump_to_stream(DumpFormat.kTxt)
    assert "Relu_0: Relu(x)" in str(g)
    with pytest.raises(TypeError):
        g.dump_to_file(format=1)
    with pytest.raises(TypeError):
        g.dump_to_file(suffix=3)
    with pytest.raises(TypeError):
        Graph(1)
    assert Graph("empty").name == "empty" and Graph().get_all_nodes() == []


# Fills the "disk" for real: RLIMIT_FSIZE makes every write past the limit fail with EFBIG, as ENOSPC does on a
# full disk, once the interpreter has imported what it needs.
_DUMP_ON_A_FULL_DISK = """
import os, resource, signal, sys
import openacl
openacl.install()
from ge.es.all import Relu
from ge.es.graph_builder import GraphBuilder
from ge.graph import DumpFormat

b = GraphBuilder("Big")
x = b.create_input(0, name="x")
for _ in range(300):
    x = Relu(x)
b.set_graph_output(x, 0)
graph = b.build_and_reset()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
for fmt in (DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable):
    try:
        graph.dump_to_file(format=fmt, suffix="full")
    except RuntimeError as exc:
        print("refused:", exc)
"""


@pytest.mark.subprocess
def test_regression_graph_dump_to_file_left_a_truncated_file_when_the_disk_filled(tmp_path):
    out = tmp_path / "dumps"
    env = {**os.environ, "DUMP_GRAPH_PATH": str(out)}
    done = subprocess.run(
        [sys.executable, "-c", _DUMP_ON_A_FULL_DISK], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("refused: Failed to dump graph Big") == 3, done.stdout + done.stderr
    assert "File too large" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == []  # no truncated dump, no temporary file
