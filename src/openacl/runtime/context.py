"""The calling thread's current context (per thread, as in CANN: a new thread has none)."""

from __future__ import annotations

import threading

# Read directly (not through ``current``) by the callback hot path, ``device.resolve_in_context``.
local = threading.local()


def current():
    """The thread's current context, or None if it has none or it was destroyed."""
    ctx = getattr(local, "context", None)
    if ctx is not None and ctx.destroyed:
        local.context = None
        return None
    return ctx


def set_current(ctx) -> None:
    local.context = ctx
