"""``ge.es.tensor_like``: ``TensorLike`` (an int, a float, or a nested list of them) and its conversion."""

from __future__ import annotations

from typing import Union

from openacl.gepy.es.graph_builder import convert_to_tensor_holder, resolve_builder

__all__ = ["TensorLike", "convert_to_tensor_holder", "resolve_builder"]

TensorLike = Union[int, float, list]  # noqa: UP007 - GE-PY's alias, usable in annotations on any Python
