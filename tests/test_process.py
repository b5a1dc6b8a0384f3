"""The whole process: reset forgets every table, a forked child's streams run, exit order is quiet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import acl
from openacl import process
from openacl.model.model import DEMO_MODEL
from openacl.runtime import handles, memory
from tests.model_io import ModelIO
from tests.plogs import plog_text

ROOT = Path(__file__).resolve().parents[1]
SUCCESS = 0


def test_regression_forced_reset_forgets_every_table(ctx):
    """A forced reset left host regions, data buffers, datasets and descs registered, so tests were not
    isolated. Every table now registers itself, and reset clears them all."""
    host, _ = acl.rt.malloc_host(64)
    array = np.zeros(16, np.uint8)
    acl.util.numpy_to_ptr(array)
    acl.create_data_buffer(host, 64)
    ModelIO(DEMO_MODEL)  # a model, a desc, two datasets, their buffers
    assert any(handles.table_sizes().values())
    process.reset(force=True)
    assert handles.table_sizes() == dict.fromkeys(handles.table_sizes(), 0)
    assert memory.space.regions() == []
    assert acl.rt.free_host(host) == 100000  # forgotten


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_forked_child_runs_its_stream_work(ctx, stream):
    """A forked child's memcpy_async waited on engine threads only the parent had. The engine is reset at fork."""
    src, _ = acl.rt.malloc_host(64)
    dst, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy_async(dst, 64, src, 64, 1, stream) == SUCCESS  # the parent's engine has workers now
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    acl.rt.memset(src, 64, 7, 64)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read)
            ok = acl.rt.memcpy_async(dst, 64, src, 64, 1, stream) == SUCCESS
            ok = ok and acl.rt.synchronize_stream_with_timeout(stream, 5_000) == SUCCESS
            ok = ok and acl.util.ptr_to_bytes(dst, 64) == b"\x07" * 64
            os.write(write, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = b""
        with os.fdopen(read, "rb") as pipe:
            answer = pipe.read()
    finally:
        _, status = os.waitpid(pid, 0)
    assert answer == b"ok" and os.WEXITSTATUS(status) == 0


def _run(*args: str, log_root: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("ASCEND_GLOBAL_LOG_LEVEL", None)  # CANN's default: errors are logged
    if log_root is not None:
        env["ASCEND_PROCESS_LOG_PATH"] = str(log_root)
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.subprocess
@pytest.mark.parametrize("finalize_in_del", [False, True])
def test_regression_late_finalizers_of_an_acllite_shaped_program_log_nothing(finalize_in_del):
    """acllite frees models, datasets and memory in __del__ methods that run after interpreter shutdown began;
    the atexit reset used to run first, so each of those calls logged 100000 / 100011 / 100037. At exit the
    runtime now only stops its threads and drops queued work; the late frees find their objects."""
    args = [str(ROOT / "tests" / "conformance" / "programs" / "late_finalizers.py"), str(DEMO_MODEL)]
    result = _run(*args, *(["--finalize-in-del"] if finalize_in_del else []))
    assert result.returncode == 0, result.stderr
    assert "ran; exiting with everything open" in result.stdout
    assert "failed" not in result.stdout, result.stdout
    assert result.stderr == "", result.stderr


@pytest.mark.subprocess
def test_stream_work_after_exit_began_gets_107022(tmp_path):
    script = tmp_path / "late.py"
    script.write_text(
        "import atexit, acl\n"
        "acl.rt.set_device(0)\n"
        "stream, _ = acl.rt.create_stream()\n"
        "host, _ = acl.rt.malloc_host(8)\n"
        "dev, _ = acl.rt.malloc(8, 0)\n"
        "class Late:\n"
        "    def __del__(self):\n"
        "        print('late', acl.rt.memcpy_async(dev, 8, host, 8, 1, stream))\n"
        "late = Late()\n"
    )
    result = _run(str(script), log_root=tmp_path / "log")
    assert result.returncode == 0, result.stderr
    assert "late 107022" in result.stdout
    assert plog_text(tmp_path / "log").count("ACL_ERROR_RT_DEVICE_TASK_ABORT(107022)") == 1  # with its reason
