"""Helpers for tests that write "dump" sections: ``DIR`` in a section stands for a writable directory."""

from __future__ import annotations

import logging

DIR = "<dir>"  # stands for an existing, writable directory in the parametrized sections of the tests


def fill(value, directory: str):
    """``value`` with every ``DIR`` replaced by ``directory``."""
    if value == DIR:
        return directory
    if isinstance(value, dict):
        return {k: fill(v, directory) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, directory) for v in value]
    return value


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "openacl.dump"]


def model_list(**entry):
    return [{"model_name": "m", **entry}]
