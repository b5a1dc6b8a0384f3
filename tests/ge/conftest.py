"""GE fixtures (tests/conftest.py's ``ge_clean`` finalises GE around every test)."""

from __future__ import annotations

import logging

import pytest

from openacl import ge


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
