"""A report thread that sleeps in ``process_report(-1)`` between callbacks, shared by the fault and load tests."""

from __future__ import annotations

import threading

import acl

SUCCESS = 0


class BlockedReporter:
    """Waits for ``go``, then serves callbacks from ``process_report(-1)`` until it is unsubscribed (the call
    then answers 107012 and the loop ends), as a program that never polls would."""

    def __init__(self, context: int | None = None, go: threading.Event | None = None) -> None:
        self.go = go if go is not None else threading.Event()
        self.codes: list[int] = []

        def loop(_):
            if context is not None:
                acl.rt.set_context(context)
            self.go.wait(60)
            while True:
                code = acl.rt.process_report(-1)
                self.codes.append(code)
                if code != SUCCESS:
                    return

        self.tid, ret = acl.util.start_thread(loop, [])
        assert ret == SUCCESS

    def stop(self) -> None:
        assert acl.util.stop_thread(self.tid) == SUCCESS
