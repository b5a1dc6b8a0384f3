"""CANN-style logging: level and destination from CANN's environment variables."""

from __future__ import annotations

import logging
import os

import pytest

import acl
from openacl import log
from tests.forking import held, in_child


@pytest.mark.parametrize(
    ("value", "level"),
    [("0", logging.DEBUG), ("1", logging.INFO), ("2", logging.WARNING), ("3", logging.ERROR), ("x", logging.ERROR)],
)
def test_level_from_env(monkeypatch, value, level):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", value)
    assert log.level_from_env() == level


@pytest.fixture
def cann_env(monkeypatch):
    """Set CANN's log variables for one test, then put the logger back as the environment was."""

    def apply(level: str, to_stdout: str) -> None:
        monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", level)
        monkeypatch.setenv("ASCEND_SLOG_PRINT_TO_STDOUT", to_stdout)
        log.configure()

    yield apply
    monkeypatch.undo()
    log.configure()
    assert log.root.propagate


def test_level_4_silences_everything(cann_env, capsys):
    cann_env("4", "1")
    assert acl.rt.set_device(1000) == 107001
    assert capsys.readouterr().out == ""


def test_stdout_lines_use_cann_format(cann_env, capsys):
    cann_env("1", "1")
    assert acl.rt.process_report(0) == 100000
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert out[0].startswith("[ERROR] OPENACL(")
    assert "acl.rt.process_report: ACL_ERROR_INVALID_PARAM(100000)" in out[0]


def test_each_returned_error_is_logged_once(acl_log):
    assert acl.rt.free(12345) == 100000
    lines = [r for r in acl_log.records if "acl.rt.free" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelname == "ERROR"


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_fork_while_the_stdout_writer_held_its_queue_hung_the_childs_first_line(capfd):
    """The stdout writer's queue was the parent's in a forked child: forked while another thread held the queue's
    mutex (putting or taking a line), the child's first stdout line waited for it for ever. The writer is renewed
    at fork, with a queue of the child's."""
    log._writer.put("parent line\n")
    log.flush_stdout()
    with held([log._writer._queue.mutex]):

        def child() -> str:
            log._writer.put("child line\n")
            log.flush_stdout()
            return "wrote"

        assert in_child(child) == "wrote"
    assert "child line" in capfd.readouterr().out
