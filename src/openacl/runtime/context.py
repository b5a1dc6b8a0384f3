"""The calling thread's current context (per thread, as in CANN: a new thread has none)."""

from __future__ import annotations

import threading

_local = threading.local()


def current():
    """The thread's current context, or None if it has none or it was destroyed."""
    ctx = getattr(_local, "context", None)
    if ctx is not None and ctx.destroyed:
        _local.context = None
        return None
    return ctx


def set_current(ctx) -> None:
    _local.context = ctx
