"""The chip rules follow the SoC name acl.get_soc_name() answers."""

from __future__ import annotations

import pytest

import acl
from openacl.media import chip


def test_the_default_soc_and_rules_are_the_310s(monkeypatch):
    monkeypatch.delenv("OPENACL_SOC_NAME", raising=False)
    assert acl.get_soc_name() == "Ascend310"
    assert chip.current() is chip.CHIP_310
    assert chip.current().jpegd_width_align == 128


@pytest.mark.parametrize(
    ("soc", "rules"),
    [
        ("Ascend310P3", chip.CHIP_310P),
        ("Ascend310B4", chip.CHIP_310P),
        ("Ascend910B3", chip.CHIP_310P),
        ("Ascend910A", chip.CHIP_310),
        ("Ascend310", chip.CHIP_310),
        ("", chip.CHIP_310),
    ],
)
def test_rules_follow_openacl_soc_name(monkeypatch, soc, rules):
    monkeypatch.setenv("OPENACL_SOC_NAME", soc)
    assert chip.current() is rules
    assert chip.rules_for(acl.get_soc_name()) is rules
