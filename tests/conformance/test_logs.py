"""Where a program's log records go, as on an NPU: CANN's plog files, not the terminal."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tests.plogs import NAME, plog_files, plog_text

from openacl.model.model import DEMO_MODEL

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "programs" / "acllite_logs.py"
PROBE = "acl.mdl.get_input_index_by_name: ACL_ERROR_INVALID_PARAM(100000)"
LATE_FREE = "acl.media.dvpp_free: ACL_ERROR_INVALID_PARAM(100000)"


def run(*args: str, **variables: str) -> subprocess.CompletedProcess:
    """``openacl run`` of the acllite-shaped program with CANN's log variables set to ``variables`` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    env.update(variables)
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(PROGRAM), str(DEMO_MODEL), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_regression_an_acllite_program_printed_an_error_per_inference_and_at_exit(tmp_path):
    """acllite probes ``ascend_mbatch_shape_data`` on every inference and frees DVPP memory after the device reset;
    each logged error was printed on stderr. As on an NPU, the terminal shows only the program's output, and the
    records are in its plog file."""
    result = run(ASCEND_PROCESS_LOG_PATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines()[-1] == "done" and "ERROR" not in result.stdout
    (path,) = plog_files(tmp_path)
    assert NAME.fullmatch(path.name)
    text = path.read_text()
    assert text.count(PROBE) == 3 and text.count(LATE_FREE) == 1
    assert all(line.startswith("[ERROR] OPENACL(") for line in text.splitlines())


def test_the_default_log_root_is_home_ascend_log(tmp_path):
    result = run(HOME=str(tmp_path))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    root = tmp_path / "ascend" / "log"
    assert plog_text(root).count(PROBE) == 3
    (path,) = plog_files(root)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and stat.S_IMODE(path.parent.stat().st_mode) == 0o750


def test_print_to_stdout_prints_the_records_and_writes_no_file(tmp_path):
    result = run(ASCEND_PROCESS_LOG_PATH=str(tmp_path / "log"), ASCEND_SLOG_PRINT_TO_STDOUT="1")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.count(PROBE) == 3 and result.stdout.count(LATE_FREE) == 1
    assert not (tmp_path / "log").exists()


@pytest.mark.parametrize(("level", "records"), [("4", 0), ("3", 4), ("1", 4)])
def test_global_log_level_filters_the_file(tmp_path, level, records):
    result = run(ASCEND_PROCESS_LOG_PATH=str(tmp_path), ASCEND_GLOBAL_LOG_LEVEL=level)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    text = plog_text(tmp_path)
    assert text.count("[ERROR]") == records
    if records == 0:
        assert not tmp_path.joinpath("debug").exists()  # a program that logs nothing creates no file


def test_a_failed_program_names_its_log_file_on_stderr(tmp_path):
    result = run("--fail", ASCEND_PROCESS_LOG_PATH=str(tmp_path))
    assert result.returncode == 1
    (path,) = plog_files(tmp_path)
    # counted when the program ended: the late free in its last line was already logged
    assert result.stderr == f"openacl run: 4 error record(s) logged in {path}\n"


def run_script(tmp_path: Path, source: str, command: str = "run") -> subprocess.CompletedProcess:
    script = tmp_path / "prog.py"
    script.write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    env["ASCEND_PROCESS_LOG_PATH"] = str(tmp_path / "log")
    options = ["-o", str(tmp_path / "trace.json"), "--quiet"] if command == "trace" else []
    return subprocess.run(
        [sys.executable, "-m", "openacl", command, *options, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_failed_program_that_logged_nothing_says_nothing_more(tmp_path):
    result = run_script(tmp_path, "import sys\nimport acl\nsys.exit(3)\n")
    assert (result.returncode, result.stderr) == (3, "")
    assert not (tmp_path / "log").exists()


@pytest.mark.parametrize("command", ["run", "trace"])
def test_a_program_that_raises_gets_its_traceback_then_the_log_file(tmp_path, command):
    result = run_script(tmp_path, "import acl\nacl.rt.free(12345)\nraise RuntimeError('boom')\n", command)
    assert result.returncode == 1
    (path,) = plog_files(tmp_path / "log")
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and "RuntimeError: boom" in lines
    assert lines[-1] == f"openacl {command}: 1 error record(s) logged in {path}"
