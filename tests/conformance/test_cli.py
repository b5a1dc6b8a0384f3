"""Every ``openacl`` subcommand driven as a user would: subprocesses, real files, bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from openacl import cli
from openacl.dump.reader import read_dump
from openacl.model.model import DEMO_MODEL

ROOT = Path(__file__).resolve().parents[2]


def openacl(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "openacl", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def dump_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".json"))


@pytest.mark.parametrize("command", ["demo", "run", "dump", "parse", "compare", "trace", "bench"])
def test_every_subcommand_has_help_with_an_example(command):
    result = openacl(command, "--help")
    assert result.returncode == 0
    assert "example:" in result.stdout and f"openacl {command}" in result.stdout


def test_demo_json_report_and_outputs(tmp_path):
    result = openacl("demo", "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["stream_callbacks"]["matching_onnxruntime"] == 48
    assert report["dump_callback"]["same_as_disk"]
    assert len(list((tmp_path / "ge" / "checkpoints").glob("*.safetensors"))) == 3
    assert list((tmp_path / "ge" / "tensorboard").glob("events.out.tfevents.*"))
    assert len(dump_files(tmp_path / "dump")) == report["dump_to_files"]["files"] == 11


def test_demo_unwritable_output_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = openacl("demo", "--out", str(blocker / "out"))
    assert result.returncode == 2
    assert result.stderr.startswith("openacl demo: cannot write under") and result.stderr.count("\n") == 1


# ----- dump -----


def test_dump_writes_a_golden_dump(tmp_path):
    result = openacl("dump", str(DEMO_MODEL), "-o", str(tmp_path), "--mode", "all", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    files = dump_files(tmp_path)
    assert summary["files"] == len(files) == 11 and summary["operators"] == 11
    conv = next(p for p in files if p.name.startswith("Conv._stem_conv_Conv."))
    assert len(read_dump(conv).inputs) == 3


def test_dump_with_given_input_layers_and_stats(tmp_path):
    x = np.ones((1, 3, 64, 64), np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    result = openacl(
        "dump", str(DEMO_MODEL), "-o", str(out), "--input", f"input={tmp_path / 'x.npy'}",
        "--layer", "/head/Softmax", "--stats",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (only,) = dump_files(out)
    assert only.name.startswith("Softmax._head_Softmax.") and only.suffix == ".csv"


def test_dump_is_deterministic_random_inputs(tmp_path):
    for name in ("a", "b"):
        assert openacl("dump", str(DEMO_MODEL), "-o", str(tmp_path / name), "--quiet").returncode == 0
    a, b = (next(p for p in dump_files(tmp_path / n) if p.name.startswith("Softmax")) for n in ("a", "b"))
    np.testing.assert_array_equal(read_dump(a).outputs[0], read_dump(b).outputs[0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.onnx", "-o", "{tmp}/o"], "openacl dump: no such file: missing.onnx"),
        ([str(DEMO_MODEL), "-o", "{tmp}/file/o"], "openacl dump: cannot create {tmp}/file/o"),
        ([str(DEMO_MODEL), "-o", "{tmp}/o", "--input", "nonsense"], "openacl dump: --input 'nonsense': expected"),
        ([str(DEMO_MODEL), "-o", "{tmp}/o", "--input", "nope={tmp}/x.npy"], "openacl dump: no input named 'nope'"),
        ([str(DEMO_MODEL), "-o", "{tmp}/o", "--input", "input={tmp}/x.npy"], "openacl dump: input input: float64"),
        (
            [str(DEMO_MODEL), "-o", "{tmp}/o", "--input", "input={tmp}/x32.npy"],
            "openacl dump: input input: shape [1, 3, 8, 8], model takes [1, 3, 64, 64]",
        ),
    ],
    ids=[
        "missing-model", "unwritable-output", "bad-input-flag", "unknown-input", "wrong-dtype", "wrong-shape",
    ],
)  # fmt: skip
def test_dump_bad_arguments_are_one_line(tmp_path, args, message):
    (tmp_path / "junk.onnx").write_bytes(b"\x00\xff garbage" * 20)
    (tmp_path / "file").write_text("x")
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 64, 64)))
    np.save(tmp_path / "x32.npy", np.zeros((1, 3, 8, 8), np.float32))
    result = openacl("dump", *(a.format(tmp=tmp_path) for a in args))
    assert result.returncode == 2
    assert result.stderr.startswith(message.format(tmp=tmp_path)), result.stderr
    assert result.stderr.count("\n") == 1


def _reshape_model(path: Path) -> Path:
    """``reshape(x, s)``: loads, and fails at execution when ``s`` does not fit ``x``."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
        "reshape",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _zipmap_model(path: Path) -> Path:
    from tests.model.test_strings_sequences import zipmap_classifier

    return zipmap_classifier(path)


@pytest.mark.parametrize(
    ("build", "extra", "message"),
    [
        (lambda p: p.write_bytes(b"\x00\xff garbage" * 20) and p, [], "openacl dump: {model}: not an ONNX model"),
        (_zipmap_model, [], "openacl dump: 'output_probability' is a sequence, not a tensor"),
        (_reshape_model, ["--input", "s={tmp}/s.npy"], "openacl dump: model 1 (model): execution failed: "),
    ],
    ids=["not-a-model", "unsupported-output", "execution-fails"],
)
def test_dump_load_and_execution_failures_exit_1_with_one_line(tmp_path, build, extra, message):
    """Regression (issue 15 item 12): load and execution failures exited 2, the code for bad arguments."""
    model = tmp_path / "model.onnx"
    build(model)
    np.save(tmp_path / "s.npy", np.array([5], np.int64))
    result = openacl("dump", str(model), "-o", str(tmp_path / "o"), *(a.format(tmp=tmp_path) for a in extra))
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(message.format(model=model)), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_dump_on_random_inputs_that_a_model_refuses_says_so(tmp_path):
    """An embedding whose table is smaller than the random indices: the one line names the random inputs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["y"], name="embedding")],
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 2])],
        [table],
    )
    model = tmp_path / "embedding.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    result = openacl("dump", str(model), "-o", str(tmp_path / "o"))
    assert result.returncode == 1, result.stderr
    assert result.stderr.endswith("(random values for ids: give real ones with --input NAME=FILE.npy)\n")
    np.save(tmp_path / "ids.npy", np.array([0, 1, 2, 3, 2, 1], np.int64))
    given = openacl("dump", str(model), "-o", str(tmp_path / "o"), "--input", f"ids={tmp_path / 'ids.npy'}")
    assert given.returncode == 0, given.stderr


# ----- run --dump -----


PROGRAM = """
import acl, numpy as np
acl.init(); acl.rt.set_device(0)
model_id, ret = acl.mdl.load_from_file({model!r})
x = np.ones((1, 3, 64, 64), np.float32); p = np.zeros(10, np.float32); l = np.zeros(10, np.float32)
def dataset(*arrays):
    d = acl.mdl.create_dataset()
    for a in arrays:
        acl.mdl.add_dataset_buffer(d, acl.create_data_buffer(acl.util.numpy_to_ptr(a), a.nbytes))
    return d
assert acl.mdl.execute(model_id, dataset(x), dataset(p, l)) == 0
acl.finalize()
print("argmax", int(p.argmax()))
"""


def test_run_dump_turns_on_dumping_for_an_unmodified_program(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(PROGRAM.format(model=str(DEMO_MODEL)))
    (tmp_path / "dump").mkdir()
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_list": [{}]}}))
    plain = openacl("run", str(script))
    assert plain.returncode == 0, plain.stderr
    assert dump_files(tmp_path / "dump") == []
    dumped = openacl("run", "--dump", str(config), str(script))
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout == plain.stdout
    assert len(dump_files(tmp_path / "dump")) == 11


def test_run_dump_with_a_bad_config_is_one_line(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("print('never runs')")
    config = tmp_path / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path), "dump_mode": "sideways"}}))
    result = openacl("run", "--dump", str(config), str(script))
    assert result.returncode == 2 and "never runs" not in result.stdout
    assert result.stderr.startswith(f"openacl run: --dump {config}: dump_mode") and result.stderr.count("\n") == 1


# ----- bench -----


def _bench_dir(tmp_path: Path, monkeypatch) -> Path:
    """A benchmarks/ directory with the real row rules (_common.py) and a helper that is not a benchmark."""
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "_common.py").write_text((ROOT / "benchmarks" / "_common.py").read_text())
    (bench / "_helper.py").write_text("raise SystemExit('helpers are not benchmarks')\n")
    monkeypatch.setattr(cli, "benchmarks_dir", lambda: bench)
    return bench


def _row_script(rows: list[dict]) -> str:
    return f"import json, sys\nprint('noise')\nprint(json.dumps({rows!r}))\n"


def _ratio_per_run_script(counter: Path, ratios: list[float], target: str) -> str:
    """A benchmark whose one row's ratio is ``ratios[k]`` on its k-th run (a file counts the runs)."""
    return (
        "import json, pathlib\n"
        f"counter = pathlib.Path({str(counter)!r})\n"
        "k = int(counter.read_text()) if counter.exists() else 0\n"
        "counter.write_text(str(k + 1))\n"
        f"ratio = {ratios!r}[k]\n"
        "print(json.dumps([{'figure': '(a) thing', 'openacl': f'{ratio} ms', 'baseline': '1 ms', 'ratio': ratio, "
        f"'target': {target!r}}}]))\n"
    )


def test_bench_collects_every_script_into_one_table(tmp_path, monkeypatch, capsys):
    bench = _bench_dir(tmp_path, monkeypatch)
    row = {"figure": "(a) thing", "openacl": "1 ms", "baseline": "1 ms", "ratio": 1.0, "target": "<= 1.1"}
    (bench / "one.py").write_text(_row_script([row]))
    (bench / "two.py").write_text("import sys\nsys.exit('two: broke')\n")
    assert cli.main(["bench", "--json"]) == 1
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["rows"] == [{"benchmark": "one", **row, "within": True}]  # within: read from the target
    assert document["failed"] == [{"benchmark": "two", "error": "two: broke"}]
    assert "openacl bench: two failed: two: broke" in err


def test_bench_table_shows_target_within_and_flags_a_spread_over_20_percent(tmp_path, monkeypatch, capsys):
    bench = _bench_dir(tmp_path, monkeypatch)
    steady = {"figure": "(a) steady", "openacl": "1 ms", "baseline": "1 ms", "ratio": 1.05, "target": "<= 1.1"}
    steady["spread"] = [1.0, 1.1]
    noisy = {"figure": "(b) noisy", "openacl": "3 ms", "baseline": "1 ms", "ratio": 3.0, "target": "<= 2.0"}
    noisy["spread"], noisy["moved"] = [2.0, 4.0], True
    latency = {"figure": "(c) p50", "openacl": "9 us", "baseline": "5 us", "ratio": 1.8, "target": "p50 <= 20 us"}
    latency["within"] = True
    (bench / "one.py").write_text(_row_script([steady, noisy, latency]))
    monkeypatch.setenv("COLUMNS", "200")
    assert cli.main(["bench"]) == 0
    out = capsys.readouterr().out
    lines = {name: next(line for line in out.splitlines() if name in line) for name in ("steady", "noisy", "p50")}
    assert "yes" in lines["steady"] and "1.00-1.10" in lines["steady"] and "moved" not in lines["steady"]
    assert "NO" in lines["noisy"] and "2.00-4.00 moved" in lines["noisy"]
    assert "yes" in lines["p50"] and "p50 <= 20 us" in lines["p50"]


def test_bench_runs_the_named_scripts_several_times_and_gives_each_row_its_spread(tmp_path, monkeypatch, capsys):
    bench = _bench_dir(tmp_path, monkeypatch)
    (bench / "steady.py").write_text(_ratio_per_run_script(tmp_path / "steady.count", [1.0, 1.02, 1.04], "<= 1.1"))
    (bench / "noisy.py").write_text(_ratio_per_run_script(tmp_path / "noisy.count", [1.0, 1.5, 1.2], "<= 1.3"))
    (bench / "skipped.py").write_text("import sys\nsys.exit('not asked for')\n")
    assert cli.main(["bench", "noisy", "steady", "--runs", "3", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["runs"] == 3 and document["failed"] == []
    steady, noisy = (next(r for r in document["rows"] if r["benchmark"] == name) for name in ("steady", "noisy"))
    assert [r["benchmark"] for r in document["rows"]] == ["noisy", "steady"]  # in the order asked for
    assert steady["runs"] == [1.0, 1.02, 1.04] and steady["ratio"] == 1.02 and steady["openacl"] == "1.02 ms"
    assert steady["spread"] == [1.0, 1.04] and steady["moved"] is False and steady["within"] is True
    assert noisy["runs"] == [1.0, 1.5, 1.2] and noisy["ratio"] == 1.2 and noisy["spread"] == [1.0, 1.5]
    assert noisy["moved"] is True  # 0.5 / 1.2 > 20 %
    assert noisy["within"] is False  # one run of three was over its target


def test_bench_refuses_an_unknown_benchmark_or_no_runs(tmp_path, monkeypatch, capsys):
    bench = _bench_dir(tmp_path, monkeypatch)
    (bench / "one.py").write_text(_row_script([]))
    assert cli.main(["bench", "nope"]) == 2
    assert "openacl bench: no benchmark named nope (there are: one)" in capsys.readouterr().err
    assert cli.main(["bench", "--runs", "0"]) == 2
    assert "--runs 0" in capsys.readouterr().err


def test_bench_callbacks_prints_every_row_with_its_target_within_and_spread():
    """The real script, run the way `openacl bench callbacks` runs it (no timing asserted: only the rows)."""
    result = openacl("bench", "callbacks", "--quick", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["figure"]: row for row in json.loads(result.stdout)["rows"]}
    for figure, target in (
        ("(a) BLOCK callback round trip", "<= 1.5"),
        ("(b) NO_BLOCK callbacks per second vs (b1)", "<= 4.0"),
        ("(c) reached -> started p50", "p50 <= 20 µs"),
    ):
        row = rows[figure]
        assert row["benchmark"] == "callbacks" and row["target"] == target
        assert isinstance(row["within"], bool) and isinstance(row["moved"], bool)
        low, high = row["spread"]
        assert low <= row["ratio"] <= high
    assert "(b1) bare Python queue, 1 lock, vs SimpleQueue" in rows


def test_bench_prints_every_row_of_the_fixed_costs_table():
    """Issue 26's table: start-up, acl.op Add [16] and [256, 1024], GE and GE-PY tiny graphs, NO_BLOCK callbacks,
    each with its target and (where the target is on the ratio) whether it is within it. Rows only, no timing."""
    result = openacl("bench", "startup", "op", "ge", "callbacks", "--quick", "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]

    def found(benchmark: str, *words: str) -> list[dict]:
        return [r for r in rows if r["benchmark"] == benchmark and all(w in r["figure"] for w in words)]

    for benchmark, words in (
        ("startup", ("hello.py",)),
        ("op", ("Add [16]", "execute_v2")),
        ("op", ("Add [256, 1024]", "execute_v2")),
        ("ge", ("run_graph", "tiny graph")),
        ("ge", ("GE-PY", "tiny graph")),
        ("callbacks", ("NO_BLOCK", "per second")),
    ):
        assert found(benchmark, *words), (benchmark, words, [r["figure"] for r in rows])
    for row in rows:
        assert {"figure", "openacl", "baseline", "ratio", "target"} <= row.keys()
        if row["target"].startswith("<="):
            assert isinstance(row["within"], bool), row


# ----- compare -----


def _perturb(path: Path) -> None:
    """Rewrite one dump file with its first output changed, as a diverging NPU run would have it."""
    from openacl.dump.format import file_parts

    dumped = read_dump(path)
    outputs = [o.copy() for o in dumped.outputs]
    outputs[0].reshape(-1)[: max(1, outputs[0].size // 2)] += 0.5
    path.write_bytes(b"".join(bytes(p) for p in file_parts(dumped.op_name, dumped.inputs, outputs, dumped.dump_time)))


def test_compare_finds_the_first_divergence(tmp_path):
    for name in ("golden", "npu"):
        assert openacl("dump", str(DEMO_MODEL), "-o", str(tmp_path / name), "--quiet").returncode == 0
    same = openacl("compare", str(tmp_path / "npu"), str(tmp_path / "golden"), "--csv", str(tmp_path / "same.csv"))
    assert same.returncode == 0, same.stderr
    assert "no tensor passes the threshold" in same.stdout
    sigmoid = next(p for p in dump_files(tmp_path / "npu") if p.name.startswith("Sigmoid."))
    _perturb(sigmoid)
    result = openacl("compare", str(tmp_path / "npu"), str(tmp_path / "golden"), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["first_divergence"]["op_name"] == "/block/act/Sigmoid"
    assert report["first_divergence"]["tensor"] == "output.0"
    rows = [r for r in report["rows"] if r["exceeds"]]
    assert rows[0]["op_name"] == "/block/act/Sigmoid"  # earlier operators agree: this is where it starts
    csv_lines = (tmp_path / "same.csv").read_text().splitlines()
    assert csv_lines[0].startswith("Index,OpType,OpName,Tensor") and len(csv_lines) == 12


def test_compare_bad_arguments(tmp_path):
    result = openacl("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.returncode == 2
    assert result.stderr == f"openacl compare: no such file or directory: {tmp_path / 'a'}\n"


# ----- trace -----


def test_trace_writes_a_timeline_and_summarizes_it(tmp_path):
    out = tmp_path / "trace.json"
    result = openacl("trace", "-o", str(out), "--json", str(ROOT / "examples" / "stream_callbacks.py"))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["categories"]["callback"]["count"] == 8
    events = json.loads(out.read_text())["traceEvents"]
    assert {e["cat"] for e in events if e["ph"] == "X"} >= {"callback", "task", "sync"}


def test_run_trace_and_env_variable(tmp_path):
    import os

    script = tmp_path / "app.py"
    script.write_text(PROGRAM.format(model=str(DEMO_MODEL)))
    assert openacl("run", "--trace", str(tmp_path / "a.json"), str(script)).returncode == 0
    events = json.loads((tmp_path / "a.json").read_text())["traceEvents"]
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)
    env = {**os.environ, "OPENACL_TRACE": str(tmp_path / "b.json")}
    assert openacl("run", str(ROOT / "examples" / "stream_callbacks.py"), env=env).returncode == 0
    assert any(e.get("cat") == "callback" for e in json.loads((tmp_path / "b.json").read_text())["traceEvents"])


def test_trace_missing_script(tmp_path):
    result = openacl("trace", "-o", str(tmp_path / "t.json"), str(tmp_path / "nope.py"))
    assert result.returncode == 2 and result.stderr.startswith("openacl trace: no such file")


@pytest.mark.parametrize(
    "argv", [["run", "app.py"], ["run", "app.py", "-h", "--dump", "x"], ["run", "app.py", "a", "--trace"], ["run", ""]]
)
def test_a_plain_run_is_what_the_parser_reads(argv):
    assert vars(cli.plain_run(argv)) == vars(cli.build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [["run", "--dump", "d.json", "app.py"], ["run", "--", "app.py"], ["run", "app.py", "--", "x"], ["run"], ["demo"]],
)
def test_any_other_command_line_goes_to_the_parser(argv):
    assert cli.plain_run(argv) is None


def test_regression_openacl_run_built_every_parser_and_imported_shutil(tmp_path):
    """``openacl run app.py`` imported argparse and built all eight subcommands' parsers, whose help width argparse
    reads through shutil (with bz2 and lzma), before the program's first line ran."""
    app = tmp_path / "app.py"
    app.write_text("import json, sys\nprint(json.dumps([m for m in ('argparse', 'shutil') if m in sys.modules]))\n")
    done = openacl("run", str(app))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert openacl("run", "--help").stdout.startswith("usage: openacl run [-h] [--dump CONFIG.json]")
