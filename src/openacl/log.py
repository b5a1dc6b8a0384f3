"""CANN-style logging for openacl.

CANN reads its log level from ``ASCEND_GLOBAL_LOG_LEVEL`` (0 debug, 1 info, 2 warning, 3 error, 4 null;
default 3) and writes its records to log files (``plog.py``: ``$HOME/ascend/log/debug/plog/plog-<pid>_<time>.log``,
moved by ``ASCEND_PROCESS_LOG_PATH``), or to stdout instead when ``ASCEND_SLOG_PRINT_TO_STDOUT=1``. openacl does
the same, in CANN's line format. Records also go through Python ``logging`` under the ``openacl`` logger (it
propagates), so a program that attaches a handler routes them like any other library's logs; a ``NullHandler``
keeps Python's last-resort handler from printing them to stderr when nothing is attached.

Application logs (``acl.app_log``) go to CANN's APP module, here the ``openacl.app`` logger. Its level follows
``ASCEND_GLOBAL_LOG_LEVEL`` unless ``ASCEND_MODULE_LOG_LEVEL`` names the module (``APP=0:GE=3``).

Invariant: neither handler of ours makes a runtime thread (``openacl-*``) wait for a file or a pipe: their lines go
to a writer thread; a program's own threads write directly, in order.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable

from openacl import atfork, plog

LOGGER_NAME = "openacl"
_NULL_LEVEL = logging.CRITICAL + 10
_CANN_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR, 4: _NULL_LEVEL}
_CANN_NAMES = {
    logging.DEBUG: "DEBUG",
    logging.INFO: "INFO",
    logging.WARNING: "WARNING",
    logging.ERROR: "ERROR",
}

root = logging.getLogger(LOGGER_NAME)
app = root.getChild("app")  # CANN's APP module: what programs write with acl.app_log
APP_LOGGER = app.name

# acl.app_log levels (aclLogLevel): 0 debug, 1 info, 2 warning, 3 error. Other values are dropped silently.
APP_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}
MAX_LOG_STRING = 1024  # CANN's cap on one log record, header included, in bytes
TRUNCATED = "...[truncated]"


class CannFormatter(logging.Formatter):
    """``[ERROR] OPENACL(pid,python):2026-12-02-12:05:47.123.456 [stream.py:42]140234 message``.

    The module is ``APP`` for what a program writes with ``acl.app_log`` (CANN records it under its APP module),
    ``OPENACL`` for openacl's own records (CANN's would name ACL, RUNTIME, GE, ...: one name says they are ours).
    """

    def format(self, record: logging.LogRecord) -> str:
        seconds = int(record.created)
        micros = int((record.created - seconds) * 1_000_000)
        stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(seconds))
        level = _CANN_NAMES.get(record.levelno, record.levelname)
        module = "APP" if record.name == APP_LOGGER else "OPENACL"
        line = (
            f"[{level}] {module}({record.process},python):{stamp}.{micros // 1000:03d}.{micros % 1000:03d} "
            f"[{record.filename}:{record.lineno}]{record.thread} {record.getMessage()}"
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


RUNTIME_THREAD_PREFIX = "openacl-"


def _on_runtime_thread(record: logging.LogRecord) -> bool:
    return bool(record.threadName and record.threadName.startswith(RUNTIME_THREAD_PREFIX))


class _LineWriter:
    """The thread that writes runtime threads' log lines to one sink (stdout, the plog file); at most ``LIMIT``
    lines wait, and lines beyond that are counted and dropped (one line says how many) rather than held without
    bound."""

    LIMIT = 10_000

    def __init__(self, name: str, write: Callable[[str], None], sink: str) -> None:
        self._name = name
        self._write = write
        self._sink = sink
        self._queue: queue.Queue[str | None] = queue.Queue(self.LIMIT)
        self._thread: threading.Thread | None = None
        self._dropped = 0
        self._guard = atfork.lock()

    def put(self, line: str) -> None:
        try:
            with self._guard:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                    self._thread.start()
        except RuntimeError:  # the interpreter is shutting down: no thread can start, and nothing else runs
            self._write(line)
            return
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            with self._guard:
                self._dropped += 1

    def _run(self) -> None:
        while True:
            line = self._queue.get()
            if line is None:
                return
            with self._guard:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                self._write(f"[WARNING] OPENACL: {dropped} log line(s) dropped: {self._sink} did not keep up\n")
            self._write(line)

    def stop(self, timeout: float = 1.0) -> None:
        """Write what waits (for at most ``timeout`` seconds: the sink may be stalled), then end the thread."""
        with self._guard:
            thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        thread.join(timeout)

    def renew_in_child(self) -> None:
        """A forked child: the thread is the parent's, and so are the lines it had queued (written once, there)."""
        self._queue = queue.Queue(self.LIMIT)
        self._thread = None
        self._dropped = 0


def _write_stdout(line: str) -> None:
    try:
        sys.stdout.write(line)
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass  # stdout closed or broken: nothing else to tell it to


_files = atfork.register(plog.PlogFiles(), plog.PlogFiles.renew_in_child)


def _write_plog(line: str) -> None:
    failure = _files.write(line)
    if failure is not None:
        plog.say_once(failure)


_writer = atfork.register(_LineWriter("openacl-log", _write_stdout, "stdout"), _LineWriter.renew_in_child)
_plog_writer = atfork.register(_LineWriter("openacl-plog", _write_plog, "the log file"), _LineWriter.renew_in_child)


class _StdoutHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stdout`` is at the time (pytest and ``openacl run`` replace it); runtime threads
    hand their lines to ``_writer``, so a stdout that stalls (a full pipe nobody reads) cannot stall the streams."""

    def __init__(self) -> None:
        super().__init__(sys.stdout)
        self.setFormatter(CannFormatter())

    def createLock(self) -> None:
        self.lock = atfork.rlock()

    def emit(self, record: logging.LogRecord) -> None:
        if _on_runtime_thread(record):
            try:
                _writer.put(self.format(record) + self.terminator)
            except Exception:
                self.handleError(record)
            return
        self.setStream(sys.stdout)
        super().emit(record)


class _PlogHandler(logging.Handler):
    """Appends CANN-format lines to the plog file; runtime threads hand theirs to ``_plog_writer``.

    Invariant: ``errors`` counts the records at ERROR or above that this process wrote (``handle`` holds the
    handler's lock around ``emit``)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(CannFormatter())
        self.errors = 0

    def createLock(self) -> None:
        self.lock = atfork.rlock()  # free in a forked child, whichever thread was logging at the fork

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
        except Exception:
            self.handleError(record)
            return
        if record.levelno >= logging.ERROR:
            self.errors += 1
        if _on_runtime_thread(record):
            _plog_writer.put(line)
        else:
            _write_plog(line)


def flush(timeout: float = 1.0) -> None:
    """Write runtime threads' pending lines (stdout, plog file) and stop the writers (process reset and exit)."""
    _writer.stop(timeout)
    _plog_writer.stop(timeout)


_lock = atfork.lock()
_stdout_handler: _StdoutHandler | None = None
_plog_handler = _PlogHandler()
root.addHandler(logging.NullHandler())  # a program without handlers: nothing on stderr (no last-resort printing)


def _renew_error_count() -> None:
    _plog_handler.errors = 0  # a forked child counts the errors of its own file


atfork.at_child(_renew_error_count)


def logged_errors() -> tuple[int, str | None]:
    """How many error records this process wrote to its plog file, and the file (None before the first line)."""
    return _plog_handler.errors, _files.path


def exit_notice() -> str | None:
    """What ``openacl run`` says on stderr when a failed program logged errors: how many, and in which file."""
    errors, path = logged_errors()
    if not errors or path is None:
        return None
    return f"{errors} error record(s) logged in {path}"


def level_from_env() -> int:
    """The ``logging`` level that ``ASCEND_GLOBAL_LOG_LEVEL`` asks for (error when unset or unreadable)."""
    raw = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL", "3").strip()
    try:
        return _CANN_LEVELS[int(raw)]
    except (ValueError, KeyError):
        return logging.ERROR


def module_level_from_env(module: str) -> int:
    """The level ``ASCEND_MODULE_LOG_LEVEL`` (``MOD=level:MOD=level``) gives ``module``; NOTSET if none."""
    for item in os.environ.get("ASCEND_MODULE_LOG_LEVEL", "").split(":"):
        name, _, raw = item.partition("=")
        if name.strip().upper() == module:
            try:
                return _CANN_LEVELS[int(raw)]
            except (ValueError, KeyError):
                return logging.NOTSET
    return logging.NOTSET


def configure() -> None:
    """(Re)read the environment; called on import and by ``acl.init``."""
    global _stdout_handler
    with _lock:
        root.setLevel(level_from_env())
        app.setLevel(module_level_from_env("APP"))
        to_stdout = os.environ.get("ASCEND_SLOG_PRINT_TO_STDOUT", "0").strip() == "1"
        _files.configure()
        if to_stdout:  # CANN prints instead of writing files
            root.removeHandler(_plog_handler)
        else:
            root.addHandler(_plog_handler)  # once: addHandler ignores a handler already there
        if to_stdout and _stdout_handler is None:
            _stdout_handler = _StdoutHandler()
            root.addHandler(_stdout_handler)
            root.propagate = False
        elif not to_stdout and _stdout_handler is not None:
            root.removeHandler(_stdout_handler)
            _stdout_handler = None
            root.propagate = True


def cap_record(text: str, limit: int = MAX_LOG_STRING) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, ending in ``...[truncated]`` when it had to be cut."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    keep = raw[: limit - len(TRUNCATED)].decode("utf-8", "ignore")  # never ends inside a character
    return keep + TRUNCATED


def app_log(level: int, message: str) -> None:
    """Write one application record, as ``aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, "%s", message)``.

    The record is ``<tid> <func>:<file>:<line>: "<message>"``, where func/file/line are those of the caller of
    this function (the facade, as in CANN, where they are the C wrapper's: programs put their own location in
    the message). ``%`` in the message is never interpreted. The whole record is capped at
    :data:`MAX_LOG_STRING` bytes. Levels outside 0..3 and levels below the APP module's are dropped silently.
    """
    py_level = APP_LEVELS.get(level)
    if py_level is None or not app.isEnabledFor(py_level):
        return
    caller = sys._getframe(1)
    code = caller.f_code
    header = f"{threading.get_native_id()} {code.co_name}:{os.path.basename(code.co_filename)}:{caller.f_lineno}: "
    app.log(py_level, "%s", cap_record(f'{header}"{message}"'), stacklevel=2)


def get_logger(name: str) -> logging.Logger:
    """A child of the ``openacl`` logger, e.g. ``get_logger("rt")`` -> ``openacl.rt``."""
    return root.getChild(name)


configure()
