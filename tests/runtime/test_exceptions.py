"""runtime/exceptions.py directly: which codes count as last errors, clearing, and reset for every thread."""

from __future__ import annotations

import threading

import pytest

from openacl.errors import AclCode, AclError
from openacl.runtime import exceptions


@pytest.mark.parametrize(
    ("code", "runtime"),
    [(107000, True), (107045, True), (207001, True), (507046, True), (100000, False), (200000, False), (0, False)],
)
def test_only_runtime_code_families_are_last_errors(code, runtime):
    assert exceptions.is_runtime_code(code) is runtime


def test_record_get_peek_and_messages():
    exceptions.record_failure("acl.rt.x", AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL, "why"))
    exceptions.record_failure("acl.rt.y", AclError(AclCode.ACL_ERROR_INVALID_PARAM))
    assert exceptions.peek_last_error(0) == 107002
    assert exceptions.get_last_error(0) == 107002
    assert exceptions.get_last_error(0) == 0
    text = exceptions.take_recent_messages()
    assert text.splitlines()[0].startswith("acl.rt.y: ACL_ERROR_INVALID_PARAM(100000)")
    assert text.splitlines()[1].endswith(": why")
    assert exceptions.take_recent_messages() is None


def test_bad_level_raises_invalid_param():
    with pytest.raises(AclError) as info:
        exceptions.get_last_error(1)
    assert info.value.code == AclCode.ACL_ERROR_INVALID_PARAM


def test_reset_forgets_other_threads_records_too():
    ready, done = threading.Event(), threading.Event()
    seen = []

    def worker():
        exceptions.record_failure("acl.rt.x", AclError(AclCode.ACL_ERROR_RT_CONTEXT_NULL))
        ready.set()
        done.wait(5)
        seen.append(exceptions.peek_last_error(0))

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(5)
    exceptions.reset()
    done.set()
    thread.join()
    assert seen == [0]
