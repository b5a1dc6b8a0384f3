"""CANN-style logging: level and destination from CANN's environment variables."""

from __future__ import annotations

import logging

import pytest

import acl
from openacl import log


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
