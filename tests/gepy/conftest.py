"""GE-PY fixtures: every test starts and ends with GE finalised."""

from __future__ import annotations

import pytest

from openacl import ge


@pytest.fixture(autouse=True)
def ge_clean():
    if ge.is_initialized():
        ge.ge_finalize()
    yield
    if ge.is_initialized():
        ge.ge_finalize()


@pytest.fixture
def initialized():
    from ge.ge_global import GeApi

    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    yield GeApi
