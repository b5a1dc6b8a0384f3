"""tests/conformance/programs/device_report.py, a program written like an acllite-based sample, runs unmodified."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "programs" / "device_report.py"


def run(**env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    full_env["ASCEND_PROCESS_LOG_PATH"] = os.environ["ASCEND_PROCESS_LOG_PATH"]  # the suite's log directory
    full_env.update(env)
    full_env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(PROGRAM)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


def test_device_report_runs_and_sees_its_allocation():
    result = run(OPENACL_DEVICE_MEMORY_MB="256")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "soc Ascend310 align 128x16" in out
    total = 256 * 1024 * 1024
    assert f"memory free {total} total {total} hbm {total}/{total}" in out
    assert f"allocated {4 * 1024 * 1024} bytes" in out
    assert "round trip ok" in out
    assert "bad device ret 107001 last error 107001 then 0" in out
    assert "recent message mentions set_device: True" in out


def test_device_report_takes_the_other_branch_on_another_soc():
    result = run(OPENACL_SOC_NAME="Ascend310P3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "soc Ascend310P3 align 64x16" in result.stdout


def test_device_report_app_logs_reach_stdout_in_cann_format():
    result = run(ASCEND_SLOG_PRINT_TO_STDOUT="1", ASCEND_GLOBAL_LOG_LEVEL="1")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "resources ready" in line and line.startswith("[INFO]")]
    (line,) = lines
    assert "app_log:__init__.py:" in line and "[device_report.py:" in line and " init] resources ready" in line
    assert line.startswith("[INFO] APP(")


def test_device_report_app_logs_stay_quiet_at_the_default_level():
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [line for line in result.stdout.splitlines() if line.startswith("[INFO]")]
