"""CANN-style logging for openacl.

CANN reads its log level from ``ASCEND_GLOBAL_LOG_LEVEL`` (0 debug, 1 info, 2 warning, 3 error, 4 null;
default 3) and prints to stdout when ``ASCEND_SLOG_PRINT_TO_STDOUT=1``. openacl honours both: with stdout
printing on, records go to stdout in CANN's line format; otherwise they go through Python ``logging`` under the
``openacl`` logger, so applications route them like any other library's logs.

Application logs (``acl.app_log``) go to CANN's APP module, here the ``openacl.app`` logger. Its level follows
``ASCEND_GLOBAL_LOG_LEVEL`` unless ``ASCEND_MODULE_LOG_LEVEL`` names the module (``APP=0:GE=3``).
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time

from openacl import atfork

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

# acl.app_log levels (aclLogLevel): 0 debug, 1 info, 2 warning, 3 error. Other values are dropped silently.
APP_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}
MAX_LOG_STRING = 1024  # CANN's cap on one log record, header included, in bytes
TRUNCATED = "...[truncated]"


class CannFormatter(logging.Formatter):
    """``[ERROR] OPENACL(pid,python):2026-12-02-12:05:47.123.456 [stream.py:42]140234 message``."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = int(record.created)
        micros = int((record.created - seconds) * 1_000_000)
        stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(seconds))
        level = _CANN_NAMES.get(record.levelno, record.levelname)
        line = (
            f"[{level}] OPENACL({record.process},python):{stamp}.{micros // 1000:03d}.{micros % 1000:03d} "
            f"[{record.filename}:{record.lineno}]{record.thread} {record.getMessage()}"
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class _StdoutHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stdout`` is at the time (pytest and ``openacl run`` replace it).

    A runtime thread (one named ``openacl-*``: engine workers, the dump thread) never writes itself: it hands
    the line to ``_StdoutWriter``, so a stdout that stalls (a full pipe nobody reads) cannot stall the streams.
    A program's own threads write directly, in order, as their own ``print`` would.
    """

    def __init__(self) -> None:
        super().__init__(sys.stdout)
        self.setFormatter(CannFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName and record.threadName.startswith(RUNTIME_THREAD_PREFIX):
            try:
                _writer.put(self.format(record) + self.terminator)
            except Exception:
                self.handleError(record)
            return
        self.setStream(sys.stdout)
        super().emit(record)


RUNTIME_THREAD_PREFIX = "openacl-"


class _StdoutWriter:
    """The thread that writes runtime threads' log lines to stdout; at most ``LIMIT`` lines wait, and lines
    beyond that are counted and dropped (one line says how many) rather than held without bound."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue(self.LIMIT)
        self._thread: threading.Thread | None = None
        self._dropped = 0
        self._guard = atfork.lock()

    def put(self, line: str) -> None:
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="openacl-log", daemon=True)
                self._thread.start()
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
            try:
                if dropped:
                    sys.stdout.write(f"[WARNING] OPENACL: {dropped} log line(s) dropped: stdout did not keep up\n")
                sys.stdout.write(line)
                sys.stdout.flush()
            except (OSError, ValueError):
                pass  # stdout closed or broken: nothing else to tell it to

    def stop(self, timeout: float = 1.0) -> None:
        """Write what waits (for at most ``timeout`` seconds: stdout may be stalled), then end the thread."""
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


_writer = atfork.register(_StdoutWriter(), _StdoutWriter.renew_in_child)


def flush_stdout(timeout: float = 1.0) -> None:
    """Write runtime threads' pending stdout lines and stop the writer (process reset and exit)."""
    _writer.stop(timeout)


_lock = atfork.lock()
_stdout_handler: _StdoutHandler | None = None


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
