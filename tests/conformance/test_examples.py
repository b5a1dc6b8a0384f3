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


def test_demo_reports_all_checks_passed():
    result = run("demo", "--callbacks", "200")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "440 callbacks on 2 streams" in result.stdout
    assert "all checks passed" in result.stdout


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
