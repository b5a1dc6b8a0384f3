"""The calling thread's current context (per thread, as in CANN: a new thread has none)."""

from __future__ import annotations

import threading


class _Local(threading.local):
    context = None  # what a thread that never set one reads: plain attribute reads, no getattr default


# Read directly (not through ``current``) by the callback hot paths (``device.launch_entry``,
# ``device.resolve_in_context``).
local = _Local()


def current():
    """The thread's current context, or None if it has none or it was destroyed."""
    ctx = local.context
    if ctx is not None and ctx.destroyed:
        local.context = None
        return None
    return ctx


def set_current(ctx) -> None:
    local.context = ctx
