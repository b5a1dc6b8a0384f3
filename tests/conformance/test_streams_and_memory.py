"""tests/conformance/programs/streams_and_memory.py, written like a runtime sample, runs unmodified: notifies between
streams, registered host memory, a reduction, a virtual-memory range and a VPC make-border."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "programs" / "streams_and_memory.py"


def test_streams_and_memory_program_runs_and_gets_its_numbers():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(PROGRAM)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "notify pipeline sum 32640",
        "virtual range round trip True",
        "border 16 inside 200",
        "done",
    ]
    assert result.stderr == ""
