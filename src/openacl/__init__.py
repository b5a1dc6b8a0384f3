"""openacl: Ascend pyACL's callback system in Python, on any Linux machine."""

from __future__ import annotations

import sys

__version__ = "0.1.0"


def install() -> None:
    """Make ``import acl`` (and ``acl.rt``, ``acl.util``, ...) resolve to openacl's pyACL facade."""
    from openacl import acl

    sys.modules["acl"] = acl
    for name in acl.SUBMODULES:
        sys.modules[f"acl.{name}"] = getattr(acl, name)
