"""GE-PY fixtures (tests/conftest.py's ``ge_clean`` finalises GE around every test)."""

from __future__ import annotations

import pytest


@pytest.fixture
def initialized():
    from ge.ge_global import GeApi

    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    yield GeApi
