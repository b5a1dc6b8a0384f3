"""The wait graph: waits for a running callback to return (unsubscribe, destroy) are followed too."""

from __future__ import annotations

import threading

import pytest

import acl

SUCCESS = 0
BLOCK = 1
API_NOT_SUPPORT = 200001


def _meet(first: threading.Event, second: threading.Event) -> None:
    first.set()
    assert second.wait(10)


@pytest.mark.parametrize("teardown", ["unsubscribe_report", "destroy_stream"])
def test_regression_circle_through_a_wait_for_a_running_callback_gets_200001(two_report_threads, teardown):
    """C1 (R1, S1) unsubscribes R2 from S2 (or destroys S2) while C2 (R2, S2) synchronizes S1: each waits for
    the other. The wait graph did not see waits for a running callback, so this hung; now the wait that
    closes the circle gets 200001 at once and the other completes."""
    (_r1, r2), (s1, s2) = two_report_threads
    in_c1, in_c2 = threading.Event(), threading.Event()
    codes: dict[str, int] = {}

    def c1(_):
        _meet(in_c1, in_c2)
        if teardown == "unsubscribe_report":
            codes["c1"] = acl.rt.unsubscribe_report(r2.tid, s2)
        else:
            codes["c1"] = acl.rt.destroy_stream(s2)

    def c2(_):
        _meet(in_c2, in_c1)
        codes["c2"] = acl.rt.synchronize_stream(s1)

    assert acl.rt.launch_callback(c1, None, BLOCK, s1) == SUCCESS
    assert acl.rt.launch_callback(c2, None, BLOCK, s2) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s1, 10_000) == SUCCESS
    if codes.get("c1") == API_NOT_SUPPORT or teardown == "unsubscribe_report":
        assert acl.rt.synchronize_stream_with_timeout(s2, 10_000) in (SUCCESS, 100000)  # S2 may be destroyed
    deadline = threading.Event()
    for _ in range(100):
        if len(codes) == 2:
            break
        deadline.wait(0.05)
    assert sorted(codes.values()) == [SUCCESS, API_NOT_SUPPORT], codes
    if teardown == "unsubscribe_report" and codes["c1"] == API_NOT_SUPPORT:
        assert acl.rt.unsubscribe_report(r2.tid, s2) == SUCCESS  # refused before anything changed
        assert acl.rt.subscribe_report(r2.tid, s2) == SUCCESS  # for the fixture's teardown


def test_unsubscribe_from_a_callback_waits_for_another_threads_callback_that_ends(two_report_threads):
    """No false alarm: C1 unsubscribes S2 while C2 (on R2) runs but waits for nothing of ours."""
    (_r1, r2), (s1, s2) = two_report_threads
    in_c2, release = threading.Event(), threading.Event()
    codes: list[int] = []

    def c2(_):
        in_c2.set()
        release.wait(10)

    def c1(_):
        threading.Timer(0.05, release.set).start()
        codes.append(acl.rt.unsubscribe_report(r2.tid, s2))

    assert acl.rt.launch_callback(c2, None, BLOCK, s2) == SUCCESS
    assert in_c2.wait(10)
    assert acl.rt.launch_callback(c1, None, BLOCK, s1) == SUCCESS
    assert acl.rt.synchronize_stream_with_timeout(s1, 10_000) == SUCCESS
    assert codes == [SUCCESS]
    assert release.is_set()
    assert acl.rt.subscribe_report(r2.tid, s2) == SUCCESS  # for the fixture's teardown
