"""Fixtures of the DVPP tests: a stream on a current context, a created DVPP channel, the default (310) SoC."""

from __future__ import annotations

import pytest

import acl


@pytest.fixture(autouse=True)
def default_soc(monkeypatch):
    monkeypatch.delenv("OPENACL_SOC_NAME", raising=False)


@pytest.fixture
def channel(stream):
    desc = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(desc) == 0
    yield desc
    acl.media.dvpp_destroy_channel(desc)
    acl.media.dvpp_destroy_channel_desc(desc)
