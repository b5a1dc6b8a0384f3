"""The pytest plugin: off unless asked (``--openacl-check`` or the marker); a finding fails its test, with the
finding's lines in the failure text; ``openacl_clean`` leaves no openacl state behind."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess

PROGRAM = """
import acl
import pytest


def test_leaks_host_memory(openacl_clean):
    ptr, ret = acl.rt.malloc_host(16)
    assert ret == 0


@pytest.mark.openacl_check
def test_overruns_a_buffer(openacl_clean):
    assert acl.rt.set_device(0) == 0
    small, _ = acl.rt.malloc(8, 0)
    src, _ = acl.rt.malloc_host(16)
    assert acl.rt.memcpy(small, 16, src, 16, 1) == 0
    acl.rt.free(small)
    acl.rt.free_host(src)
    acl.rt.reset_device(0)


def test_releases_everything(openacl_clean):
    ptr, _ = acl.rt.malloc_host(16)
    assert acl.rt.free_host(ptr) == 0


def test_state_is_clean_after_the_fixture():
    from openacl.runtime import handles, memory

    assert not any(handles.table_sizes().values()) and memory.space.regions() == []
"""


def run_pytest(tmp_path, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text("import openacl\n\nopenacl.install()\n")
    (tmp_path / "test_app.py").write_text(PROGRAM)
    registered = any(e.name == "openacl" for e in importlib.metadata.entry_points(group="pytest11"))
    plugin = [] if registered else ["-p", "openacl.pytest_plugin"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_", "PYTEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", "-q", "-rfE", *args, "test_app.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, **extra_env},
    )


def test_off_unless_asked_only_the_marked_test_is_checked(tmp_path):
    result = run_pytest(tmp_path)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 3 passed in" in out
    assert "FAILED test_app.py::test_overruns_a_buffer" in out
    assert "openacl check: overrun: memcpy destination runs 8 bytes past the end of a 8-byte" in out
    assert "test_app.py:16 in test_overruns_a_buffer" in out  # the access
    assert "test_app.py:14 in test_overruns_a_buffer" in out  # the allocation


def test_openacl_check_option_checks_every_test(tmp_path):
    result = run_pytest(tmp_path, "--openacl-check")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    # A leak is known once the test's fixtures are torn down: the test errors at teardown, with the finding.
    assert "ERROR test_app.py::test_leaks_host_memory" in out
    assert "FAILED test_app.py::test_overruns_a_buffer" in out
    assert "1 host memory allocation still alive at the end of the test" in out
    assert "test_app.py:7 in test_leaks_host_memory" in out
    assert "1 failed, 3 passed, 1 error" in out


def test_regression_openacl_check_env_under_pytest_failed_no_test(tmp_path):
    """``OPENACL_CHECK=1 pytest`` turned checking on, but no test failed: the findings went to the captured
    stderr of passing tests, which pytest shows nobody. The variable now asks the plugin, as ``--openacl-check``."""
    result = run_pytest(tmp_path, OPENACL_CHECK="1")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "ERROR test_app.py::test_leaks_host_memory" in out
    assert "FAILED test_app.py::test_overruns_a_buffer" in out
    assert "1 failed, 3 passed, 1 error" in out
