"""pyACL programs written against `import acl` run unmodified under `openacl run`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "openacl", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_stream_callback_sample_runs_unmodified():
    result = run("run", "examples/stream_callbacks.py")
    assert result.returncode == 0, result.stderr
    assert "8 BLOCK callbacks ran in stream order" in result.stdout
    assert "callback 7: (7, 49, -7, 7)" in result.stdout


def test_run_passes_arguments_and_exit_code(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys, acl\nassert acl.rt.set_device(0) == 0\nprint('args', sys.argv[1:])\nsys.exit(3)\n")
    result = run("run", str(script), "--device", "0")
    assert result.returncode == 3
    assert "args ['--device', '0']" in result.stdout


def test_run_missing_script_is_one_clear_line():
    result = run("run", "no/such/script.py")
    assert result.returncode == 2
    assert result.stderr.strip() == "openacl run: no such file: no/such/script.py"


def test_acl_is_not_importable_without_install():
    result = subprocess.run([sys.executable, "-c", "import acl"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "No module named 'acl'" in result.stderr


def test_demo_reports_all_checks_passed(tmp_path):
    result = run("demo", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 callback systems in" in result.stdout and "all checks passed" in result.stdout
    assert "openacl parse " in result.stdout and "tensorboard --logdir" in result.stdout


def test_slog_print_to_stdout_prints_cann_format_lines(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import acl\nprint('ret', acl.rt.set_device(99))\n")
    env = {"ASCEND_SLOG_PRINT_TO_STDOUT": "1", "ASCEND_GLOBAL_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert "ret 107001" in result.stdout
    line = next(line for line in result.stdout.splitlines() if "ACL_ERROR_RT_INVALID_DEVICEID" in line)
    assert line.startswith("[ERROR] OPENACL(")
    assert "acl.rt.set_device: ACL_ERROR_RT_INVALID_DEVICEID(107001)" in line


def test_dump_callback_sample_runs_unmodified(tmp_path):
    from openacl.model.model import DEMO_MODEL

    result = run("run", str(ROOT / "examples" / "dump_callback.py"), str(DEMO_MODEL), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "11 dump files" in result.stdout
    assert "Conv._stem_conv_Conv.0." in result.stdout
    assert list(tmp_path.iterdir()) == []  # a callback is registered: nothing on disk


def test_parse_command_converts_a_dump(tmp_path):
    import json

    from openacl.model.model import DEMO_MODEL

    (tmp_path / "dump").mkdir()
    cfg = tmp_path / "acl.json"
    cfg.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_list": [{}]}}))
    script = tmp_path / "prog.py"
    script.write_text(
        "import acl, numpy as np\n"
        f"acl.init({str(cfg)!r}); acl.rt.set_device(0)\n"
        f"m, _ = acl.mdl.load_from_file({str(DEMO_MODEL)!r})\n"
        "x = np.ones((1, 3, 64, 64), np.float32); out = np.zeros(10, np.float32); out2 = np.zeros(10, np.float32)\n"
        "def ds(*arrays):\n"
        "    d = acl.mdl.create_dataset()\n"
        "    for a in arrays:\n"
        "        acl.mdl.add_dataset_buffer(d, acl.create_data_buffer(acl.util.numpy_to_ptr(a), a.nbytes))\n"
        "    return d\n"
        "assert acl.mdl.execute(m, ds(x), ds(out, out2)) == 0\n"
        "acl.finalize()\n"
    )
    assert run("run", str(script)).returncode == 0
    result = run("parse", str(tmp_path / "dump"), "-o", str(tmp_path / "npy"))
    assert result.returncode == 0, result.stderr
    assert "11 dump files -> 11 .npy files" in result.stdout
    assert len(list((tmp_path / "npy").glob("*.output.0.npy"))) == 11


def test_parse_command_bad_arguments(tmp_path):
    result = run("parse", str(tmp_path / "missing"), "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"openacl parse: no such file or directory: {tmp_path / 'missing'}"
    (tmp_path / "junk").write_bytes(b"\x05" * 40)
    result = run("parse", str(tmp_path / "junk"), "-o", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 1 and "junk" in result.stderr
