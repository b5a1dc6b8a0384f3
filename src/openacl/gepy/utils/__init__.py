"""``ge.utils``: GE-PY's graph utilities (``GeUtils``)."""

from __future__ import annotations

from openacl.gepy.utils.ge_utils import GeUtils

__all__ = ["GeUtils"]
