"""The ES builder's scopes (``attr_scope``, ``control_dependency_scope``): per thread, nestable, as in GE-PY.

Every node the builder creates inside an ``attr_scope`` gets its attributes; inside a
``control_dependency_scope`` it gets control edges from the producers of the listed tensors.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from openacl.gepy.graph._attr import engine_value

__all__ = ["attr_scope", "control_dependency_scope", "current_attrs", "current_controls"]

_local = threading.local()


def _stack(name: str) -> list[Any]:
    stack = getattr(_local, name, None)
    if stack is None:
        stack = []
        setattr(_local, name, stack)
    return stack


@contextlib.contextmanager
def attr_scope(attrs: dict[str, Any]) -> Iterator[None]:
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise TypeError("attr_scope takes a dict of str to attribute values")
    typed = {key: engine_value(value) for key, value in attrs.items()}  # ValueError for a value GE cannot type
    stack = _stack("attrs")
    stack.append(typed)
    try:
        yield
    finally:
        stack.pop()


@contextlib.contextmanager
def control_dependency_scope(tensors: list[Any]) -> Iterator[None]:
    if not isinstance(tensors, list):
        raise TypeError("control_dependency_scope takes a list of TensorHolder")
    stack = _stack("controls")
    stack.append(list(tensors))
    try:
        yield
    finally:
        stack.pop()


def current_attrs() -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for attrs in _stack("attrs"):
        merged.update(attrs)
    return merged


def current_controls() -> list[Any]:
    return [t for tensors in _stack("controls") for t in tensors]
