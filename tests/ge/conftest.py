"""GE fixtures: every test starts and ends with GE finalised (which also stops session worker threads)."""

from __future__ import annotations

import logging

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
def ge_log(caplog):
    """openacl's GE log records."""
    caplog.set_level(logging.DEBUG, logger="openacl")
    return caplog


@pytest.fixture
def train():
    """GE initialised and a train-mode session."""
    assert ge.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    return ge.Session({"ge.graphRunMode": "1"})


@pytest.fixture
def predict():
    assert ge.ge_initialize() == 0
    return ge.Session({"ge.graphRunMode": "0"})
