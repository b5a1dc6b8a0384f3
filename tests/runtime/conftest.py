"""Fixtures the runtime's tests share."""

from __future__ import annotations

import pytest

from openacl.runtime import checker


@pytest.fixture
def checking():
    """``openacl check`` on for one test, from a clean slate, and everything it found forgotten after."""
    checker.reset()
    checker.take_findings()
    checker.enable()
    try:
        yield
    finally:
        checker.enable(False)
        checker.reset()
        checker.take_findings()
