"""Shared fixtures: ``import acl`` resolves to openacl, and every test leaves no runtime state or thread behind."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

# The suite's log records go to plog files of its own, never the home directory's (set before openacl reads it;
# subprocess tests inherit it), removed at the end unless the caller chose the directory.
LOG_ROOT = None if "ASCEND_PROCESS_LOG_PATH" in os.environ else tempfile.mkdtemp(prefix="openacl-test-log-")
if LOG_ROOT is not None:
    os.environ["ASCEND_PROCESS_LOG_PATH"] = LOG_ROOT

import openacl  # noqa: E402

openacl.install()

import acl  # noqa: E402  (resolves to openacl's facade)
from openacl import ge, process  # noqa: E402
from openacl.runtime import checker  # noqa: E402
from openacl.runtime import device as rt_device  # noqa: E402
from openacl.runtime.sched.task import work_task  # noqa: E402

OUR_THREADS = ("openacl-", "acl-util-thread")

# Tiers: a plain ``pytest`` runs the fast tier (under 25 s on 2 cores); ``pytest --all`` (the README's command,
# and CI, where CI=true) runs everything. Whole directories are tiered here; single tests carry the marker.
TIER_OF_DIRECTORY = {"reliability": "slow", "conformance": "subprocess"}
TIERED = ("slow", "subprocess")
TESTS = Path(__file__).resolve().parent


def pytest_addoption(parser):
    parser.addoption("--all", action="store_true", help="run every tier, slow and subprocess tests included")


def pytest_sessionfinish(session, exitstatus):
    if LOG_ROOT is not None:
        shutil.rmtree(LOG_ROOT, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    for item in items:
        top = Path(item.path).relative_to(TESTS).parts[0]
        if top in TIER_OF_DIRECTORY:
            item.add_marker(getattr(pytest.mark, TIER_OF_DIRECTORY[top]))
    run_all = config.getoption("--all") or os.environ.get("CI", "").lower() == "true" or config.getoption("-m")
    if run_all:
        return
    kept, skipped = [], []
    for item in items:
        (skipped if any(item.get_closest_marker(tier) for tier in TIERED) else kept).append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = kept


def _our_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(OUR_THREADS) and t.is_alive()]


@pytest.fixture(autouse=True)
def clean_runtime():
    """Reset the runtime after each test and fail the test if it left an openacl thread running."""
    yield
    process.reset(force=True)
    leftover = []
    for thread in _our_threads():
        thread.join(timeout=5)
        if thread.is_alive():
            leftover.append(thread.name)
    assert not leftover, f"test left threads running: {leftover}"


@pytest.fixture(autouse=True)
def ge_clean(clean_runtime):
    """Every test starts and ends with GE finalised, which stops session worker threads; it ends before
    ``clean_runtime`` resets the devices those sessions run on."""
    if ge.is_initialized():
        ge.ge_finalize()
    yield
    if ge.is_initialized():
        ge.ge_finalize()


@pytest.fixture
def ctx():
    """Device 0 set and a context created on it; returns the context handle."""
    assert acl.rt.set_device(0) == 0
    context, ret = acl.rt.create_context(0)
    assert ret == 0
    return context


@pytest.fixture
def stream(ctx):
    handle, ret = acl.rt.create_stream()
    assert ret == 0
    return handle


@pytest.fixture
def gate():
    """An event that a held stream waits for; set at the end of the test whatever happened."""
    event = threading.Event()
    yield event
    event.set()


def hold_stream(stream: int, gate: threading.Event) -> None:
    """Queue a task that holds ``stream`` until ``gate`` is set (through the runtime: pyACL has no such call)."""
    rt_device.resolve(stream).enqueue(work_task("gate", lambda: gate.wait(10)))


@pytest.fixture
def two_report_threads(ctx):
    """Two report threads, each serving a stream of its own: ``(threads, streams)``."""
    from tests.acl.test_callbacks import ReportThread

    threads = [ReportThread(ctx), ReportThread(ctx)]
    streams = [acl.rt.create_stream()[0] for _ in threads]
    for thread, s in zip(threads, streams, strict=True):
        assert acl.rt.subscribe_report(thread.tid, s) == 0
    yield threads, streams
    for thread, s in zip(threads, streams, strict=True):
        acl.rt.unsubscribe_report(thread.tid, s)
        thread.close()


@pytest.fixture
def acl_log(caplog):
    """Captures openacl's log records (the ``openacl`` logger propagates unless printing to stdout)."""
    caplog.set_level(logging.DEBUG, logger="openacl")
    return caplog


@pytest.fixture
def checking():
    """``openacl check`` on for one test, from a clean slate, and everything it found forgotten after."""
    checker.reset()
    checker.take_findings()
    checker.enable()
    try:
        yield
    finally:
        checker.enable(False)
        checker.reset()
        checker.take_findings()
