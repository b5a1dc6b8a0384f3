"""Fixtures that parse "dump" sections (``openacl.dump.config``), shared by the config and selection tests."""

from __future__ import annotations

import pytest

from openacl.dump.config import parse_dump_section
from openacl.errors import AclCode, AclError
from tests.dump.sections import fill


@pytest.fixture
def parse(tmp_path):
    """Parse a section; ``DIR`` anywhere in it becomes a temporary directory."""
    return lambda section: parse_dump_section(fill(section, str(tmp_path)))


@pytest.fixture
def refuse(tmp_path):
    """Parse a section that must be refused; returns the error detail."""

    def run(section) -> str:
        with pytest.raises(AclError) as info:
            parse_dump_section(fill(section, str(tmp_path)))
        assert info.value.code == AclCode.ACL_ERROR_INVALID_DUMP_CONFIG
        return info.value.detail

    return run
