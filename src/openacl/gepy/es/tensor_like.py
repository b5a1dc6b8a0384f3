"""``ge.es.tensor_like``: ``TensorLike`` (an int, a float, or a nested list of them) and its conversion."""

from __future__ import annotations

import math
from typing import Any, Union

from openacl.gepy.es.graph_builder import convert_to_tensor_holder, flatten_and_infer_shape, resolve_builder

__all__ = ["TensorLike", "convert_to_tensor_holder", "resolve_builder"]

TensorLike = Union[int, float, list]  # noqa: UP007 - GE-PY's alias, usable in annotations on any Python

#: GE-PY's private name for the flattening every TensorLike list goes through.
_flatten_and_infer_shape = flatten_and_infer_shape


def _unflatten(flat: list[Any], shape: list[int] | None) -> list[Any]:
    """The inverse of :func:`_flatten_and_infer_shape`: ``flat`` as nested lists of ``shape`` (not empty)."""
    if not shape:
        raise ValueError("Shape cannot be empty")
    size = math.prod(shape)
    if len(flat) != size:
        raise ValueError(f"Length of list {len(flat)} does not match shape {size}")
    if len(shape) == 1:
        return list(flat)
    step = size // shape[0] if shape[0] else 0
    return [_unflatten(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
