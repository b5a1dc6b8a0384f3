"""A logging handler is user code: one that calls the runtime back, on the thread that logged, never deadlocks.

Each test attaches a handler to the ``openacl`` logger that, on the warning it waits for, calls a function taking the
same lock as the code that logged. It runs the logging call on a helper thread and waits a bounded time, so a
deadlock fails the test instead of hanging the suite."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import acl
from openacl import ge
from openacl.log import root

WAIT_S = 10


class CallsBack(logging.Handler):
    """On a record containing ``text``, calls ``back()`` (once), as a program's handler may."""

    def __init__(self, text: str, back: Callable[[], object]) -> None:
        super().__init__()
        self.text, self.back, self.called = text, back, False

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage() and not self.called:
            self.called = True
            self.back()


def finishes(handler: CallsBack, call: Callable[[], object]) -> bool:
    """Run ``call`` on a helper thread with ``handler`` attached; whether it finished (no deadlock)."""
    level = root.level
    root.setLevel(logging.WARNING)  # CANN's default level (error) would drop the warnings these paths log
    root.addHandler(handler)
    try:
        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        thread.join(WAIT_S)
        return not thread.is_alive()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_regression_reset_device_logged_an_unset_device_under_the_device_lock(clean_runtime):
    handler = CallsBack("the device is not set", lambda: acl.rt.reset_device(3))
    assert finishes(handler, lambda: acl.rt.reset_device(3))
    assert handler.called


def test_regression_ge_initialize_and_finalize_logged_under_the_ge_lock(ge_clean):
    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    handler = CallsBack("called more than once", lambda: ge.ge_initialize({"ge.exec.deviceId": "0"}))
    assert finishes(handler, lambda: ge.ge_initialize({"ge.exec.deviceId": "1"}))
    assert handler.called
    assert ge.ge_finalize() == 0
    handler = CallsBack("before GEInitialize", ge.ge_finalize)
    assert finishes(handler, ge.ge_finalize)
    assert handler.called


def test_regression_add_graph_logged_a_repeated_graph_id_under_the_session_lock(ge_clean):
    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    session = ge.Session()
    graph = ge.Graph("one")
    x = graph.data("x", index=0, shape=[2], dtype="float32")
    graph.set_outputs([x])
    assert session.add_graph(1, graph) == 0
    other = ge.Graph("two")
    y = other.data("y", index=0, shape=[2], dtype="float32")
    other.set_outputs([y])
    handler = CallsBack("already exists", lambda: session.remove_graph(5))
    assert finishes(handler, lambda: session.add_graph(1, other))
    assert handler.called
