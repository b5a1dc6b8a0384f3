"""CANN-style logging: level and destination from CANN's environment variables."""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path

import pytest

import acl
from openacl import log, plog
from tests.forking import held, in_child
from tests.plogs import NAME, plog_files, plog_text


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


def test_regression_app_log_lines_were_tagged_as_openacls_own(cann_env, capsys):
    """What a program writes with ``acl.app_log`` is CANN's APP module; its lines said OPENACL, like ours."""
    cann_env("1", "1")
    acl.app_log(3, "the program's own line")
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert line.startswith(f"[ERROR] APP({os.getpid()},python):") and '"the program\'s own line"' in line


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
    log.flush()
    with held([log._writer._queue.mutex]):

        def child() -> str:
            log._writer.put("child line\n")
            log.flush()
            return "wrote"

        assert in_child(child) == "wrote"
    assert "child line" in capfd.readouterr().out


# ----- plog files -----


@pytest.fixture
def plog_root(monkeypatch, tmp_path):
    """Log records of this test go to plog files under a directory of its own (``ASCEND_PROCESS_LOG_PATH``)."""
    root = tmp_path / "log"
    monkeypatch.setenv("ASCEND_PROCESS_LOG_PATH", str(root))
    monkeypatch.delenv("ASCEND_SLOG_PRINT_TO_STDOUT", raising=False)
    log.configure()
    yield root
    log.flush()
    monkeypatch.undo()
    log.configure()


def test_records_go_to_a_plog_file_named_as_cann_names_it(plog_root):
    assert not plog_root.exists()  # created at the first record, not before
    assert acl.rt.free(12345) == 100000
    (path,) = plog_files(plog_root)
    match = NAME.fullmatch(path.name)
    assert match and int(match.group(1)) == os.getpid()
    line = path.read_text().splitlines()[-1]
    assert line.startswith(f"[ERROR] OPENACL({os.getpid()},") and "acl.rt.free: ACL_ERROR_INVALID_PARAM(100000)" in line
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    for directory in (plog_root, plog_root / "debug", path.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o750
    assert log.logged_errors()[1] == str(path)


@pytest.mark.parametrize(
    ("variables", "where"),
    [
        ({"ASCEND_WORK_PATH": "work"}, "work/log"),
        ({"ASCEND_WORK_PATH": "work", "ASCEND_PROCESS_LOG_PATH": "explicit"}, "explicit"),
        ({"HOME": "home"}, "home/ascend/log"),
    ],
)
def test_the_log_root_follows_cann_priorities(monkeypatch, tmp_path, variables, where):
    for name in ("ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, str(tmp_path / value))
    assert plog.root_from_env() == str(tmp_path / where)


def test_global_log_level_decides_what_reaches_the_file(plog_root, monkeypatch):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "4")
    log.configure()
    assert acl.rt.free(12345) == 100000
    assert not plog_root.exists()
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "0")
    log.configure()
    log.get_logger("test").debug("a debug record")
    assert "[DEBUG] OPENACL(" in plog_text(plog_root)


def test_print_to_stdout_writes_no_file(plog_root, monkeypatch, capsys):
    monkeypatch.setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1")
    log.configure()
    assert acl.rt.free(12345) == 100000
    assert "acl.rt.free" in capsys.readouterr().out
    assert not plog_root.exists()


def test_runtime_threads_write_through_the_plog_writer(plog_root):
    """A runtime thread never writes the file itself (a slow disk must not stall a stream): its line reaches the
    file through the writer thread, written once the writer is flushed."""
    thread = threading.Thread(target=lambda: log.get_logger("test").error("from a runtime thread"), name="openacl-t")
    thread.start()
    thread.join()
    log.flush()
    assert "from a runtime thread" in plog_text(plog_root)


def test_files_rotate_at_their_cap_and_age_out_beyond_host_log_file_num(plog_root, monkeypatch):
    monkeypatch.setenv("ASCEND_HOST_LOG_FILE_NUM", "2")
    files = plog.PlogFiles(max_bytes=100)
    lines = [f"line {i:02d} " + "x" * 40 + "\n" for i in range(7)]  # 49 bytes: two to a file
    for line in lines:
        assert files.write(line) is None
    kept = plog_files(plog_root)
    assert len(kept) == 2 and all(path.stat().st_size <= 100 and NAME.fullmatch(path.name) for path in kept)
    assert plog_text(plog_root) == "".join(lines[4:])  # the newest files, whole lines in order


def test_an_unwritable_log_directory_is_said_once_on_stderr(plog_root, monkeypatch, capfd):
    blocker = plog_root.parent / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ASCEND_PROCESS_LOG_PATH", str(blocker / "log"))
    log.configure()
    for _ in range(3):
        assert acl.rt.free(12345) == 100000
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("openacl: cannot write the log file in "), err


def test_regression_errors_reached_stderr_through_pythons_last_resort_handler(plog_root, monkeypatch, capfd):
    """With no handler anywhere, Python's last-resort handler printed openacl's WARNING+ records on stderr; the
    ``openacl`` logger has a ``NullHandler`` (and the plog file handler), so it never falls back to it."""
    root_logger = logging.getLogger()
    monkeypatch.setattr(root_logger, "handlers", [])  # as in a program that configured no logging
    assert acl.rt.free(12345) == 100000
    assert capfd.readouterr().err == ""
    assert "acl.rt.free" in plog_text(plog_root)


def test_a_handler_the_program_attaches_gets_the_records(plog_root):
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("openacl").addHandler(handler)
    try:
        assert acl.rt.free(12345) == 100000
    finally:
        logging.getLogger("openacl").removeHandler(handler)
    assert any("acl.rt.free" in message for message in seen)


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_a_plog_file_of_its_own(plog_root):
    """The child's records go to a file named with its pid, even when it forked while another thread was writing
    the parent's file (the file's lock is renewed); the parent's file holds none of them."""
    log.get_logger("test").error("parent before fork")
    parent_file = log.logged_errors()[1]
    with held([log._files._guard, log._plog_handler.lock]):

        def child() -> str:
            log.get_logger("test").error("child record")
            errors, path = log.logged_errors()
            return f"{os.getpid()} {errors} {path}"

        pid, errors, child_file = in_child(child).split()
    log.get_logger("test").error("parent after fork")
    assert child_file != parent_file and NAME.fullmatch(os.path.basename(child_file)).group(1) == pid
    assert errors == "1"  # the child counts its own
    child_text = Path(child_file).read_text()
    assert child_text.count("OPENACL(") == 1 and "child record" in child_text
    parent_text = Path(parent_file).read_text()
    assert "child record" not in parent_text and "parent after fork" in parent_text
