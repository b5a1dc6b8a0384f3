"""GE's error-message record (``ErrMgr``, read by ``GEGetErrorMsg``): the error lines the GE engine reported on the
calling thread since the record was last read.

The engine reports explicitly, where it decides an error: every ``GeError`` leaving a public engine method
(:func:`openacl.graph_engine._api.names_api`) and each line it logs with :func:`log_error`. The record does not
depend on how logging is configured. At most :data:`MAX_MESSAGES` lines are kept per thread, oldest dropped.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["MAX_MESSAGES", "clear", "log_error", "report", "take"]

MAX_MESSAGES = 32
_local = threading.local()


def report(text: str) -> None:
    """Add one error line to this thread's record."""
    messages = getattr(_local, "messages", None)
    if messages is None:
        messages = _local.messages = []
    messages.append(text)
    del messages[:-MAX_MESSAGES]


def log_error(log: logging.Logger, msg: str, *args: object, exc_info: bool = False) -> None:
    """Log ``msg % args`` at ERROR and report it: an error GE both logs and records."""
    report(msg % args if args else msg)
    log.error(msg, *args, exc_info=exc_info)  # the record as a plain log.error makes it (filters read msg)


def take() -> str:
    """This thread's error lines, oldest first, joined by newlines; then forgotten."""
    messages = getattr(_local, "messages", None)
    _local.messages = []
    return "\n".join(messages or ())


def clear() -> None:
    _local.messages = []
