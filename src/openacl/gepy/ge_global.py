"""``ge.ge_global``: ``GeApi.ge_initialize`` / ``ge_finalize``, which return 0 (GE-PY's code; its docs say None)."""

from __future__ import annotations

from typing import Any

from openacl.gepy.error import raising
from openacl.graph_engine import state

__all__ = ["GeApi"]


class GeApi:
    """GE's process-wide initialisation; both methods are classmethods (the examples call them on an instance)."""

    @classmethod
    def ge_initialize(cls, config: dict[str, str]) -> int:
        """``GEInitialize``: TypeError unless ``config`` is a non-empty dict of str to str."""
        if not isinstance(config, dict):
            raise TypeError("Ge init config must be a dictionary")
        if not config:
            raise TypeError("Ge init config must not be empty")
        _check_strings(config)
        with raising("GEInitialize"):
            state.ge_initialize(config)
        return 0

    @classmethod
    def ge_finalize(cls) -> int:
        with raising("GEFinalize"):
            state.ge_finalize()
        return 0


def _check_strings(options: dict[Any, Any]) -> None:
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"options must map str to str, got {key!r}: {value!r}")
