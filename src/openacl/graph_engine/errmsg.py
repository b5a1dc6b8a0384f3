"""GE's error-message record (``ErrMgr``, read by ``GEGetErrorMsg``): what the GE engine logged as errors on the
calling thread since the record was last read.

Every GE failure is logged once at ERROR on the ``openacl.ge`` logger; this module keeps those lines per thread
(at most :data:`MAX_MESSAGES`, oldest dropped) so GE-PY's ``GeError`` can carry the reason as ``error_message``.
A log level that silences errors (``ASCEND_GLOBAL_LOG_LEVEL=4``) leaves the record empty, as it would be in GE.
"""

from __future__ import annotations

import logging
import threading

from openacl.log import get_logger

__all__ = ["MAX_MESSAGES", "clear", "take"]

MAX_MESSAGES = 32
_local = threading.local()


class _Recorder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        messages = getattr(_local, "messages", None)
        if messages is None:
            messages = _local.messages = []
        messages.append(record.getMessage())
        del messages[:-MAX_MESSAGES]


def take() -> str:
    """This thread's error lines, oldest first, joined by newlines; then forgotten."""
    messages = getattr(_local, "messages", None)
    _local.messages = []
    return "\n".join(messages or ())


def clear() -> None:
    _local.messages = []


get_logger("ge").addHandler(_Recorder(logging.ERROR))
