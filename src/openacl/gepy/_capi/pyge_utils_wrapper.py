"""``ge._capi.pyge_utils_wrapper``: the questions programs ask of GE-PY's ``GeUtils`` C library."""

from __future__ import annotations

__all__ = ["get_ge_utils_lib", "is_ge_utils_lib_loaded"]


def is_ge_utils_lib_loaded() -> bool:
    """False: ``ge.utils`` works without a C library in openacl."""
    return False


def get_ge_utils_lib() -> None:
    """None: there is no C library to hand out."""
    return None
