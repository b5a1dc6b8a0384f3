"""tests/conformance/programs/exception_callback.py, written like Ascend's samples, runs unmodified."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "programs" / "exception_callback.py"


def test_exception_callback_sample_reports_the_failed_copy():
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(PROGRAM)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "synchronize_stream returned 507053" in result.stdout
    assert "exception: device 0 stream" in result.stdout and "code 507053" in result.stdout
    assert "exception callback sample passed" in result.stdout
